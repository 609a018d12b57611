"""`SessionStore`: the sessions under one root (default `$TETHER_HOME/sessions`).

Owns: creating a session (lazily materialised), opening one for writing (writer lock, torn-tail
cut, crash repair appended durably), loading one read-only (the same repairs, in memory only),
checking one or all (a file that is empty, has no valid header, another format version or cannot
be read is a defect, never skipped), salvaging a damaged one (`salvage`; the file work is
`salvage_file.py`), sweeping what dead writers left behind (`sweep`), and listing them. Does not
own the file format (`events.py`, `files.py`) or the repair rules (`repair.py`, `salvage.py`):
those, and checking, load when a session is first opened, loaded, checked or salvaged (creating
one needs none of them: issue 36).

Subagent sessions (a header with `parent_session`, named by the parent's `subagent/spawned`
events) are repaired before their parent: `open` first opens (and so repairs) every child session
the log names, deepest first, then closes the parent's own open turn; `inspect_family` checks
them in the same order.

Layout: `<root>/<encoded id>/session.jsonl` and `<root>/<encoded id>/writer.lock`; a salvage moves
damaged lines to `<root>/<encoded id>/session.damaged-<n>.jsonl`. A directory without a
`session.jsonl` is not a session (a creation that never got to publish its file).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ...kernel import tether_home
from ..messages import Message
from . import events as ev
from .events import SessionError, SessionEvent, SessionHeader
from .history import derive_messages, last_turn
from .index import CachedSummary, FileIdentity, ListingIndex
from .layout import LOCK_NAME, LOG_NAME, decode_session_id, encode_session_id
from .log import SessionLog
from .writer_lock import WriterLock, same_file

if TYPE_CHECKING:
    from .check import Defect
    from .files import LogContents
    from .repair_report import ChildRepair, RepairReport
    from .salvage_file import SalvageReport

__all__ = [
    "LoadedSession",
    "SessionCheck",
    "SessionStore",
    "SessionSummary",
    "new_session_id",
]

_TITLE_SCAN_LINES = 200
_TITLE_CHARS = 80


def new_session_id() -> str:
    """A fresh, sortable id: `YYYYmmdd-HHMMSS-<8 hex>` (local time)."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}"


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One line of `list_sessions()`; `title` is the first user message's text, shortened."""

    id: str
    path: Path
    created_at: int  # epoch ms
    modified_at: int  # epoch ms (file mtime)
    size: int  # bytes
    cwd: str | None
    title: str | None
    origin: str | None = None  # the header's: "subagent" for a child's log, "compaction"...


@dataclass(frozen=True, slots=True)
class LoadedSession:
    """A read-only view of a session, with any repair applied in memory (nothing written)."""

    path: Path
    header: SessionHeader
    events: tuple[SessionEvent, ...]
    repair: RepairReport

    @property
    def id(self) -> str:
        return self.header.id

    def messages(self) -> list[Message]:
        """The model history, as a resumed session would see it."""
        return derive_messages(self.events)

    @property
    def last_turn(self) -> int:
        return last_turn(self.events)


@dataclass(frozen=True, slots=True)
class SessionCheck:
    """What `check` found in one session, and the command that repairs it.

    `remedy`: `"resume"` when crash repair alone (cut a torn tail, close the last turn) leaves a
    healthy log, `"repair"` when only a salvage does, None when healthy or when no command helps
    (an unreadable file, another format version).
    """

    id: str
    path: Path
    defects: tuple[Defect, ...]
    remedy: Literal["resume", "repair"] | None
    parent_session: str | None = None
    delegation_depth: int = 0
    children: tuple[str, ...] = ()  # the subagent sessions its log names


