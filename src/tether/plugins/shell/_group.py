"""Process groups and descendants as the OS shows them: liveness, signalling, escaped processes.

Owns: whether a process group still has a live member (on Linux a group holding only zombies
counts as exited: `/proc/<pid>/stat` is read for members when `killpg(pgid, 0)` still succeeds),
signalling a group with `ESRCH` read as "gone", and the descendants of a live process that left
its group (`setsid`, `setpgid`), found with psutil and signalled through psutil so a recycled pid
is never hit. Does not own when to signal (`_process.py`).
"""

from __future__ import annotations

import contextlib
import os
import signal as signals
from collections.abc import Iterable
from typing import Final

import psutil

__all__ = [
    "escaped_descendants",
    "group_alive",
    "signal_group",
    "signal_processes",
    "still_running",
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


def escaped_descendants(pid: int, pgid: int) -> list[psutil.Process]:
    """Descendants of live process `pid` that are no longer in group `pgid` (empty on error)."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []
    escaped = []
    for child in children:
        try:
            if os.getpgid(child.pid) != pgid:
                escaped.append(child)
        except OSError:
            continue
    return escaped


def still_running(processes: Iterable[psutil.Process]) -> list[psutil.Process]:
    """The processes that are still running the same program instance and are not zombies."""
    alive = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
        except psutil.Error:
            continue
    return alive


def signal_processes(processes: Iterable[psutil.Process], sig: signals.Signals) -> None:
    """Signal each process; psutil refuses a pid that now belongs to another process."""
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.send_signal(sig)
