"""The orphan ledger: a durable list of the process groups this process started, so that a later
tether can stop the groups a SIGKILLed (or crashed) tether left behind.

Owns: one file per owning process in a ledger directory (`<pid>-<start ticks>.groups`, one
`<pgid> <start ticks>` line per live group, written before the spawn call returns), and
`reap_orphans()`, which finds ledgers whose owner is gone and stops their groups
(SIGTERM, a short grace, SIGKILL). A group is only signalled while its leader is the very process
the ledger recorded (same start time), so a recycled pid is never hit. A ledger that cannot be
written (a full disk) is one warning line, never an error of the command: the group runs and is
owned as usual, only the protection against a SIGKILLed owner is lost. Does not own stopping
groups of a live owner: that is the subprocess service's job.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal as signals
import time
from pathlib import Path

from ._group import group_alive, signal_group

__all__ = ["GroupLedger", "reap_orphans", "start_ticks"]

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

    __slots__ = ("_groups", "_path")

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        me = os.getpid()
        self._path = directory / f"{me}-{start_ticks(me) or 0}.groups"
        self._groups: dict[int, int] = {}

    @property
    def path(self) -> Path:
        return self._path

    def add(self, pgid: int) -> None:
        """Record a group just spawned (its leader's pid is the pgid)."""
        ticks = start_ticks(pgid)
        if ticks is None:
            return  # already gone
        self._groups[pgid] = ticks
        self._write()

    def remove(self, pgid: int) -> None:
        """Forget a group that is gone."""
        if self._groups.pop(pgid, None) is not None:
            self._write()

    def close(self) -> None:
        """Every group is gone (or handed back to the OS): remove the file."""
        self._groups.clear()
        with contextlib.suppress(FileNotFoundError):
            self._path.unlink()

    def _write(self) -> None:
        if not self._groups:
            with contextlib.suppress(FileNotFoundError):
                self._path.unlink()
            return
        lines = "".join(f"{pgid} {ticks}\n" for pgid, ticks in self._groups.items())
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


def _owner_alive(name: str) -> bool:
    pid_text, _, ticks_text = name.removesuffix(".groups").partition("-")
    try:
        pid, ticks = int(pid_text), int(ticks_text)
    except ValueError:
        return False
    return start_ticks(pid) == ticks


def reap_orphans(directory: Path, *, grace_s: float = 0.5) -> list[int]:
    """Stop the groups recorded by owners that no longer run; returns the pgids signalled.

    Never raises for a missing directory or an unreadable ledger (logged and removed).
    """
    if not directory.is_dir():
        return []
    targets: list[int] = []
    for ledger in directory.glob("*.groups"):
        if _owner_alive(ledger.name):
            continue
        try:
            lines = ledger.read_text().splitlines()
        except OSError:
            lines = []
        for line in lines:
            try:
                pgid_text, ticks_text = line.split()
                pgid, ticks = int(pgid_text), int(ticks_text)
            except ValueError:
                _log.warning("ignoring a malformed line in %s: %r", ledger, line)
                continue
            # A pid still used as a group id is never handed out again, so a live group whose
            # leader is gone is still the recorded one; a live leader must be the same process.
            if start_ticks(pgid) in (ticks, None) and group_alive(pgid):
                targets.append(pgid)
        with contextlib.suppress(FileNotFoundError):
            ledger.unlink()
    for pgid in targets:
        _log.warning("stopping process group %d left behind by a tether that was killed", pgid)
        signal_group(pgid, signals.SIGTERM)
    deadline = time.monotonic() + grace_s
    while targets and time.monotonic() < deadline and any(group_alive(g) for g in targets):
        time.sleep(0.02)
    for pgid in targets:
        if group_alive(pgid):
            signal_group(pgid, signals.SIGKILL)
    return targets