class SessionStore:
    """The sessions under `root` (created lazily)."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else tether_home() / "sessions"

    def path(self, session_id: str) -> Path:
        """Where the session's file is (or will be); no I/O."""
        return self.root / encode_session_id(session_id) / LOG_NAME

    def exists(self, session_id: str) -> bool:
        return self.path(session_id).exists()

    def create(
        self,
        *,
        session_id: str | None = None,
        cwd: str | os.PathLike[str] | None = None,
        parent_session: str | None = None,
        origin: str | None = None,
        delegation_depth: int = 0,
    ) -> SessionLog:
        """A new session's writer. Nothing is written until the first append.

        Raises SessionError: `SESSION_EXISTS`, `SESSION_LOCKED`, `SESSION_INVALID_ID`.
        """
        session_id = new_session_id() if session_id is None else session_id
        path = self.path(session_id)
        if path.exists():
            raise SessionError(f'session "{session_id}" already exists at {path}', "SESSION_EXISTS")
        lock = WriterLock.acquire(path.parent / LOCK_NAME, session_id)
        if path.exists():  # created between the check and the lock
            lock.release()
            raise SessionError(f'session "{session_id}" already exists at {path}', "SESSION_EXISTS")
        header = SessionHeader(
            id=session_id,
            created_at=time.time_ns() // 1_000_000,
            cwd=None if cwd is None else os.path.abspath(cwd),
            parent_session=parent_session,
            origin=origin,
            delegation_depth=delegation_depth,
        )
        return SessionLog(path, header, (), lock, size=None)

    def open(self, session_id: str) -> SessionLog:
        """The writer of an existing session, repaired: a torn last line is cut and a turn left
        open by a crash is closed (spec §7.6), both durably — after the subagent sessions its
        log names were opened (so repaired) and closed; `log.repair` says what was done.

        Raises SessionError: `SESSION_NOT_FOUND`, `SESSION_LOCKED`, `SESSION_CORRUPT`,
        `SESSION_VERSION`.
        """
        return self._open(session_id, {session_id})

    def _open(self, session_id: str, seen: set[str]) -> SessionLog:
        # the repair machinery: imported at the first open, a new session needs none (issue 36)
        from .repair import interrupted_turn_closers, open_turn
        from .repair_report import RepairReport
        from .salvage_file import fix_end

        path = self.path(session_id)
        if not os.path.lexists(path):
            raise SessionError(self._missing(session_id), "SESSION_NOT_FOUND")
        lock = WriterLock.acquire(path.parent / LOCK_NAME, session_id)
        try:
            contents = self._read(session_id, path)
            children = self._repair_children(contents.events, seen)
            size = fix_end(
                path, contents.size, contents.torn_tail is not None, contents.newline_missing
            )
            header = contents.header
            if header is None:  # read_log guarantees one; keeps the type checker honest
                raise SessionError(f"{path}: no session header", "SESSION_CORRUPT")
            log = SessionLog(path, header, contents.events, lock, size=size)
        except BaseException:
            lock.release()
            raise
        closers = interrupted_turn_closers(contents.events)
        try:
            for event in closers:
                log._commit(event, sync=False)
            if closers:
                log.sync()
        except BaseException:
            log.close()
            raise
        log.repair = RepairReport(
            contents.torn_tail,
            open_turn(contents.events) if closers else None,
            tuple(closers),
            children,
        )
        return log

    def _repair_children(
        self, events: Sequence[SessionEvent], seen: set[str]
    ) -> tuple[ChildRepair, ...]:
        """Open (so repair) and close every subagent session `events` name, their own children
        first; what each needed, for the ones that needed anything."""
        from .repair import spawned_children  # imported at the first open (issue 36)
        from .repair_report import ChildRepair

        done: list[ChildRepair] = []
        for child_id in dict.fromkeys(spawned_children(events).values()):
            if child_id in seen:
                continue
            seen.add(child_id)
            try:
                child = self._open(child_id, seen)
            except SessionError as error:
                if error.code != "SESSION_NOT_FOUND":  # a child that never wrote a line
                    done.append(ChildRepair(child_id, problem=error.message))
                continue
            child.close()
            if child.repair.repaired:
                done.append(ChildRepair(child_id, child.repair))
        return tuple(done)

    def load(self, session_id: str) -> LoadedSession:
        """A read-only, repaired-in-memory view (no lock taken, nothing written).

        Raises SessionError: `SESSION_NOT_FOUND`, `SESSION_CORRUPT`, `SESSION_VERSION`.
        """
        from .repair import interrupted_turn_closers, open_turn  # at the first load (issue 36)
        from .repair_report import RepairReport

        path = self.path(session_id)
        if not os.path.lexists(path):
            raise SessionError(self._missing(session_id), "SESSION_NOT_FOUND")
        contents = self._read(session_id, path)
        header = contents.header
        if header is None:
            raise SessionError(f"{path}: no session header", "SESSION_CORRUPT")
        closers = interrupted_turn_closers(contents.events)
        repair = RepairReport(
            contents.torn_tail, open_turn(contents.events) if closers else None, tuple(closers)
        )
        return LoadedSession(path, header, (*contents.events, *closers), repair)

    def check(self, session_id: str) -> list[Defect]:
        """Every defect of the session file as it is on disk (it is not repaired).

        Raises SessionError(`SESSION_NOT_FOUND`) when there is no file at all.
        """
        return list(self.inspect(session_id).defects)

    def inspect(self, session_id: str) -> SessionCheck:
        """`check`, with the command that repairs what it found.

        Raises SessionError(`SESSION_NOT_FOUND`) when there is no file at all.
        """
        path = self.path(session_id)
        if not os.path.lexists(path):
            raise SessionError(self._missing(session_id), "SESSION_NOT_FOUND")
        return _inspect(session_id, path)

    def inspect_family(self, session_id: str) -> list[SessionCheck]:
        """`inspect` for the subagent sessions the session's log names (their own children
        first), then for the session itself — the order `open` repairs them in. A child whose
        file does not exist (it never wrote a line) is left out.

        Raises SessionError(`SESSION_NOT_FOUND`) when the session itself has no file.
        """
        found: list[SessionCheck] = []
        self._inspect_into(self.inspect(session_id), found, {session_id})
        return found

    def _inspect_into(
        self, checked: SessionCheck, found: list[SessionCheck], seen: set[str]
    ) -> None:
        for child_id in checked.children:
            if child_id in seen or not os.path.lexists(self.path(child_id)):
                continue
            seen.add(child_id)
            self._inspect_into(_inspect(child_id, self.path(child_id)), found, seen)
        found.append(checked)

    def check_all(self) -> list[SessionCheck]:
        """`inspect` for every session file under the root — also those `list_sessions` cannot
        summarise (no header, another version, unreadable) — deepest subagent sessions first,
        then by id."""
        found: list[SessionCheck] = []
        for directory in self._directories():
            path = directory / LOG_NAME
            if os.path.lexists(path):
                found.append(_inspect(decode_session_id(directory.name) or directory.name, path))
        found.sort(key=lambda c: (-c.delegation_depth, c.id))
        return found

    def salvage(self, session_id: str) -> SalvageReport:
        """Make a damaged session healthy: keep its valid prefix, move the damaged remainder to
        a side file next to the log (fsynced before the log is cut), and close its last turn
        (synthetic results, as crash repair does). A file without a valid header is moved
        whole: the session no longer exists. A crash midway leaves the side file and a log
        that a second salvage finishes (moving the same lines to a new side file).

        Raises SessionError: `SESSION_NOT_FOUND`, `SESSION_LOCKED`, `SESSION_UNREADABLE`,
        `SESSION_VERSION`, `SESSION_WRITE_FAILED`.
        """
        from .salvage_file import salvage_file  # imported at the first salvage (issue 36)

        path = self.path(session_id)
        if not os.path.lexists(path):
            raise SessionError(self._missing(session_id), "SESSION_NOT_FOUND")
        lock = WriterLock.acquire(path.parent / LOCK_NAME, session_id)
        try:
            return salvage_file(path, lock)
        finally:
            lock.release()

    def sweep(self) -> list[Path]:
        """Remove what writers that are gone left behind: temp files of a creation that never
        published its file, and a directory that holds no session. Sessions with a live
        writer (its lock is held) are left alone. Returns the paths removed; never raises for
        I/O (a sweep is housekeeping). A directory the listing index knows clean at its
        current mtime is not looked into (`index.py`)."""
        removed: list[Path] = []
        index = ListingIndex(self.root)
        try:
            entries = list(os.scandir(self.root))
        except OSError:
            return removed
        for entry in sorted(entries, key=lambda e: e.name):
            with contextlib.suppress(OSError):
                if not entry.is_dir():
                    continue
                seen = entry.stat().st_mtime_ns  # before looking: a later change moves it
                if index.known_clean(entry.name, seen):
                    continue
                gone, clean = _sweep(Path(entry.path))
                removed.extend(gone)
                if clean and not gone:
                    index.mark_clean(entry.name, seen)
                elif not clean:
                    index.forget_clean(entry.name)
        index.save(prune=False)
        return removed

    def _directories(self) -> list[Path]:
        try:
            return sorted(entry for entry in self.root.iterdir() if entry.is_dir())
        except OSError:
            return []

    def _read(self, session_id: str, path: Path) -> LogContents:
        from .files import read_log  # the parser: imported at the first open or load (issue 36)

        try:
            return read_log(path)
        except SessionError as error:
            if error.code != "SESSION_CORRUPT":
                raise
            raise SessionError(
                f"{error.message}; run `tether sessions repair {session_id}` to keep the valid"
                " part and move the rest to a side file",
                "SESSION_CORRUPT",
            ) from error

    def list_sessions(self) -> list[SessionSummary]:
        """Every readable session under the root, most recently modified first. A log the
        listing index recorded with its current identity is not read again (`index.py`)."""
        try:
            entries = list(os.scandir(self.root))
        except (FileNotFoundError, NotADirectoryError):
            return []
        index = ListingIndex(self.root)
        found: list[SessionSummary] = []
        for entry in entries:
            log_path = os.path.join(entry.path, LOG_NAME)  # a str: a Path costs more than a stat
            try:
                stat = os.stat(log_path)
            except OSError:
                continue
            identity = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
            cached = index.summary(entry.name, identity)
            path = Path(log_path)
            if cached is None:
                cached = _read_summary(path, identity)
                if cached is None:
                    continue
                index.remember(entry.name, cached)
            summary = SessionSummary(
                id=cached.id,
                path=path,
                created_at=cached.created_at,
                modified_at=stat.st_mtime_ns // 1_000_000,
                size=stat.st_size,
                cwd=cached.cwd,
                title=cached.title,
                origin=cached.origin,
            )
            found.append(summary)
        index.save(prune=True)
        found.sort(key=lambda s: (s.modified_at, s.created_at), reverse=True)
        return found

    def _missing(self, session_id: str) -> str:
        return f'no session "{session_id}" under {self.root} (see `tether sessions list`)'


