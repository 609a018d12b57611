"""The orphan ledger: a durable list of the process groups this process started and of the processes
that escaped them, so that a later tether can stop what a SIGKILLed (or crashed) tether left behind.

Owns: one file per owning process in a ledger directory (`<pid>-<start ticks>.groups`), with one
`tag <tag>` line per command, written *before* it is spawned (the `TETHER_PROCESS_TAG` its processes
carry, `_tree.py`), one `<pgid> <start ticks>` line per live group (written as soon as the spawn
call returns) and one `<pid> <start ticks> escaped` line per process that left its command's group
(`setsid` ...), as the subprocess service finds them (it looks every half second); and
`reap_orphans()`, which finds ledgers whose owner is gone and stops their groups, their escaped
processes and every process that carries one of their tags (SIGTERM, a short grace, SIGKILL; an
escaped process that leads its own group gets the signal for the group), removing a ledger only once
its processes were signalled, so a tether killed while it sweeps leaves the ledger to the next one.
The tags close the windows the other lines leave: a process that escaped within the half second
before the owner was killed (not looked at yet), or a command whose group line was never written
(the owner was killed during the spawn call). Only a process that both cleared its environment and
left the group in that half second is out of reach. A group is only signalled while its leader is
the very process the ledger recorded (same start time), and an escaped or tagged process only while
it is the very process found (`signal_exact`), so a recycled pid is never hit. A ledger that cannot
be written (a full disk) is one warning line, never an error of the command. Does not own stopping
what a live owner started: that is the subprocess service's job.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal as signals
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:  # the tree and the signalling: imported by the sweep (issue 36)
    from ._tree import ProcessEntry

__all__ = [
    "SPILL_PREFIX",
    "GroupLedger",
    "owner_name",
    "reap_orphans",
    "start_ticks",
    "sweep_spill_directories",
]

SPILL_PREFIX: Final = "tether-shell-"
"""A spill directory is `tether-shell-<owner>-<random>` (`owner_name()` of its process)."""

_log = logging.getLogger("tether.shell")


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (IndexError, ValueError):
        return None


class GroupLedger:
    """This process's ledger file in `directory`; created on the first group, removed on close."""

    __slots__ = ("_escaped", "_groups", "_path", "_tags")

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._path = directory / f"{owner_name()}.groups"
        self._groups: dict[int, int] = {}
        self._escaped: dict[int, dict[int, int]] = {}  # pgid -> {pid: start ticks}
        self._tags: dict[str, int | None] = {}  # tag -> its group (None: not spawned yet)

    @property
    def path(self) -> Path:
        return self._path

    def expect(self, tag: str) -> None:
        """Record the tag of a command about to be spawned (call `add` or `discard` after)."""
        self._tags[tag] = None
        self._write()

    def discard(self, tag: str) -> None:
        """Forget the tag of a command whose spawn failed."""
        if self._tags.pop(tag, 0) is None:
            self._write()

    def add(self, pgid: int, ticks: int | None = None, *, tag: str | None = None) -> None:
        """Record a group just spawned (its leader's pid is the pgid; `ticks`: its start, read
        from `/proc` when not given; `tag`: the command's, from `expect`). A group whose leader
        is already gone keeps only its tag, until `remove`."""
        if tag is not None:
            self._tags[tag] = pgid
        if ticks is None:
            ticks = start_ticks(pgid)
        if ticks is None:
            return  # already gone, or no /proc
        self._groups[pgid] = ticks
        self._write()

    def track(self, pgid: int, escaped: Iterable[ProcessEntry]) -> None:
        """Record the processes that left group `pgid` and still run (replacing the last list)."""
        if pgid not in self._groups:
            return
        now = {process.pid: process.start for process in escaped}
        if now != self._escaped.get(pgid, {}):
            if now:
                self._escaped[pgid] = now
            else:
                self._escaped.pop(pgid, None)
            self._write()

    def remove(self, pgid: int) -> None:
        """Forget a group whose command is over, with its escaped processes and its tag."""
        tags = [tag for tag, group in self._tags.items() if group == pgid]
        for tag in tags:
            del self._tags[tag]
        if self._groups.pop(pgid, None) is not None or tags:
            self._escaped.pop(pgid, None)
            self._write()

    def close(self) -> None:
        """Every group is gone (or handed back to the OS): remove the file."""
        self._groups.clear()
        self._escaped.clear()
        self._tags.clear()
        with contextlib.suppress(FileNotFoundError):
            self._path.unlink()

    def _write(self) -> None:
        if not self._groups and not self._tags:
            with contextlib.suppress(FileNotFoundError):
                self._path.unlink()
            return
        lines = "".join(f"tag {tag}\n" for tag in self._tags)
        lines += "".join(f"{pgid} {ticks}\n" for pgid, ticks in self._groups.items())
        lines += "".join(
            f"{pid} {ticks} escaped\n"
            for escaped in self._escaped.values()
            for pid, ticks in escaped.items()
        )
        temp = self._path.with_suffix(".tmp")
        try:
            temp.write_text(lines)
            os.replace(temp, self._path)
        except OSError as error:  # ENOSPC, EIO: the groups still run and are still ours
            with contextlib.suppress(OSError):
                temp.unlink()
            _log.warning(
                "cannot update the orphan ledger %s (%s); a tether killed now leaves its"
                " commands running",
                self._path,
                error,
            )


