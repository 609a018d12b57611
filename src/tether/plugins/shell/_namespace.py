"""A contained command from the outside: its PID namespace's init, stopping it, its exit status.

Owns what `_process.py` needs to stop a command that runs in its own PID namespace under `bwrap`
(`tether.plugins.sandbox`). tether's child is `bwrap`; bwrap's child is the namespace's init (pid
1 inside, its session and process-group leader: `--new-session`), whose child is the command.
When the command's leader exits, init exits and the kernel kills (and waits for) every other
process of the namespace before init's exit completes; bwrap then exits with the command's status.
When bwrap dies, init gets SIGKILL (`--die-with-parent`), with the same effect. So the processes of
a contained command are never looked for: they end with it, by construction.

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

The status: bwrap reports a command killed by signal N as exit code 128 + N, like a shell. When
tether stopped the command, such a code is read back as the signal (`SIGTERM`, `SIGKILL`); a
command that exits 143 on its own, or kills itself, reports the code.

PID reuse: bwrap is tether's unreaped child, so its pid is reserved until tether reaps it; its
descendants are read from `/proc/<pid>/task/<pid>/children` and signalled at once, while bwrap is
stopped or while they are its init's group (residual window: init exits and is reaped, and its
pid is reused for a new group leader, between the read and the signal).
"""

from __future__ import annotations

import contextlib
import os
import signal as signals
import time
from typing import Final

__all__ = ["kill_namespace", "namespace_inits", "status_of", "terminate_namespace"]

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


def terminate_namespace(bwrap_pid: int) -> None:
    """SIGTERM to the command's process group once the command runs; until then, the whole
    half-made namespace ends (see the module note) with bwrap killed by SIGTERM."""
    running = [init for init in namespace_inits(bwrap_pid) if _children(init)]
    for init in running:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(init, signals.SIGTERM)
    if not running:
        _end(bwrap_pid, signals.SIGTERM)


def kill_namespace(bwrap_pid: int) -> None:
    """SIGKILL every process of the namespace (its init first: the kernel kills the rest) and
    bwrap."""
    _end(bwrap_pid, signals.SIGKILL)


def _end(bwrap_pid: int, sig: signals.Signals) -> None:
    """Stop bwrap, SIGKILL its descendants, then end bwrap itself with `sig`."""
    try:
        os.kill(bwrap_pid, signals.SIGSTOP)
    except (ProcessLookupError, PermissionError):
        return
    _wait_stopped(bwrap_pid)
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
