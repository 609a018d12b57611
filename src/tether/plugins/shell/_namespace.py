"""A contained command from the outside: its PID namespace's init, stopping it, its exit status.

Owns what `_process.py` needs to stop a command that runs in its own PID namespace under `bwrap`
(`tether.plugins.sandbox`). tether's child is `bwrap`; bwrap's child is the namespace's init (pid
1 inside, its session and process-group leader: `--new-session`), whose child is the command.
When the command's leader exits, init reports its status to bwrap, which exits with it at once;
bwrap's death SIGKILLs init (`--die-with-parent`), and the kernel kills (and waits for) every other
process of the namespace before init's exit completes. So the processes of a contained command are
never looked for: they end with it, by construction — and the command has settled once init has
exited (`_process.py` waits on a pidfd of init, whose host pid bwrap writes to `--info-fd`).

    SIGTERM      `killpg(init)`: the command's process group (init, as pid 1 of its namespace,
                 ignores a signal it has no handler for); processes that left the group get
                 SIGKILL when the leader exits
    SIGKILL      init and bwrap: the whole namespace at once

Before the command runs, bwrap is still setting the namespace up, and its child waits (on an
eventfd) for bwrap to write its user namespace's maps; that child has no parent-death signal yet,
so if bwrap alone died then, it would wait forever. So bwrap is never signalled alone while it has
children: it is stopped first (SIGSTOP: it forks nothing more), its descendants are SIGKILLed, and
only then does bwrap get its signal (SIGTERM then SIGCONT, so it dies of it at once, or SIGKILL).
A command stopped before it started therefore reads as killed by SIGTERM, like one that got it.

A namespace's init that bwrap did not reap (bwrap was killed while init ran) is re-parented to
the host's init and finishes its exit on its own: the kernel kills the namespace's processes and
waits for them before init's exit completes. So after killing bwrap, its exit alone does not say
the namespace is gone; `kill_namespace` and `terminate_namespace` return a pidfd for each init
they killed (opened while bwrap was stopped, so the pid is still init's), which becomes readable
once init has exited — once nothing of the namespace runs. The caller waits for them
(`wait_inits_gone`) and closes them.

The status: bwrap reports a command killed by signal N as exit code 128 + N, like a shell. When
tether stopped the command, such a code is read back as the signal (`SIGTERM`, `SIGKILL`); a
command that exits 143 on its own, or kills itself, reports the code.

PID reuse: bwrap is tether's unreaped child, so its pid is reserved until tether reaps it; its
descendants are read from `/proc/<pid>/task/<pid>/children` and signalled at once, while bwrap is
stopped or while they are its init's group (residual window: init exits and is reaped, and its
pid is reused for a new group leader, between the read and the signal).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal as signals
import time
from typing import Final

__all__ = [
    "kill_namespace",
    "namespace_inits",
    "pidfd_of",
    "status_of",
    "terminate_namespace",
    "wait_inits_gone",
]

_SIGNAL_BASE: Final = 128
_SIGNAL_MAX: Final = 64
_STOP_WAIT_S: Final = 1.0
"""How long to wait for a SIGSTOPped bwrap to be stopped (it takes microseconds)."""


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as file:
            data = file.read()
    except OSError:
        return []
    try:
        return [int(child) for child in data.split()]
    except ValueError:
        return []


def namespace_inits(bwrap_pid: int) -> list[int]:
    """bwrap's children (the namespace's init once bwrap has forked it; none before)."""
    return _children(bwrap_pid)


def terminate_namespace(bwrap_pid: int) -> list[int]:
    """SIGTERM to the command's process group once the command runs; until then, the whole
    half-made namespace ends (see the module note) with bwrap killed by SIGTERM. Returns pidfds
    of the inits it killed (see the module note)."""
    running = [init for init in namespace_inits(bwrap_pid) if _children(init)]
    for init in running:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(init, signals.SIGTERM)
    if not running:
        return _end(bwrap_pid, signals.SIGTERM)
    return []


def kill_namespace(bwrap_pid: int) -> list[int]:
    """SIGKILL every process of the namespace (its init first: the kernel kills the rest) and
    bwrap. Returns pidfds of the inits it killed (see the module note)."""
    return _end(bwrap_pid, signals.SIGKILL)


async def wait_inits_gone(pidfds: list[int], timeout_s: float) -> None:
    """Wait until every init behind `pidfds` has exited (each pidfd readable), at most
    `timeout_s`; close them all."""
    loop = asyncio.get_running_loop()
    waits: list[asyncio.Future[None]] = []
    try:
        for fd in pidfds:
            gone: asyncio.Future[None] = loop.create_future()
            loop.add_reader(fd, _resolve, gone)
            waits.append(gone)
        if waits:
            await asyncio.wait(waits, timeout=timeout_s)
    finally:
        for fd in pidfds:
            loop.remove_reader(fd)
            os.close(fd)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def pidfd_of(pid: int) -> int | None:
    """A pidfd for `pid` (None where the kernel or Python has none, or it is gone)."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        fd: int = opener(pid)
    except OSError:
        return None
    return fd


def _end(bwrap_pid: int, sig: signals.Signals) -> list[int]:
    """Stop bwrap, SIGKILL its descendants, then end bwrap itself with `sig`; pidfds of its
    inits, opened while it was stopped."""
    try:
        os.kill(bwrap_pid, signals.SIGSTOP)
    except (ProcessLookupError, PermissionError):
        return []
    _wait_stopped(bwrap_pid)
    inits = [fd for fd in map(pidfd_of, _children(bwrap_pid)) if fd is not None]
    stack = list(_children(bwrap_pid))
    while stack:
        pid = stack.pop()
        stack.extend(_children(pid))
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signals.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(bwrap_pid, sig)
        if sig != signals.SIGKILL:
            os.kill(bwrap_pid, signals.SIGCONT)
    return inits


def _wait_stopped(pid: int) -> None:
    deadline = time.monotonic() + _STOP_WAIT_S
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", "rb") as file:
                state = file.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            return
        if state in (b"T", b"t", b"Z", b"X"):
            return
        time.sleep(0.0005)


def status_of(returncode: int | None, *, stopped: bool) -> int | None:
    """bwrap's return code as the command's (`Popen.returncode` form: negative for a signal);
    `stopped`: tether signalled the command, so 128 + N means signal N."""
    if stopped and returncode is not None and 0 < returncode - _SIGNAL_BASE <= _SIGNAL_MAX:
        return -(returncode - _SIGNAL_BASE)
    return returncode
