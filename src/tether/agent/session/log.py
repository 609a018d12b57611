"""`SessionLog`: the single writer of one append-only JSONL session file.

Owns: appending events (contiguous `seq`, lossless JSON, one `os.write` per line on an
`O_APPEND` descriptor), durability (`tool/call`, `tool/result`, Code Mode's
`tool/code-dispatch-start` and `tool/code-dispatch`, and `turn/end` are fsynced before `append`
returns; other events are written to the OS and synced by the next durable one), lazy
materialisation (nothing on disk until the first append; then header + first line are written to
a temp file, fsynced and published with a hard link, and the directory is fsynced), the
call/result invariant at append time (a second `tool/result` for one call is refused), and the
writer lock. Does not own reading, repair or listing (`files.py`, `repair.py`, `store.py`).

A write the file refuses (`ENOSPC`, `EIO`, a failed fsync) cuts the file back to its last complete
line and puts the log in the *failed* state: every later append is refused with
`SessionWriteFailed` (so nothing is ever written out of order, and the file stays a valid prefix
of the session), except that a refused `tool/result` is *held* in memory. `recover()` — once the
file takes writes again — closes the turn the failure cut: held results are written as they were,
calls without one get `TOOL_OUTCOME_UNKNOWN` (recorded) or `TOOL_NOT_STARTED`, then `step/end`
and `turn/end {"kind": "error", ...}`. A process that never recovers leaves an open turn on disk,
which crash repair closes the same way (without the held results).

Appends are synchronous: an fsync blocks the event loop for its duration (~0.1-0.5 ms on a local
SSD), which keeps a durable event ordered before whatever the caller does next.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import cast

from ...core.json import JsonValue, NotLosslessJson, snapshot
from ...tools.results import ErrorInfo, ToolExecutionResult, ToolFailure, UserMessage
from ..messages import (
    AssistantMessage,
    Message,
    StreamChunk,
    TokenUsage,
    ToolResultMessage,
    chunk_to_json,
    message_to_json,
    tool_result_message,
    usage_to_json,
)
from . import events as ev
from .events import SessionError, SessionEvent, SessionHeader, SessionWriteFailed, result_call_id
from .files import TornTail
from .history import derive_messages, last_turn
from .repair import TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN, interrupted_turn_closers, open_turn

__all__ = ["ChildRepair", "RepairReport", "SessionLog", "WriterLock", "fsync_dir", "same_file"]


class WriterLock:
    """An exclusive `flock` on `<session dir>/writer.lock`, which also records the holder's pid."""

    __slots__ = ("_fd", "path")

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, path: Path, session_id: str) -> WriterLock:
        """Take the lock. Raises SessionError(`SESSION_LOCKED`) naming the holder's pid.

        A sweep may remove the lock file (and its directory) of a session that was never
        published; a lock taken on a file that is no longer at `path` is retaken.
        """
        while True:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_pid(fd)
                os.close(fd)
                who = f"pid {holder}" if holder else "another process"
                raise SessionError(
                    f'session "{session_id}" is already open for writing by {who}; close that'
                    f" tether (or wait for it to finish) before writing to it (lock: {path})",
                    "SESSION_LOCKED",
                ) from None
            except BaseException:
                os.close(fd)
                raise
            if same_file(fd, path):
                break
            os.close(fd)  # swept between our open and our flock: take the new one
        with contextlib.suppress(OSError):  # the pid is a courtesy; a full disk must not stop us
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(path, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Release the lock (idempotent). The lock file stays; its content is stale."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def same_file(fd: int, path: Path) -> bool:
    """Whether `path` still names the file open on `fd`."""
    try:
        there = os.stat(path)
    except FileNotFoundError:
        return False
    here = os.fstat(fd)
    return (there.st_dev, there.st_ino) == (here.st_dev, here.st_ino)


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


@dataclass(frozen=True, slots=True)
class ChildRepair:
    """What opening a session did first to one of its subagent sessions: its repair, or why it
    could not be opened (the parent is repaired regardless)."""

    session_id: str
    report: RepairReport | None = None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class RepairReport:
    """What loading a session had to repair (nothing, by default). `children`: what opening it
    did first to the subagent sessions it started (deepest first)."""

    torn_tail: TornTail | None = None
    closed_turn: int | None = None  # the interrupted turn crash repair closed
    synthesized: tuple[SessionEvent, ...] = ()  # the events crash repair appended
    children: tuple[ChildRepair, ...] = ()

    @property
    def repaired(self) -> bool:
        return (
            self.torn_tail is not None
            or bool(self.synthesized)
            or any(c.problem is not None or (c.report and c.report.repaired) for c in self.children)
        )

    def describe(self) -> list[str]:
        """One sentence per repair, for users (subagent sessions first)."""
        lines: list[str] = []
        for child in self.children:
            if child.problem is not None:
                lines.append(
                    f"could not repair subagent session {child.session_id}: {child.problem}"
                )
            for line in child.report.describe() if child.report is not None else ():
                lines.append(f"subagent session {child.session_id}: {line}")
        if self.torn_tail is not None:
            lines.append(f"cut a torn last line: {self.torn_tail.describe()}")
        results = [e for e in self.synthesized if e.type == ev.TOOL_RESULT]
        codes: dict[str, int] = {}
        kept = 0
        for event in results:
            error = event.data.get("error")
            code = error.get("code") if isinstance(error, dict) else None
            if code in (TOOL_OUTCOME_UNKNOWN, TOOL_NOT_STARTED):
                codes[str(code)] = codes.get(str(code), 0) + 1
            else:
                kept += 1
        detail = ", ".join(f"{n} {code}" for code, n in codes.items())
        with_results = (f" with synthetic tool results ({detail})" if detail else "") + (
            f"{' and' if detail else ' with'} {kept} held tool result{'s' if kept > 1 else ''}"
            if kept
            else ""
        )
        children = sum(1 for e in self.synthesized if e.type == ev.CODE_DISPATCH)
        if children:
            lines.append(
                f"gave {children} open Code Mode sub-call{'s' if children > 1 else ''} the"
                f" outcome {TOOL_OUTCOME_UNKNOWN}"
            )
        if self.closed_turn is not None:
            lines.append(f"closed interrupted turn {self.closed_turn}{with_results}")
        elif results:  # a turn closed without them (a writer that could not record them)
            turn = results[0].data.get("turn")
            parts = [*(f"{n} {code}" for code, n in codes.items())]
            parts += [f"{kept} held"] if kept else []
            lines.append(f"gave turn {turn} its missing tool results ({', '.join(parts)})")
        return lines


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _encode(record: dict[str, JsonValue]) -> bytes:
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode() + b"\n"
    except UnicodeEncodeError:  # a lone surrogate: keep it, escaped
        return json.dumps(record, separators=(",", ":"), allow_nan=False).encode() + b"\n"


class SessionLog:
    """The open writer of one session (create or open one through `SessionStore`).

    Invariants: `events[i].seq == i`; every event in `events` is on disk (synced if durable); at
    most one `tool/result` per call id; the writer lock is held until `close()`.
    """

    def __init__(
        self,
        path: Path,
        header: SessionHeader,
        events: Sequence[SessionEvent],
        lock: WriterLock,
        *,
        size: int | None,
    ) -> None:
        self._path = path
        self._header = header
        self._events: list[SessionEvent] = list(events)
        self._lock = lock
        self._fd: int | None = None
        self._size = size  # None: not materialised yet
        self._answered: set[str] = set()
        self._calls: set[str] = set()
        self._failure: SessionWriteFailed | None = None  # the failed state (see the module)
        self._held: dict[str, SessionEvent] = {}  # refused tool/results, by call id
        self.repair = RepairReport()
        for event in self._events:
            self._track(event)
        if size is not None:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)

    # -- reading -------------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self._header.id

    @property
    def header(self) -> SessionHeader:
        return self._header

    @property
    def path(self) -> Path:
        """The session file (it exists only after the first append)."""
        return self._path

    @property
    def events(self) -> Sequence[SessionEvent]:
        """Every event so far, in seq order (a live read-only view)."""
        return self._events

    @property
    def closed(self) -> bool:
        return self._lock is None or not self._lock.held

    @property
    def failure(self) -> SessionWriteFailed | None:
        """The write failure that stopped this log, until `recover()` succeeds."""
        return self._failure

    @property
    def held_results(self) -> Mapping[str, SessionEvent]:
        """`tool/result`s refused while the log was failed, by call id (their seq is unset)."""
        return dict(self._held)

    @property
    def next_seq(self) -> int:
        return len(self._events)

    def messages(self) -> list[Message]:
        """The model history rebuilt from the surface events."""
        return derive_messages(self._events)

    @property
    def last_turn(self) -> int:
        """The number of the last `turn/start` (0 for none); the next turn is this + 1."""
        return last_turn(self._events)

    @property
    def open_turn(self) -> int | None:
        """The turn that has started and not ended, if any."""
        return open_turn(self._events)

    # -- writing -------------------------------------------------------------------------------

    def append(
        self,
        type: str,
        data: Mapping[str, object],
        *,
        source_event_seqs: Sequence[int] | None = None,
        ignorable: bool = False,
    ) -> SessionEvent:
        """Append one event and return it (with its seq and time).

        Raises SessionError: `SESSION_CLOSED`, `SESSION_INVALID_EVENT` (data not lossless JSON,
        a core event missing its call id), `SESSION_DUPLICATE_RESULT` (a second result for a
        call); SessionWriteFailed (`SESSION_WRITE_FAILED`: the file refused the write, or an
        earlier one; nothing was appended, a `tool/result` is held for `recover()`).
        """
        if self.closed:
            raise SessionError(f'session "{self.id}" is closed', "SESSION_CLOSED")
        if not isinstance(type, str) or not type or type == "session":
            raise SessionError(f"invalid event type {type!r}", "SESSION_INVALID_EVENT")
        try:
            frozen = snapshot(dict(data))
        except NotLosslessJson as error:
            raise SessionError(
                f'"{type}" event data is not lossless JSON: {error}', "SESSION_INVALID_EVENT"
            ) from error
        seqs = None if source_event_seqs is None else tuple(source_event_seqs)
        event = SessionEvent(
            type,
            len(self._events),
            _now_ms(),
            cast(Mapping[str, JsonValue], frozen),
            seqs,
            ignorable,
        )
        if self._failure is not None:
            self._hold(event)
            raise SessionWriteFailed(
                f'session "{self.id}" stopped recording at seq {len(self._events)} after a write'
                f" failure ({self._failure}); nothing more is written until it recovers"
            )
        try:
            self._commit(event)
        except SessionWriteFailed:
            self._hold(event)
            raise
        return event

    def publish(self) -> None:
        """Write the file now, with the header only, when nothing is on disk yet: the session is
        listed and checked before its first event (a durable session whose events are recorded
        elsewhere first, e.g. on Temporal). Raises SessionError as `append` does."""
        if self._size is None:
            self._materialize(b"")

    def _hold(self, event: SessionEvent) -> None:
        if event.type == ev.TOOL_RESULT:
            answer = result_call_id(event.data)
            if answer is not None and answer not in self._answered:
                self._held.setdefault(answer, event)

    def recover(self) -> RepairReport:
        """Leave the failed state: close the turn the write failure cut (see the module), with
        the held results where there are some. A no-op (empty report) when the log is not failed.

        Raises SessionWriteFailed when the file still refuses writes (the log stays failed; what
        was written stays written, and a later `recover()` continues from there).
        """
        failure = self._failure
        if failure is None:
            return RepairReport()
        if self.closed:
            raise SessionError(f'session "{self.id}" is closed', "SESSION_CLOSED")
        reason: dict[str, JsonValue] = {
            "kind": "error",
            "error": {"message": failure.message, "code": failure.code},
        }
        turn = open_turn(self._events)
        closers = interrupted_turn_closers(self._events, held=self._held, reason=reason)
        self._failure = None
        for event in closers:
            self._commit(event)
        self._held.clear()
        return RepairReport(None, turn, tuple(closers))

    def _commit(self, event: SessionEvent, *, sync: bool | None = None) -> None:
        self._check_invariants(event)
        line = _encode(event.to_json())
        if self._size is None:
            self._materialize(line)
        else:
            self._write(line, event.type in ev.DURABLE_TYPES if sync is None else sync)
        self._events.append(event)
        self._track(event)

    def _failed(self, what: str, error: OSError) -> SessionWriteFailed:
        failure = SessionWriteFailed(f"{what} {self._path}: {error}")
        failure.__cause__ = error
        self._failure = failure
        return failure

    def _check_invariants(self, event: SessionEvent) -> None:
        if event.seq != len(self._events):
            raise SessionError(
                f"event seq {event.seq} does not continue the log at {len(self._events)}",
                "SESSION_INVALID_EVENT",
            )
        data = event.data
        if event.type == ev.TOOL_CALL:
            call_id = data.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                raise SessionError("tool/call needs a call_id", "SESSION_INVALID_EVENT")
            if call_id in self._calls:
                raise SessionError(
                    f'tool/call "{call_id}" is already recorded', "SESSION_INVALID_EVENT"
                )
        elif event.type == ev.TOOL_RESULT:
            answer = result_call_id(data)
            if answer is None:
                raise SessionError(
                    "tool/result needs a tool-result message (see tool_result_message)",
                    "SESSION_INVALID_EVENT",
                )
            if answer in self._answered:
                raise SessionError(
                    f'tool call "{answer}" already has a tool/result; every call gets exactly one',
                    "SESSION_DUPLICATE_RESULT",
                )

    def _track(self, event: SessionEvent) -> None:
        if event.type == ev.TOOL_CALL:
            call_id = event.data.get("call_id")
            if isinstance(call_id, str):
                self._calls.add(call_id)
        elif event.type == ev.TOOL_RESULT:
            answer = result_call_id(event.data)
            if answer is not None:
                self._answered.add(answer)

    def _materialize(self, first: bytes) -> None:
        path = self._path
        payload = _encode(self._header.to_json()) + first
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
            try:
                _write_all(fd, payload)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.link(temp, path)
        except FileExistsError:
            raise SessionError(
                f'session "{self.id}" already exists at {path}', "SESSION_EXISTS"
            ) from None
        except OSError as error:
            raise self._failed("cannot create", error) from error
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
        try:
            fsync_dir(path.parent)
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        except OSError as error:  # the file is published; it is whole (header + first line)
            raise self._failed("cannot open", error) from error
        self._size = len(payload)

    def _write(self, line: bytes, sync: bool) -> None:
        fd, size = self._fd, self._size
        if fd is None or size is None:
            raise SessionError(f'session "{self.id}" is closed', "SESSION_CLOSED")
        try:
            _write_all(fd, line)
            if sync:
                os.fsync(fd)
        except OSError as error:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise self._failed("cannot append to", error) from error
        self._size = size + len(line)

    def sync(self) -> None:
        """fsync everything written so far (a no-op before the file exists).

        Raises SessionWriteFailed when the fsync fails (the log is then failed).
        """
        if self._fd is not None:
            try:
                os.fsync(self._fd)
            except OSError as error:
                raise self._failed("cannot sync", error) from error

    def close(self) -> None:
        """Sync, close the file and release the writer lock. Idempotent; never raises for I/O
        (every durable event was synced when it was appended)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                with contextlib.suppress(OSError):
                    os.fsync(fd)
            finally:
                os.close(fd)
        self._lock.release()

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self._events)} events"
        return f"<SessionLog {self.id!r} {state}>"

    # -- typed appends -------------------------------------------------------------------------

    def turn_start(self, turn: int) -> SessionEvent:
        return self.append(ev.TURN_START, {"turn": turn})

    def turn_end(self, turn: int, reason: Mapping[str, object]) -> SessionEvent:
        """`reason`: `{"kind": "completed"|"aborted"|"blocked"|"error"|"max-tokens", ...}`."""
        return self.append(ev.TURN_END, {"turn": turn, "reason": dict(reason)})

    def step_start(self, turn: int, step: int) -> SessionEvent:
        return self.append(ev.STEP_START, {"turn": turn, "step": step})

    def step_end(self, turn: int, step: int) -> SessionEvent:
        return self.append(ev.STEP_END, {"turn": turn, "step": step})

    def user_message(self, message: UserMessage) -> SessionEvent:
        return self.append(ev.USER_MESSAGE, message_to_json(message))

    def assistant_chunk(self, turn: int, step: int, chunk: StreamChunk) -> SessionEvent:
        return self.append(
            ev.ASSISTANT_CHUNK, {"turn": turn, "step": step, "chunk": chunk_to_json(chunk)}
        )

    def assistant_message(
        self,
        turn: int,
        step: int,
        message: AssistantMessage,
        *,
        usage: TokenUsage | None = None,
        interrupted: bool = False,
        source_event_seqs: Sequence[int] | None = None,
    ) -> SessionEvent:
        data: dict[str, object] = {"turn": turn, "step": step, "message": message_to_json(message)}
        if usage is not None:
            data["usage"] = usage_to_json(usage)
        if interrupted:
            data["interrupted"] = True
        return self.append(ev.ASSISTANT_MESSAGE, data, source_event_seqs=source_event_seqs)

    def tool_call(
        self, turn: int, step: int, call_id: str, name: str, arguments: str
    ) -> SessionEvent:
        """Record that a call is starting (durable). `arguments` is the model's raw string."""
        return self.append(
            ev.TOOL_CALL,
            {"turn": turn, "step": step, "call_id": call_id, "name": name, "arguments": arguments},
        )

    def tool_result(
        self,
        turn: int,
        step: int,
        message: ToolResultMessage,
        *,
        error: ErrorInfo | None = None,
        meta: JsonValue | None = None,
        call_seq: int | None = None,
    ) -> SessionEvent:
        """Record a call's one result (durable); `call_seq` cites its `tool/call`."""
        data: dict[str, object] = {"turn": turn, "step": step, "message": message_to_json(message)}
        if error is not None:
            data["error"] = {"name": error.name, "code": error.code}
        if meta is not None:
            data["meta"] = meta
        cites = None if call_seq is None else (call_seq,)
        return self.append(ev.TOOL_RESULT, data, source_event_seqs=cites)

    def tool_outcome(
        self,
        turn: int,
        step: int,
        call_id: str,
        result: ToolExecutionResult,
        *,
        call_seq: int | None = None,
    ) -> SessionEvent:
        """`tool_result` for a registry result: its content, error info and meta."""
        info = result.error.info if isinstance(result, ToolFailure) else None
        return self.tool_result(
            turn,
            step,
            tool_result_message(call_id, result),
            error=info,
            meta=result.meta,
            call_seq=call_seq,
        )


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