def owner_name() -> str:
    """This process as ledgers and spill directories name their owner: `<pid>-<start ticks>`
    (a recycled pid has other start ticks)."""
    me = os.getpid()
    return f"{me}-{start_ticks(me) or 0}"


def _owner_alive(name: str) -> bool:
    """Whether the process an `owner_name()` (possibly followed by `-...`) names still runs."""
    pid_text, _, rest = name.partition("-")
    ticks_text = rest.partition("-")[0]
    try:
        pid, ticks = int(pid_text), int(ticks_text)
    except ValueError:
        return False
    return start_ticks(pid) == ticks


def sweep_spill_directories(parent: str) -> list[str]:
    """Remove the spill directories under `parent` whose owner no longer runs (a tether that was
    killed could not remove its own); the paths removed. A live owner's directory, and anything
    not named `tether-shell-...`, stays."""
    try:
        names = os.listdir(parent)
    except OSError:
        return []
    removed: list[str] = []
    for name in names:
        if not name.startswith(SPILL_PREFIX) or _owner_alive(name.removeprefix(SPILL_PREFIX)):
            continue
        path = os.path.join(parent, name)
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def reap_orphans(directory: Path, *, grace_s: float = 0.5) -> list[int]:
    """Stop the groups, escaped processes and tagged processes recorded by owners that no longer
    run; returns the pgids and pids signalled (groups first).

    Never raises for a missing directory or an unreadable ledger (logged and removed).
    """
    from ._group import group_alive, running, signal_exact, signal_group  # the sweep: issue 36
    from ._tree import entry

    if not directory.is_dir():
        return []
    targets: list[int] = []
    escaped: list[ProcessEntry] = []
    tags: set[str] = set()
    read: list[Path] = []
    for ledger in directory.glob("*.groups"):
        if _owner_alive(ledger.name.removesuffix(".groups")):
            continue
        read.append(ledger)
        try:
            lines = ledger.read_text().splitlines()
        except OSError:
            lines = []
        for line in lines:
            words = line.split()
            if len(words) == 2 and words[0] == "tag":
                tags.add(words[1])
                continue
            try:
                pgid_text, ticks_text, *kind = words
                pgid, ticks = int(pgid_text), int(ticks_text)
                if kind not in ([], ["escaped"]):
                    raise ValueError(line)
            except ValueError:
                _log.warning("ignoring a malformed line in %s: %r", ledger, line)
                continue
            if kind:
                process = entry(pgid)
                if process is not None and process.start == ticks and not process.dead:
                    escaped.append(process)
                continue
            # A pid still used as a group id is never handed out again, so a live group whose
            # leader is gone is still the recorded one; a live leader must be the same process.
            if start_ticks(pgid) in (ticks, None) and group_alive(pgid):
                targets.append(pgid)
    if tags:
        escaped += _tagged(tags, targets, {process.pid for process in escaped})
    for pgid in targets:
        _log.warning("stopping process group %d left behind by a tether that was killed", pgid)
        signal_group(pgid, signals.SIGTERM)
    # An escaped process that leads its own group (`setsid`) takes the group with it; the group
    # id stays reserved while the recorded leader, then any member, lives.
    groups = targets + [p.pid for p in escaped if p.pgid == p.pid and running(p)]
    for process in escaped:
        _log.warning("stopping process %d left behind by a tether that was killed", process.pid)
        signal_exact(process, signals.SIGTERM)
    for pgid in groups[len(targets) :]:
        signal_group(pgid, signals.SIGTERM)
    deadline = time.monotonic() + grace_s
    while (
        (groups or escaped)
        and time.monotonic() < deadline
        and (any(group_alive(g) for g in groups) or any(running(p) for p in escaped))
    ):
        time.sleep(0.02)
    for pgid in groups:
        if group_alive(pgid):
            signal_group(pgid, signals.SIGKILL)
    for process in escaped:
        signal_exact(process, signals.SIGKILL)
    # Only now: a tether killed while it sweeps leaves the ledgers for the next one.
    for ledger in read:
        with contextlib.suppress(FileNotFoundError):
            ledger.unlink()
    return targets + [process.pid for process in escaped]


def _tagged(tags: set[str], groups: list[int], known: set[int]) -> list[ProcessEntry]:
    """The running processes outside `groups` and `known` that carry one of `tags`."""
    from ._tree import read_tag, read_tree  # loaded by `reap_orphans`

    me = os.getpid()
    found = []
    for process in read_tree().values():
        if process.dead or process.pid == me or process.pid in known or process.pgid in groups:
            continue
        if read_tag(process.pid) in tags:
            found.append(process)
    return found
