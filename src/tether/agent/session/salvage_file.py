"""Salvaging a damaged session file on disk: what `SessionStore.salvage` runs with the lock held.

Owns `salvage_file(path, lock)` — the damaged remainder moved to a side file
(`session.damaged-N.jsonl`, written and fsynced before the log is cut), a torn tail cut or a
missing last newline added, the valid prefix's interrupted turn closed through `SessionLog` —
and `SalvageReport`, what it did. Does not own where the file stops being valid
(`salvage.plan_salvage`) or the lock (`writer_lock.py`).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from .events import SessionError, SessionWriteFailed
from .files import parse_log
from .log import SessionLog
from .repair import interrupted_turn_closers, open_turn
from .repair_report import RepairReport
from .salvage import plan_salvage
from .writer_lock import WriterLock, fsync_dir

__all__ = ["SalvageReport", "fix_end", "salvage_file"]


@dataclass(frozen=True, slots=True)
class SalvageReport:
    """What `SessionStore.salvage` did: bytes moved to a side file, the turn it closed."""

    path: Path
    side_file: Path | None = None
    first_line: int | None = None  # the moved lines, 1-based, inclusive
    last_line: int | None = None
    offset: int = 0
    moved_bytes: int = 0
    reason: str | None = None  # why the file stopped being valid where it was cut
    newline_added: bool = False
    removed: bool = False  # no valid header: the whole file was moved, the session is gone
    repair: RepairReport = field(default_factory=RepairReport)

    @property
    def changed(self) -> bool:
        return self.side_file is not None or self.newline_added or self.repair.repaired

    def describe(self) -> list[str]:
        """One sentence per change, for users."""
        lines: list[str] = []
        if self.side_file is not None:
            span = (
                f"line {self.first_line}"
                if self.first_line == self.last_line
                else f"lines {self.first_line}-{self.last_line}"
            )
            lines.append(
                f"moved {span} ({self.moved_bytes} bytes from offset {self.offset}) to"
                f" {self.side_file}: {self.reason}"
            )
        if self.removed:
            lines.append(f"no valid header remains: the session file {self.path} is gone")
        if self.newline_added:
            lines.append("added the newline the last line lacked")
        lines.extend(self.repair.describe())
        return lines


def fix_end(path: Path, size: int, torn: bool, newline_missing: bool) -> int:
    """Cut a torn tail, or end a complete last line with its newline; the new size."""
    if not torn and not newline_missing:
        return size
    try:
        with path.open("r+b") as file:
            if torn:
                file.truncate(size)
            else:
                file.seek(size)
                file.write(b"\n")
                size += 1
            file.flush()
            os.fsync(file.fileno())
    except OSError as error:
        raise SessionWriteFailed(f"cannot repair {path}: {error}") from error
    return size


def salvage_file(path: Path, lock: WriterLock) -> SalvageReport:
    """Move the damaged remainder of the session file at `path` (its writer lock held) to a side
    file, cut or end its last line, and close the last turn of the valid prefix."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SessionError(f"cannot read {path}: {error}", "SESSION_UNREADABLE") from error
    contents = parse_log(data)  # raises SESSION_VERSION
    header = contents.header
    if header is None:
        whole = _side_file(path)
        try:
            os.rename(path, whole)
            fsync_dir(path.parent)
        except OSError as error:
            raise SessionWriteFailed(f"cannot move {path} to {whole}: {error}") from error
        lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        reason = "the file is empty" if not data else "line 1 is not a session header"
        return SalvageReport(path, whole, 1, max(lines, 1), 0, len(data), reason, removed=True)
    plan = plan_salvage(contents, data)
    side: Path | None = None
    if plan.first_line is not None:
        side = _side_file(path)
        try:
            _write_new(side, data[plan.keep :])
            fsync_dir(path.parent)
        except OSError as error:
            with contextlib.suppress(OSError):
                side.unlink()
            raise SessionWriteFailed(f"cannot write {side}: {error}") from error
    newline = plan.keep == len(data) and not data.endswith(b"\n")
    size = fix_end(path, plan.keep, side is not None, newline)
    log = SessionLog(path, header, plan.events, lock, size=size)
    try:
        closers = interrupted_turn_closers(plan.events)
        for event in closers:
            log._commit(event)
        repair = RepairReport(None, open_turn(plan.events) if closers else None, tuple(closers))
    finally:
        log.close()
    return SalvageReport(
        path,
        side,
        plan.first_line,
        plan.last_line,
        plan.keep if side is not None else 0,
        len(data) - plan.keep if side is not None else 0,
        plan.reason,
        newline,
        repair=repair,
    )


def _write_new(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _side_file(path: Path) -> Path:
    n = 1
    while os.path.lexists(side := path.with_name(f"session.damaged-{n}.jsonl")):
        n += 1
    return side
