"""`SessionStore`: the sessions under one root (default `$TETHER_HOME/sessions`).

Owns: creating a session (lazily materialised), opening one for writing (writer lock, torn-tail
cut, crash repair appended durably), loading one read-only (the same repairs, in memory only),
checking one, and listing them. Does not own the file format (`events.py`, `files.py`) or the
repair rules (`repair.py`).

Layout: `<root>/<encoded id>/session.jsonl` and `<root>/<encoded id>/writer.lock`.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from ...kernel import tether_home
from ..messages import Message
from . import events as ev
from .check import Defect, check_events
from .events import SessionError, SessionEvent, SessionHeader
from .files import LOCK_NAME, LOG_NAME, encode_session_id, parse_log, read_log
from .history import derive_messages, last_turn
from .log import RepairReport, SessionLog, WriterLock
from .repair import interrupted_turn_closers, open_turn

__all__ = ["LoadedSession", "SessionStore", "SessionSummary", "new_session_id"]

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
        open by a crash is closed (spec §7.6), both durably; `log.repair` says what was done.

        Raises SessionError: `SESSION_NOT_FOUND`, `SESSION_LOCKED`, `SESSION_CORRUPT`,
        `SESSION_VERSION`.
        """
        path = self.path(session_id)
        if not path.exists():
            raise SessionError(self._missing(session_id), "SESSION_NOT_FOUND")
        lock = WriterLock.acquire(path.parent / LOCK_NAME, session_id)
        try:
            contents = read_log(path)
            if contents.torn_tail is not None:
                with path.open("r+b") as file:
                    file.truncate(contents.size)
                    os.fsync(file.fileno())
            header = contents.header
            if header is None:  # read_log guarantees one; keeps the type checker honest
                raise SessionError(f"{path}: no session header", "SESSION_CORRUPT")
            log = SessionLog(path, header, contents.events, lock, size=contents.size)
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
            contents.torn_tail, open_turn(contents.events) if closers else None, tuple(closers)
        )
        return log

    def load(self, session_id: str) -> LoadedSession:
        """A read-only, repaired-in-memory view (no lock taken, nothing written).

        Raises SessionError: `SESSION_NOT_FOUND`, `SESSION_CORRUPT`, `SESSION_VERSION`.
        """
        path = self.path(session_id)
        if not path.exists():
            raise SessionError(self._missing(session_id), "SESSION_NOT_FOUND")
        contents = read_log(path)
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

        Raises SessionError: `SESSION_NOT_FOUND`, `SESSION_VERSION`.
        """
        path = self.path(session_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise SessionError(self._missing(session_id), "SESSION_NOT_FOUND") from None
        contents = parse_log(data)
        total = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        return check_events(contents.events, contents.problems, total)

    def list_sessions(self) -> list[SessionSummary]:
        """Every readable session under the root, most recently modified first."""
        try:
            entries = list(self.root.iterdir())
        except FileNotFoundError:
            return []
        found: list[SessionSummary] = []
        for entry in entries:
            summary = _summarize(entry / LOG_NAME)
            if summary is not None:
                found.append(summary)
        found.sort(key=lambda s: (s.modified_at, s.created_at), reverse=True)
        return found

    def _missing(self, session_id: str) -> str:
        return f'no session "{session_id}" under {self.root} (see `tether sessions list`)'


def _summarize(path: Path) -> SessionSummary | None:
    try:
        stat = path.stat()
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
    return SessionSummary(
        id=header.id,
        path=path,
        created_at=header.created_at,
        modified_at=stat.st_mtime_ns // 1_000_000,
        size=stat.st_size,
        cwd=header.cwd,
        title=title,
    )


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
