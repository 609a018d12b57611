"""What an agent reports while a turn runs: typed, frozen progress events, and a turn's result.

Owns the one event vocabulary of a turn — the loop emits it (`AgentLoop(on_event=...)`), the
public `Agent` streams it (`agent.run_stream(...)`) and the command line renders it — and the
result of a turn (`RunResult`, with one `ToolCallRecord` per tool call). Does not own running
anything (`tether.agent.loop`, `tether.agent.api`).

A turn's events, in order: per step `StepStarted`, the model's `ReasoningDelta`s and
`TextDelta`s as they stream (`Retrying` when a failed model request is re-issued: the text the
failed attempt streamed is superseded by the next attempt's), then per tool call
`ToolCallStarted` and `ToolCallFinished` (results in model order; a call the turn's abort kept
from starting gets both, with code `ABORTED_BEFORE_DISPATCH`). An `Agent` with a context window
adds `CompactionStarted` and then `CompactionFinished` or `CompactionFailed` when it summarises
the conversation into a new session (before a step, or on `Agent.compact()` between turns).
`Agent.run_stream` ends with `TurnFinished`, carrying the same `RunResult` that `Agent.run`
returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from ..tools.results import ToolExecutionResult, ToolFailure

if TYPE_CHECKING:
    from .loop import TurnOutcome

__all__ = [
    "AgentEvent",
    "CompactionEvent",
    "CompactionFailed",
    "CompactionFinished",
    "CompactionStarted",
    "LoopEvent",
    "ReasoningDelta",
    "Retrying",
    "RunResult",
    "StepStarted",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallRecord",
    "ToolCallStarted",
    "TurnFinished",
    "result_text",
]


@dataclass(frozen=True, slots=True)
class StepStarted:
    """Step `step` (one model request and its tool calls) of turn `turn` begins."""

    turn: int
    step: int


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the model's answer, as it streams."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning, as it streams (models that expose it)."""

    text: str


@dataclass(frozen=True, slots=True)
class Retrying:
    """A model request failed and is re-issued after `delay_ms`: retry number `attempt`
    (1-based) of `max_retries` (None: the policy retries without limit). `reason` is the
    failure's message, `code` its code (`RATE_LIMIT`, `SERVER`, ...)."""

    attempt: int
    max_retries: int | None
    delay_ms: float
    reason: str
    code: str


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """The model's tool call `call_id` is recorded and about to run; `arguments` is the raw
    JSON text the model sent."""

    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    """The call's one result is recorded. `code` is None for a success, else the failure's code
    (`ABORTED`, `ABORTED_BEFORE_DISPATCH`, `TOOL_TIMEOUT`, `UNKNOWN_TOOL`, ...; None for a
    failure without one); `duration_ms` runs from `ToolCallStarted` to here."""

    call_id: str
    name: str
    code: str | None
    is_error: bool
    duration_ms: float
    result: ToolExecutionResult

    @staticmethod
    def of(
        call_id: str, name: str, result: ToolExecutionResult, duration_ms: float
    ) -> ToolCallFinished:
        code = result.code if isinstance(result, ToolFailure) else None
        return ToolCallFinished(call_id, name, code, result.is_error, duration_ms, result)


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One tool call of a turn and its outcome: `content` is the text the model read."""

    call_id: str
    name: str
    arguments: str
    code: str | None
    is_error: bool
    duration_ms: float
    content: str


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a turn went. `text` is the final answer (the last text the model gave, which may be
    partial when the turn did not complete); `outcome` says how the turn ended (`outcome.kind`:
    `completed`, `aborted`, `error`, `blocked`, `max-steps`, `max-tokens`; `outcome.reason` is
    the durable `turn/end` reason); `tool_calls` are the turn's calls in model order."""

    text: str
    outcome: TurnOutcome
    tool_calls: tuple[ToolCallRecord, ...]
    session_id: str

    @property
    def completed(self) -> bool:
        return self.outcome.completed


@dataclass(frozen=True, slots=True)
class CompactionStarted:
    """The model is asked to summarise the conversation so it can go on in a new session.

    `trigger` is "manual" (`Agent.compact()`) or "auto": the next request (about `tokens`
    tokens, estimated) would not fit `window` minus a reserve, or — `overflow` — the model
    refused the last request as too long for its context window."""

    trigger: Literal["manual", "auto"]
    tokens: int
    window: int | None
    overflow: bool = False


@dataclass(frozen=True, slots=True)
class CompactionFinished:
    """The conversation goes on in `into_session`, which starts from a summary of
    `summary_words` words; `from_session` is kept and linked to it."""

    from_session: str
    into_session: str
    summary_words: int


@dataclass(frozen=True, slots=True)
class CompactionFailed:
    """The summary could not be made (`message` says why: the model failed, answered with no
    text, or the signal aborted); the conversation stays in its session."""

    message: str


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """The last event of `Agent.run_stream`: the turn is over and durably closed."""

    result: RunResult


LoopEvent: TypeAlias = (
    StepStarted | TextDelta | ReasoningDelta | Retrying | ToolCallStarted | ToolCallFinished
)
"""What `AgentLoop` emits while a turn runs."""

CompactionEvent: TypeAlias = CompactionStarted | CompactionFinished | CompactionFailed
"""What an `Agent` emits while it compacts its conversation."""

AgentEvent: TypeAlias = LoopEvent | CompactionEvent | TurnFinished
"""What `Agent.run_stream` yields."""


def result_text(result: ToolExecutionResult) -> str:
    """The text blocks of a tool result's content, joined: what the model read."""
    return "".join(
        str(block.get("text", ""))
        for block in result.content
        if isinstance(block, Mapping) and block.get("type") == "text"
    )
