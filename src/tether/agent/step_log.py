"""The agent loop's step recorder: how a step's tool calls reach the session log and the
front end.

Owns `StepLog`, the scheduler's `StepRecorder` for one step of one turn: each call's `tool/call`
(durable) and `ToolCallStarted`, its `tool/result` (with `changed_arguments` when an approver or
a hook changed the model's input: `ChangedArguments`) and `ToolCallFinished` with how long it
waited and ran (`DispatchMarks`). Does not own the scheduling (`tether.agent.scheduler`) nor the
log's format (`tether.agent.session`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.json import JsonValue
from ..tools.results import ToolExecutionResult
from .events import LoopEvent, ToolCallFinished, ToolCallStarted
from .scheduler import ChangedArguments, DispatchMarks, StepRecorder, ToolCallRequest
from .session import SessionLog

__all__ = ["StepLog"]


@dataclass(slots=True)
class StepLog(StepRecorder, DispatchMarks, ChangedArguments):
    """See the module note."""

    session: SessionLog
    turn: int
    step: int
    emit: Callable[[LoopEvent], None]
    started: dict[str, float] = field(default_factory=dict)
    ran: dict[str, tuple[float, float | None]] = field(default_factory=dict)
    """call id -> (dispatched at, settled at or None)."""
    changed: dict[str, JsonValue] = field(default_factory=dict)
    """call id -> the arguments it went on with, when an approver or a hook changed them."""

    async def tool_call(self, call: ToolCallRequest) -> int:
        event = self.session.tool_call(self.turn, self.step, call.id, call.name, call.arguments)
        self.started[call.id] = time.monotonic()
        self.emit(ToolCallStarted(call.id, call.name, call.arguments))
        return event.seq

    async def durable(self) -> None:
        await self.session.durable()

    def dispatched(self, call: ToolCallRequest) -> None:
        self.ran[call.id] = (time.monotonic(), None)

    def settled(self, call: ToolCallRequest) -> None:
        began = self.ran.get(call.id)
        if began is not None:
            self.ran[call.id] = (began[0], time.monotonic())

    def arguments_changed(self, call: ToolCallRequest, arguments: JsonValue) -> None:
        self.changed[call.id] = arguments

    async def tool_result(
        self, call: ToolCallRequest, call_seq: int, result: ToolExecutionResult
    ) -> None:
        try:
            self.session.tool_outcome(
                self.turn,
                self.step,
                call.id,
                result,
                call_seq=call_seq,
                changed_arguments=self.changed.pop(call.id, None),
            )
        finally:  # a result the log refused (and holds) still finished
            now = time.monotonic()
            began = self.started.pop(call.id, now)
            duration_ms = (now - began) * 1000
            queued_ms = ran_ms = None
            marks = self.ran.pop(call.id, None)
            if marks is not None:
                dispatched, settled = marks
                queued_ms = (dispatched - began) * 1000
                ran_ms = ((now if settled is None else settled) - dispatched) * 1000
            self.emit(
                ToolCallFinished.of(
                    call.id, call.name, result, duration_ms, queued_ms=queued_ms, ran_ms=ran_ms
                )
            )
