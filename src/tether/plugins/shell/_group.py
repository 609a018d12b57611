"""Process groups and single processes as the OS shows them: liveness and signalling.

Owns: whether a process group still has a live member (on Linux a group holding only zombies
counts as exited: `/proc/<pid>/stat` is read for members when `killpg(pgid, 0)` still succeeds),
signalling a group with `ESRCH` read as "gone", whether one process instance still runs, and
signalling one process instance exactly (`signal_exact`: a pidfd pins the process while its
start time is checked, so a recycled pid is never hit). Does not own when to signal
(`_process.py`).
"""

from __future__ import annotations

import os
import signal as signals
from typing import Final

from ._tree import ProcessEntry, entry

__all__ = [
    "group_alive",
    "running",
    "signal_exact",
    "signal_group",
]

_PROC: Final = "/proc"
_HAS_PROC: Final = os.path.isdir(f"{_PROC}/self")
_DEAD_STATES: Final = (b"Z", b"X", b"x")


def group_alive(pgid: int) -> bool:
    """True while group `pgid` has a member that is not a zombie."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member we may not signal still exists
        pass
    if not _HAS_PROC:
        return True
    return _live_member(pgid)


def _live_member(pgid: int) -> bool:
    wanted = str(pgid).encode()
    try:
        names = os.listdir(_PROC)
    except OSError:
        return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"{_PROC}/{name}/stat", os.O_RDONLY)
            try:
                data = os.read(fd, 512)
            finally:
                os.close(fd)
        except OSError:
            continue
        # "<pid> (<comm>) <state> <ppid> <pgrp> ..."; comm may contain spaces and parentheses.
        fields = data[data.rfind(b")") + 2 :].split(b" ", 3)
        if len(fields) > 2 and fields[2] == wanted and fields[0] not in _DEAD_STATES:
            return True
    return False


def signal_group(pgid: int, sig: signals.Signals) -> bool:
    """Send `sig` to the group; False when the group no longer exists (`ESRCH`)."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_exact(process: ProcessEntry, sig: signals.Signals) -> bool:
    """Send `sig` to `process` if that very instance (pid and start) still runs; False when it is
    gone or a zombie. With a pidfd (Linux) there is no window in which the pid could be recycled
    between the check and the signal."""
    try:
        pidfd = os.pidfd_open(process.pid)
    except ProcessLookupError:
        return False
    except (AttributeError, OSError):
        pidfd = -1
    try:
        now = entry(process.pid)
        if now is None or now.dead or now.start != process.start:
            return False
        if pidfd >= 0:
            signals.pidfd_send_signal(pidfd, sig)
        else:
            os.kill(process.pid, sig)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    finally:
        if pidfd >= 0:
            os.close(pidfd)


def running(process: ProcessEntry) -> bool:
    """That very instance still runs and is not a zombie."""
    now = entry(process.pid)
    return now is not None and not now.dead and now.start == process.start
