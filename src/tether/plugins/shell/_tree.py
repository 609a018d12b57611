"""The process tree as the OS shows it: one entry per process, this process's direct children,
and the tether tag in a process's environment.

Owns reading, not deciding (which process belongs to which command is `_descendants.py`). On
Linux everything is read from `/proc` (one `stat` read per process: parent, group, session,
start time in clock ticks, zombie or not); elsewhere psutil supplies the same facts for this
process's own tree. `start` identifies a process instance together with its pid: a recycled pid
has another start.

The tag: every command is spawned with `TETHER_PROCESS_TAG=<unique value>` in its environment,
which its descendants inherit (`setsid`, `nohup`, `disown` and double forks keep it), so a process
that left the command's process group can still be traced to the command.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:  # imported where it is used (not on Linux, which reads /proc): ~5 ms at boot
    import psutil

__all__ = [
    "TAG_VARIABLE",
    "ProcessEntry",
    "boot_ticks",
    "direct_children",
    "entry",
    "read_tag",
    "read_tree",
]

TAG_VARIABLE: Final = "TETHER_PROCESS_TAG"
"""The environment variable that carries a command's tag to all its descendants."""

_PROC: Final = "/proc"
_HAS_PROC: Final = os.path.isdir(f"{_PROC}/self/task")
_DEAD_STATES: Final = (b"Z", b"X", b"x")
_TAG_PREFIX: Final = TAG_VARIABLE.encode() + b"="
_NS_PER_TICK: Final = 1_000_000_000 // os.sysconf("SC_CLK_TCK") if _HAS_PROC else 1


@dataclass(frozen=True, slots=True)
class ProcessEntry:
    """One process as seen at one moment. `dead`: a zombie (exited, not yet reaped)."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    start: int
    dead: bool


def _read(path: str, size: int) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)


def _parse_stat(pid: int, data: bytes) -> ProcessEntry | None:
    # "<pid> (<comm>) <state> <ppid> <pgrp> <session> ... <starttime (field 22)> ..."; comm may
    # contain spaces and parentheses, so the fields start after the last ")".
    fields = data[data.rfind(b")") + 2 :].split(b" ", 20)
    try:
        return ProcessEntry(
            pid=pid,
            ppid=int(fields[1]),
            pgid=int(fields[2]),
            sid=int(fields[3]),
            start=int(fields[19]),
            dead=fields[0] in _DEAD_STATES,
        )
    except (IndexError, ValueError):
        return None


def _psutil_entry(process: psutil.Process) -> ProcessEntry | None:
    import psutil

    try:
        with process.oneshot():
            return ProcessEntry(
                pid=process.pid,
                ppid=process.ppid(),
                pgid=os.getpgid(process.pid),
                sid=os.getsid(process.pid),
                start=round(process.create_time() * 1_000_000),
                dead=process.status() == psutil.STATUS_ZOMBIE,
            )
    except (psutil.Error, OSError):
        return None


def entry(pid: int) -> ProcessEntry | None:
    """The process `pid` now, or None when there is none."""
    if _HAS_PROC:
        data = _read(f"{_PROC}/{pid}/stat", 1024)
        return None if data is None else _parse_stat(pid, data)
    import psutil

    try:
        return _psutil_entry(psutil.Process(pid))
    except psutil.Error:
        return None


def read_tree() -> dict[int, ProcessEntry]:
    """Every process on Linux (one pass over `/proc`); elsewhere this process's descendants."""
    table: dict[int, ProcessEntry] = {}
    if not _HAS_PROC:
        import psutil

        try:
            children = psutil.Process().children(recursive=True)
        except psutil.Error:
            return table
        for child in children:
            found = _psutil_entry(child)
            if found is not None:
                table[found.pid] = found
        return table
    try:
        names = os.listdir(_PROC)
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        data = _read(f"{_PROC}/{name}/stat", 1024)
        if data is not None:
            found = _parse_stat(int(name), data)
            if found is not None:
                table[found.pid] = found
    return table


def direct_children() -> set[int] | None:
    """The children of this process's main thread (`/proc/self/task/<pid>/children`), which is
    where the kernel re-parents the orphans a subreaper adopts; None where that file is not
    available (not Linux, or a kernel without `CONFIG_PROC_CHILDREN`)."""
    if not _HAS_PROC:
        return None
    pid = os.getpid()
    data = _read(f"{_PROC}/{pid}/task/{pid}/children", 65536)
    if data is None:
        return None
    try:
        return {int(child) for child in data.split()}
    except ValueError:
        return None


def boot_ticks() -> int | None:
    """Now, in the unit of `ProcessEntry.start` on Linux (clock ticks since boot); None
    elsewhere. A process started after this call has a start at least this."""
    if not _HAS_PROC:
        return None
    return time.clock_gettime_ns(time.CLOCK_BOOTTIME) // _NS_PER_TICK


def read_tag(pid: int) -> str | None:
    """The value of `TETHER_PROCESS_TAG` in the environment `pid` started with; None when it has
    none or it cannot be read (a zombie's environment is empty)."""
    if _HAS_PROC:
        data = _read_all(f"{_PROC}/{pid}/environ")
        if not data:
            return None
        for item in data.split(b"\0"):
            if item.startswith(_TAG_PREFIX):
                return item[len(_TAG_PREFIX) :].decode("ascii", "replace")
        return None
    import psutil

    with contextlib.suppress(psutil.Error, OSError):
        return psutil.Process(pid).environ().get(TAG_VARIABLE)
    return None


def _read_all(path: str) -> bytes | None:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError:
        return None