def _inspect(session_id: str, path: Path) -> SessionCheck:
    # the checking machinery: imported at the first check (issue 36)
    from .check import Defect, check_data
    from .repair import spawned_children
    from .salvage import resume_repairs

    try:
        data = path.read_bytes()
    except OSError as error:
        defect = Defect("UNREADABLE", f"cannot read {path}: {error}")
        return SessionCheck(session_id, path, (defect,), None)
    contents, defects = check_data(data)
    remedy: Literal["resume", "repair"] | None = None
    if defects and contents is not None:
        remedy = "resume" if resume_repairs(contents) else "repair"
    elif defects and defects[0].code == "EMPTY_FILE":
        remedy = "repair"
    header = contents.header if contents is not None else None
    children = tuple(dict.fromkeys(spawned_children(contents.events).values())) if contents else ()
    return SessionCheck(
        session_id,
        path,
        tuple(defects),
        remedy,
        parent_session=header.parent_session if header is not None else None,
        delegation_depth=header.delegation_depth if header is not None else 0,
        children=children,
    )


def _sweep(directory: Path) -> tuple[list[Path], bool]:
    """Sweep one session directory (see `SessionStore.sweep`): what it removed, and whether the
    directory is clean now (a published log, no temp file)."""
    temps = sorted(directory.glob(f".{LOG_NAME}.*.tmp"))
    lock_path = directory / LOCK_NAME
    has_log = os.path.lexists(directory / LOG_NAME)
    if not temps and has_log:
        return [], True
    if not temps and not lock_path.exists():
        return [], False
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return [], False  # a live writer: it is creating or writing this session
        if not same_file(fd, lock_path):
            return [], False  # another sweep removed it meanwhile
        removed: list[Path] = []
        for temp in temps:
            temp.unlink()
            removed.append(temp)
        if not os.path.lexists(directory / LOG_NAME):
            lock_path.unlink()
            removed.append(lock_path)
            with contextlib.suppress(OSError):  # side files of a salvage keep it
                directory.rmdir()
                removed.append(directory)
            return removed, False
        return removed, True
    finally:
        os.close(fd)


def _read_summary(path: Path, identity: FileIdentity) -> CachedSummary | None:
    """The header and title of the log at `path` (whose identity was taken before reading)."""
    try:
        with path.open("rb") as file:
            header = SessionHeader.from_json(json.loads(file.readline()))
            title = None
            for _ in range(_TITLE_SCAN_LINES):
                line = file.readline()
                if not line:
                    break
                if b'"user/message"' not in line:
                    continue
                title = _title(line)
                if title is not None:
                    break
    except (OSError, ValueError, SessionError):
        return None
    return CachedSummary(identity, header.id, header.created_at, header.cwd, title, header.origin)


def _title(line: bytes) -> str | None:
    try:
        event = SessionEvent.from_json(json.loads(line))
    except ValueError:
        return None
    if event.type != ev.USER_MESSAGE:
        return None
    content = event.data.get("content")
    texts = [
        block["text"]
        for block in (content if isinstance(content, list) else [])
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    ]
    text = " ".join(" ".join(str(t) for t in texts).split())
    if not text:
        return None
    return text if len(text) <= _TITLE_CHARS else text[: _TITLE_CHARS - 1] + "…"
