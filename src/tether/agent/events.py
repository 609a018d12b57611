"""What an agent reports while a turn runs: typed, frozen progress events, and a turn's result.

Owns the one event vocabulary of a turn — the loop emits it (`AgentLoop(on_event=...)`), the
public `Agent` streams it (`agent.run_stream(...)`) and the command line renders it — and the
result of a turn (`RunResult`, with one `ToolCallRecord` per tool call). Does not own running
anything (`tether.agent.loop`, `tether.agent.api`).

A turn's events, in order: per step `StepStarted`, the model's `ReasoningDelta`s and
`TextDelta`s as they stream (`Retrying` when a failed model request is re-issued: the text the
failed attempt streamed is superseded by the next attempt's) and `ResponseComplete` with the
whole response and its token usage, then per tool call
`ToolCallStarted` and `ToolCallFinished` (results in model order; a call the turn's abort kept
from starting gets both, with code `ABORTED_BEFORE_DISPATCH`); a `Notice` (a hook's warning)
at any point. An `Agent` with a context window adds `CompactionStarted` and then
`CompactionFinished` or `CompactionFailed` when it summarises the conversation into a new session
(before a step, or on `Agent.compact()` between turns), and `ToolSlowToStop` when an aborted
call's body has not settled after a while (it ignores its signal; the turn still waits for it).
`Agent.run_stream` ends with `TurnFinished`, carrying the same `RunResult` that `Agent.run`
returns.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from ..core.json import JsonValue
from ..tools.results import ToolExecutionResult, ToolFailure

if TYPE_CHECKING:
    from .loop import TurnOutcome
    from .messages import AssistantMessage, TokenUsage

__all__ = [
    "AgentEvent",
    "CompactionEvent",
    "CompactionFailed",
    "CompactionFinished",
    "CompactionStarted",
    "LoopEvent",
    "Notice",
    "ReasoningDelta",
    "ResponseComplete",
    "Retrying",
    "RunResult",
    "StepStarted",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallRecord",
    "ToolCallStarted",
    "ToolSlowToStop",
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
class ResponseComplete:
    """Step `step`'s model response is complete and recorded: the whole `message` (text,
    reasoning and tool calls, in stream order), its token `usage` (None when the server sent
    none) and how it `stopped` (`stop`, `tool-calls` or `max-tokens`). Its tool calls start
    after this."""

    turn: int
    step: int
    message: AssistantMessage
    usage: TokenUsage | None
    stopped: str


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
    failure without one).

    Durations, in milliseconds: `duration_ms` runs from `ToolCallStarted` to here, so it
    includes the wait for the calls before it (results are recorded in model order);
    `queued_ms` runs from `ToolCallStarted` to the dispatch of the call's body (policy and the
    durable `tool/call` write included) and `ran_ms` from that dispatch to its result (the body
    and its wind-down after an abort). Both are None for a call whose body was never dispatched
    (denied, invalid, aborted before dispatch) and for events read back from a log."""

    call_id: str
    name: str
    code: str | None
    is_error: bool
    duration_ms: float
    result: ToolExecutionResult
    queued_ms: float | None = None
    ran_ms: float | None = None

    @staticmethod
    def of(
        call_id: str,
        name: str,
        result: ToolExecutionResult,
        duration_ms: float,
        *,
        queued_ms: float | None = None,
        ran_ms: float | None = None,
    ) -> ToolCallFinished:
        code = result.code if isinstance(result, ToolFailure) else None
        return ToolCallFinished(
            call_id, name, code, result.is_error, duration_ms, result, queued_ms, ran_ms
        )


@dataclass(frozen=True, slots=True)
class Notice:
    """Something for the person running the agent to see, never sent to the model: a hook's
    warning (its stderr, its `systemMessage`) or why it failed. `source` says who said it
    (`Stop hook "stop.sh"`); `text` is one or more lines."""

    source: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolSlowToStop:
    """The call was aborted `waited_s` seconds ago and its body still runs: it does not watch its
    signal. `where` is what the body waits on (its await chain, outermost frame first). The call
    is still awaited — its `ToolCallFinished` comes when the body settles (the registry's
    `tools/slow-stop`, for the agent's calls and its subagents')."""

    call_id: str
    name: str
    waited_s: float
    where: str


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One tool call of a turn and its outcome: `content` is the text the model read.

    `arguments` is the raw JSON text the model sent; `parsed_arguments` is it parsed (None when
    it is not valid JSON). `code` is None for a success (`ok` says so). The durations are
    `ToolCallFinished`'s: `duration_ms` from the call recorded to its result recorded,
    `queued_ms`/`ran_ms` before and after the body's dispatch (None: never dispatched)."""

    call_id: str
    name: str
    arguments: str
    code: str | None
    is_error: bool
    duration_ms: float
    content: str
    queued_ms: float | None = None
    ran_ms: float | None = None

    @property
    def parsed_arguments(self) -> JsonValue | None:
        """The arguments parsed from JSON; None when the model sent text that is not JSON."""
        try:
            parsed: JsonValue = json.loads(self.arguments)
        except ValueError:
            return None
        return parsed

    @property
    def ok(self) -> bool:
        """True for a successful call (`code` is None and it is not an error)."""
        return not self.is_error


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
    StepStarted
    | TextDelta
    | ReasoningDelta
    | ResponseComplete
    | Retrying
    | ToolCallStarted
    | ToolCallFinished
    | Notice
)
"""What `AgentLoop` emits while a turn runs."""

CompactionEvent: TypeAlias = CompactionStarted | CompactionFinished | CompactionFailed
"""What an `Agent` emits while it compacts its conversation."""

AgentEvent: TypeAlias = LoopEvent | CompactionEvent | ToolSlowToStop | TurnFinished
"""What `Agent.run_stream` yields."""


def result_text(result: ToolExecutionResult) -> str:
    """The text blocks of a tool result's content, joined: what the model read."""
    return "".join(
        str(block.get("text", ""))
        for block in result.content
        if isinstance(block, Mapping) and block.get("type") == "text"
    )
