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
                 SIGKILL when the leader exits. Before the command runs (bwrap is setting up,
                 or init has not forked it yet), bwrap itself gets it
    SIGKILL      init and bwrap: the whole namespace at once

The status: bwrap reports a command killed by signal N as exit code 128 + N, like a shell. When
tether stopped the command, such a code is read back as the signal (`SIGTERM`, `SIGKILL`); a
command that exits 143 on its own, or kills itself, reports the code.

PID reuse: bwrap is tether's unreaped child, so its pid is reserved until tether reaps it; init is
bwrap's, read from `/proc/<bwrap>/task/<bwrap>/children` just before it is signalled (residual
window: init exits, bwrap reaps it and the pid is reused for a new group leader within those
microseconds).
"""

from __future__ import annotations

import contextlib
import os
import signal as signals
from typing import Final

__all__ = ["kill_namespace", "namespace_inits", "status_of", "terminate_namespace"]

_SIGNAL_BASE: Final = 128
_SIGNAL_MAX: Final = 64


def namespace_inits(bwrap_pid: int) -> list[int]:
    """bwrap's children (the namespace's init once bwrap has set it up; none before)."""
    return _children(bwrap_pid)


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


def terminate_namespace(bwrap_pid: int) -> None:
    """SIGTERM to the command's process group once the command runs; until then (bwrap is still
    setting the namespace up, or init has not started the command) to bwrap itself, whose death
    takes the half-made namespace with it — so a SIGTERM is never lost on a command that had
    not started yet."""
    inits = [init for init in namespace_inits(bwrap_pid) if _children(init)]
    for init in inits:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(init, signals.SIGTERM)
    if not inits:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(bwrap_pid, signals.SIGTERM)


def kill_namespace(bwrap_pid: int) -> None:
    """SIGKILL the namespace's init (the kernel then kills every process inside) and bwrap."""
    for init in namespace_inits(bwrap_pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(init, signals.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(bwrap_pid, signals.SIGKILL)


def status_of(returncode: int | None, *, stopped: bool) -> int | None:
    """bwrap's return code as the command's (`Popen.returncode` form: negative for a signal);
    `stopped`: tether signalled the command, so 128 + N means signal N."""
    if stopped and returncode is not None and 0 < returncode - _SIGNAL_BASE <= _SIGNAL_MAX:
        return -(returncode - _SIGNAL_BASE)
    return returncode
