"""`SessionLog`: the single writer of one append-only JSONL session file.

Owns: appending events (contiguous `seq`, lossless JSON, one `os.write` per line on an
`O_APPEND` descriptor), durability (below), lazy materialisation (nothing on disk until the
first append; then header + first line are written to a temp file, fsynced and published with
a hard link, and the directory is fsynced), the
call/result invariant at append time (a second `tool/result` for one call is refused), and
holding the writer lock (`writer_lock.py`). Does not own reading, repair or listing (`files.py`,
`repair.py`, `store.py`).

A write the file refuses (`ENOSPC`, `EIO`, a failed fsync) cuts the file back to its last complete
line and puts the log in the *failed* state: every later append is refused with
`SessionWriteFailed` (so nothing is ever written out of order, and the file stays a valid prefix
of the session), except that a refused `tool/result` is *held* in memory. `recover()` — once the
file takes writes again — closes the turn the failure cut: held results are written as they were,
calls without one get `TOOL_OUTCOME_UNKNOWN` (recorded) or `TOOL_NOT_STARTED`, then `step/end`
and `turn/end {"kind": "error", ...}`. A process that never recovers leaves an open turn on disk,
which crash repair closes the same way (without the held results).

Durability (group commit). Every append is written to the OS at once (a killed process loses
nothing it appended; only a crash of the machine can lose what was not fsynced). An fsync is
paid once per *durability point* for everything written since the last one, not per event. The
promise the log keeps — after any crash, every call has exactly one `tool/result`, and
`TOOL_NOT_STARTED` is claimed only for a call whose body never ran — fixes the points:

1. Before a tool body may start: its `tool/call` is durable (else a crash after the body began
   would lose the call, and repair would say `TOOL_NOT_STARTED` about work that happened). The
   step scheduler asks for this (`StepRecorder.durable`) in each call's dispatch task, so the
   calls that start together share one fsync.
2. Before each model request: everything the request is built from (the user's message, the
   step's tool results) is durable — the provider acts on it (`AgentLoop` awaits `durable()`).
3. Before a turn's end is reported: `turn/end` is durable, and with it every result of the
   turn. It is fsynced as it is appended (`SYNCED_ON_APPEND`); `AgentLoop` appends it with
   `sync=False` and awaits `durable()` before it returns the outcome.
4. Code Mode's sub-calls are logged through `tools/code-dispatch-log` right before they run, so
   `tool/code-dispatch-start` and `tool/code-dispatch` are fsynced as they are appended.
5. `close()` and the publication of a new session (temp file fsynced, hard-linked, directory
   fsynced) are durability points too; so is an explicit `sync()` (a subagent's link).

Between points a `tool/result` may be seen by observers (`ToolCallFinished`) before it is
durable; a machine crash in that window records the call `TOOL_OUTCOME_UNKNOWN`, never a second
result and never `TOOL_NOT_STARTED`. Two or three fsyncs per model step remain (the batch before
its calls start, the one before the next request, and `turn/end`), whatever the number of calls.

`sync()` and the fsyncs of `append` block the event loop for their duration (~0.1-0.5 ms on a
local SSD), which keeps a durable event ordered before whatever the caller does next.
`durable()` keeps the same order for the awaiting task without blocking the loop on a slow
disk: an fsync runs in a worker thread, so a thousand agents in one process do not queue behind
each other's disk waits, and the tasks of one log that need it durable at once share one fsync
(on tmpfs or a fast SSD, where an fsync costs less than the thread's hop, it runs inline).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, cast

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
from .history import derive_messages, last_turn
from .writer_lock import WriterLock, fsync_dir

if TYPE_CHECKING:
    from .repair_report import RepairReport

__all__ = ["SessionLog"]


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

    Invariants: `events[i].seq == i`; every event in `events` is written to the file (and synced
    by the durability points of the module docstring); at most one `tool/result` per call id; the
    writer lock is held until `close()`.
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
        self._synced = size  # the file's size at its last fsync (None: not materialised)
        self._flight: asyncio.Future[None] | None = None  # the fsync `durable()` awaits
        self._answered: set[str] = set()
        self._calls: set[str] = set()
        self._failure: SessionWriteFailed | None = None  # the failed state (see the module)
        self._held: dict[str, SessionEvent] = {}  # refused tool/results, by call id
        self._repair: RepairReport | None = None  # None: nothing repaired (see `repair`)
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
        from .repair import open_turn  # the repair rules: imported at the first use (issue 36)

        return open_turn(self._events)

    @property
    def repair(self) -> RepairReport:
        """What opening the session repaired (`SessionStore.open` sets it); an empty report for
        a session that needed nothing, such as a new one."""
        if self._repair is None:
            # a new session's empty report: made when first read, not at creation (issue 36)
            from .repair_report import RepairReport

            self._repair = RepairReport()
        return self._repair

    @repair.setter
    def repair(self, report: RepairReport) -> None:
        self._repair = report

    # -- writing -------------------------------------------------------------------------------

    def append(
        self,
        type: str,
        data: Mapping[str, object],
        *,
        source_event_seqs: Sequence[int] | None = None,
        ignorable: bool = False,
        sync: bool | None = None,
    ) -> SessionEvent:
        """Append one event and return it (with its seq and time). `sync`: None follows the
        type's rule (`SYNCED_ON_APPEND` are fsynced before this returns); False leaves the fsync
        to the next durability point, which the caller must reach (`await durable()`) before it
        reports the event.

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
            self._commit(event, sync=sync)
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
        # the repair machinery: imported at the first recovery (issue 36)
        from .repair import interrupted_turn_closers, open_turn
        from .repair_report import RepairReport

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
            self._write(line, event.type in ev.SYNCED_ON_APPEND if sync is None else sync)
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
        self._size = self._synced = len(payload)

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
        if sync:
            self._synced = self._size

    @property
    def unsynced(self) -> bool:
        """Whether something written is not yet fsynced (the next `sync()` pays one fsync)."""
        return self._size != self._synced

    def sync(self) -> None:
        """Make everything written so far durable: one fsync, none when nothing is pending
        (or before the file exists). A durability point (see the module docstring).

        Raises SessionWriteFailed when the fsync fails (the log is then failed).
        """
        if self._fd is not None and self._size != self._synced:
            try:
                os.fsync(self._fd)
            except OSError as error:
                raise self._failed("cannot sync", error) from error
            self._synced = self._size

    async def durable(self) -> None:
        """`sync()` without blocking the event loop on a slow disk: the fsync runs in a worker
        thread (on a duplicate of the descriptor, so `close()` never races it), and the tasks
        that need this log durable at the same time share one fsync. While fsyncs take less
        than `INLINE_FSYNC_NS` (tmpfs, a fast SSD) it runs inline instead: the thread's hop
        would cost more than it saves. Returns once everything written before the call is on
        disk. A durability point (see the module docstring).

        Raises SessionWriteFailed when the fsync fails (the log is then failed).
        """
        want = self._size
        while self._fd is not None and want is not None and self._synced is not None:
            if self._synced >= want:
                return
            if self._failure is not None:
                raise self._failure
            flight = self._flight
            if flight is None:
                if _last_fsync_ns[0] < INLINE_FSYNC_NS:
                    self._timed_sync()
                    continue
                flight = self._flight = asyncio.ensure_future(self._fsync_off_loop())
                flight.add_done_callback(_retrieved)
            await asyncio.shield(flight)  # a cancelled waiter leaves the fsync to the others

    def _timed_sync(self) -> None:
        began = time.perf_counter_ns()
        self.sync()
        _last_fsync_ns[0] = time.perf_counter_ns() - began

    async def _fsync_off_loop(self) -> None:
        fd, size = self._fd, self._size
        try:
            if fd is None or size is None:
                return
            copy = os.dup(fd)
            try:
                _last_fsync_ns[0] = await asyncio.to_thread(_timed_fsync, copy)
            except OSError as error:
                raise self._failed("cannot sync", error) from error
            finally:
                os.close(copy)
            if self._synced is not None and size > self._synced:
                self._synced = size
        finally:
            self._flight = None

    def close(self) -> None:
        """Sync what is pending, close the file and release the writer lock. Idempotent; never
        raises for I/O (what a durability point needed was synced at that point)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                if self._size != self._synced:
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

    def turn_end(
        self, turn: int, reason: Mapping[str, object], *, sync: bool | None = None
    ) -> SessionEvent:
        """`reason`: `{"kind": "completed"|"aborted"|"blocked"|"error"|"max-tokens", ...}`.
        Fsynced before this returns, unless `sync=False` (see `append`)."""
        return self.append(ev.TURN_END, {"turn": turn, "reason": dict(reason)}, sync=sync)

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
        changed_arguments: JsonValue | None = None,
    ) -> SessionEvent:
        """Record a call's one result (durable); `call_seq` cites its `tool/call`.
        `changed_arguments`: the arguments the call went on with when an approver or a hook
        changed the model's (which stay `tool/call`'s raw `arguments`); None: unchanged."""
        data: dict[str, object] = {"turn": turn, "step": step, "message": message_to_json(message)}
        if error is not None:
            data["error"] = {"name": error.name, "code": error.code}
        if meta is not None:
            data["meta"] = meta
        if changed_arguments is not None:
            data["changed_arguments"] = changed_arguments
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
        changed_arguments: JsonValue | None = None,
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
            changed_arguments=changed_arguments,
        )


INLINE_FSYNC_NS = 200_000
"""An fsync faster than this (the last one measured in this process) runs inline in
`durable()`; a slower one in a worker thread."""

_last_fsync_ns = [0]


def _timed_fsync(fd: int) -> int:
    """fsync `fd` (in a worker thread); how long it took, in ns."""
    began = time.perf_counter_ns()
    os.fsync(fd)
    return time.perf_counter_ns() - began


def _retrieved(flight: asyncio.Future[None]) -> None:
    """Mark a shared fsync's failure as seen (its waiters may all have been cancelled)."""
    if not flight.cancelled():
        flight.exception()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
