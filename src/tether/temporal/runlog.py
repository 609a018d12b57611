"""`RunLog`: what one run of a session workflow records, and the state the next run inherits.

Owns the run's log entries (session-log index = `base` + position; `emit` stamps each with the
workflow time), the conversation the model reads (sealed `segments` in the payload store plus
the inline `tail`, which every surface entry joins), the request header's digest and the
request context (what `request/header` and `request/context` record only when they change),
the contexts parked for the next step, and their hand-over: from the `SessionState` a run
starts with, to the one it continues as new with (`carried`) — by reference, or, for a run that
has not taken that patch, everything inline as older runs carried it.

Workflow code: deterministic, no I/O; imported inside the workflow sandbox.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from .payloads import (
        BlobRef,
        Conversation,
        LlmStepOutput,
        LogEntry,
        LogPage,
        SessionState,
        header_digest,
    )

__all__ = ["LOG_PAGE_ENTRIES", "SURFACE", "RunLog"]

SURFACE: Final = frozenset({"user/message", "assistant/message", "tool/result"})
"""The entries the model reads (they join the conversation's tail)."""

LOG_PAGE_ENTRIES: Final = 500
"""At most this many entries per `log_page` answer (`LogPage.complete` says whether more follow)."""


class RunLog:
    """One run's entries and the session state they carry (see the module note)."""

    def __init__(self, state: SessionState | None) -> None:
        self.entries: list[LogEntry] = []
        self.base = 0 if state is None else state.log_base
        self.segments: list[BlobRef] = []
        self.tail: list[LogEntry] = []
        self.header_sha: str | None = None
        self.header: dict[str, Any] | None = None  # whole, for a run that carries it so
        self.context: dict[str, Any] | None = None
        self.parked: list[dict[str, Any]] = []
        self.turn_start = 0  # position of the running (or last) turn's turn/start
        self.last_activity: datetime = workflow.now()
        self._sent = 0  # how much of the tail the running model step was sent
        if state is not None:
            conversation = state.conversation or Conversation([], list(state.surface))
            self.segments, self.tail = list(conversation.segments), list(conversation.tail)
            self.header = state.header
            self.header_sha = state.header_sha256 or (
                None if state.header is None else header_digest(state.header)
            )
            self.parked = list(state.parked)
            self.context = state.context

    @property
    def size(self) -> int:
        """The session-log index after this run's last entry."""
        return self.base + len(self.entries)

    def emit(self, type: str, data: dict[str, Any], refs: dict[str, BlobRef] | None = None) -> None:
        self.last_activity = workflow.now()
        at = int(self.last_activity.timestamp() * 1000)
        entry = LogEntry(type, data, refs or {}, at)
        self.entries.append(entry)
        if type in SURFACE:
            self.tail.append(entry)

    def start_turn(self) -> None:
        self.turn_start = len(self.entries)

    def turn_entries(self) -> list[LogEntry]:
        """The running (or last) turn's entries, from its `turn/start`."""
        return self.entries[self.turn_start :]

    def page(self, start: int, previous_run_id: str | None) -> LogPage:
        """The `log_page` answer for session-log index `start`."""
        first = max(0, start - self.base)
        page = self.entries[first : first + LOG_PAGE_ENTRIES]
        complete = first + len(page) >= len(self.entries)
        return LogPage(self.base, previous_run_id, page, complete)

    # -- what a model step is sent, and what it returns ------------------------------------------

    def conversation(self) -> Conversation:
        """The conversation by reference, as the next model step is sent it."""
        self._sent = len(self.tail)
        return Conversation(list(self.segments), list(self.tail))

    def history(self) -> list[LogEntry]:
        """Every entry inline, as a run without the by-reference patch sends it."""
        self._sent = len(self.tail)
        return list(self.tail)

    def record_request(self, out: LlmStepOutput) -> None:
        """A model step's header (recorded when its digest changed), context (when it changed)
        and sealed conversation (kept instead of what the step was sent)."""
        digest = out.header_sha256
        if digest is None and out.header is not None:  # an activity that sends it whole
            digest = header_digest(out.header)
        if digest is not None and digest != self.header_sha:
            reason = "initial" if self.header_sha is None else "change"
            if out.header_ref is not None:
                data: dict[str, Any] = {"header": None, "reason": reason}
                self.emit("request/header", data, {"header": out.header_ref})
            else:
                self.emit("request/header", {"header": out.header, "reason": reason})
                self.header = out.header
            self.header_sha = digest
        if out.context != self.context:
            self.emit("request/context", out.context)
            self.context = out.context
        if out.conversation is not None:
            self.segments = list(out.conversation.segments)
            self.tail = list(out.conversation.tail) + self.tail[self._sent :]

    # -- continue-as-new ------------------------------------------------------------------------

    def carried(self, turn: int, *, by_reference: bool) -> SessionState:
        """The state the next run starts with."""
        if by_reference:
            return SessionState(
                turn=turn,
                log_base=self.size,
                context=self.context,
                parked=self.parked,
                conversation=Conversation(self.segments, self.tail),
                header_sha256=self.header_sha,
            )
        return SessionState(  # what a run without the patch carried: all of it inline
            turn=turn,
            log_base=self.size,
            surface=self.tail,
            header=self.header,
            context=self.context,
            parked=self.parked,
        )
