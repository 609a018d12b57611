"""`tether run --output-format json | stream-json`: Claude Code's headless records on stdout.

Owns `HeadlessReport`, the one renderer of a headless run's machine-readable output, fed with
the agent's events (`tether run`, and `tether run --temporal` through the same calls: `start`,
`__call__` per event, `finish`). The records are Claude Code's (`claude -p --output-format
…`, its Agent SDK's `SDKMessage` types), documented field by field against Claude Code's in
`docs/output-format.md`:

    {"type": "system", "subtype": "init", "session_id", "uuid", "cwd", "model", "tools"
     (Claude Code's names: `Bash`, `Read`, …), "mcp_servers": [{"name", "status"}],
     "permissionMode", "slash_commands", "apiKeySource", "output_style", "agents", …}
    {"type": "assistant", "session_id", "uuid", "parent_tool_use_id": null, "timestamp",
     "message": {"id", "type": "message", "role": "assistant", "model", "content": [thinking,
                 text, tool_use {"id", "name", "input"} blocks], "stop_reason", "stop_sequence",
                 "usage", "context_management"}}
    {"type": "user", "session_id", "uuid", "parent_tool_use_id": null, "timestamp",
     "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id", "content",
                 "is_error"}]}, "tool_use_result" (commands), "tether": {"tool_name", "code",
                 "duration_ms"}}
    {"type": "stream_event", "session_id", "uuid", "parent_tool_use_id": null, "event": {…}}
                 (with `--include-partial-messages`: the Anthropic stream events of each
                 response's text and thinking)
    {"type": "system", "subtype": "tether_retry" | "tether_notice", …}   (tether's own)
    {"type": "result", "subtype": "success" | "error_max_turns" | "error_during_execution",
     "session_id", "uuid", "is_error", "duration_ms", "duration_api_ms" (model requests,
     failed attempts included, waits between them not), "num_turns", "result" (success) |
     "errors" (otherwise), "stop_reason", "total_cost_usd" (from the price table,
     `tether.agent.llm.prices`; null only for a model without a price), "usage", "modelUsage",
     "permission_denials": [{"tool_name", "tool_use_id", "tool_input"}], "terminal_reason",
     "api_error_status", "tether": {"model", "turn", "outcome", "exit_code", "tool_calls"}}

A command that ran past its own timeout is a result the model reads, but here it is an error
with code `TOOL_TIMEOUT`, as a call the timeout policy ended is.
`json` writes only the result, once; `stream-json` writes every record as one line, as it
happens, the result last. Every record carries `session_id`; what only tether has is under
`tether` (or in a `tether_*` subtype), never mixed into Claude Code's fields.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final, Literal, TextIO

from ..agent.events import (
    AgentEvent,
    Notice,
    ReasoningDelta,
    ResponseComplete,
    Retrying,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    result_text,
)
from ..agent.llm.prices import ModelPrice, cost_usd
from ..agent.loop import TurnOutcome
from ..agent.messages import AssistantMessage, ReasoningBlock, TextBlock, TokenUsage, ToolCallBlock
from ..plugins.hooks.names import DEFAULT_TOOL_NAMES, ToolNames
from ..tools.results import TOOL_DENIED, TOOL_TIMEOUT, ToolExecutionResult, ToolSuccess

__all__ = ["CLAUDE_TOOL_NAMES", "OUTPUT_FORMATS", "HeadlessReport", "RunInfo"]

OUTPUT_FORMATS: Final = ("text", "json", "stream-json")

_STOP_REASONS: Final = {"stop": "end_turn", "tool-calls": "tool_use", "max-tokens": "max_tokens"}
_SUBTYPES: Final = {"completed": "success", "max-steps": "error_max_turns"}

CLAUDE_TOOL_NAMES: Final = ToolNames({**DEFAULT_TOOL_NAMES, "Task": "task"})
"""The names the Claude Code formats use (`bash` is `Bash`; unmapped names unchanged)."""


@dataclass(frozen=True, slots=True)
class RunInfo:
    """What the `system`/`init` record says about the run."""

    session_id: str
    model: str
    cwd: str
    tools: Sequence[str] = ()
    permission_mode: str = "default"
    mcp_servers: Sequence[tuple[str, str]] = ()  # (name, status)
    slash_commands: Sequence[str] = ()
    agents: Sequence[str] = ()
    api_key_source: str = "none"  # where the model's key comes from: its variable, or "none"
    additional_directories: Sequence[str] = ()
    price: ModelPrice | None = None  # None: the model's price is unknown (tether.agent.llm.prices)
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)  # other models' (set_model)
    context_window: int | None = None
    max_output_tokens: int | None = None
    names: ToolNames = CLAUDE_TOOL_NAMES


def _input(raw: str) -> object:
    try:
        return json.loads(raw) if raw.strip() else {}
    except ValueError:
        return raw


def _usage(usage: TokenUsage | None) -> dict[str, int]:
    """Anthropic's usage: `input_tokens` is the uncached input, as tether counts it."""
    if usage is None:
        return _usage(TokenUsage(0, 0))
    return {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens or 0,
        "cache_read_input_tokens": usage.cache_read_tokens or 0,
        "output_tokens": usage.output_tokens,
    }


def _content(message: AssistantMessage, names: ToolNames) -> list[dict[str, object]]:
    blocks: list[dict[str, object]] = []
    for block in message.content:
        if isinstance(block, ReasoningBlock):
            blocks.append({"type": "thinking", "thinking": block.text, "signature": ""})
        elif isinstance(block, TextBlock):
            blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ToolCallBlock):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block.id,
                    "name": names.claude_name(block.name),
                    "input": _input(block.arguments),
                }
            )
    return blocks


def _timestamp() -> str:
    """Claude Code's record time: ISO 8601 UTC with milliseconds and a `Z`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _value(result: ToolExecutionResult) -> Mapping[str, object] | None:
    return (
        result.value if isinstance(result, ToolSuccess) and isinstance(result.value, dict) else None
    )


def _failure(
    code: str | None, is_error: bool, result: ToolExecutionResult
) -> tuple[bool, str | None]:
    """`(is_error, code)` as the Claude Code formats report them: a command that ran past its own
    timeout is a result the model reads (not an error), but it did not finish: `TOOL_TIMEOUT`."""
    value = _value(result)
    if code is None and value is not None and value.get("timed_out") is True:
        return True, TOOL_TIMEOUT
    return is_error, code


def _tool_use_result(result: ToolExecutionResult) -> dict[str, object] | None:
    """Claude Code's `tool_use_result` for a command (its `Bash` result), else None."""
    value = _value(result)
    if value is None or value.get("kind") != "foreground":
        return None
    stdout, stderr = value.get("stdout"), value.get("stderr")
    return {
        "stdout": stdout.get("text", "") if isinstance(stdout, dict) else "",
        "stderr": stderr.get("text", "") if isinstance(stderr, dict) else "",
        "interrupted": bool(value.get("timed_out")),
        "isImage": False,
        "noOutputExpected": False,
    }


@dataclass(slots=True)
class _Partial:
    """The Anthropic stream events of one response (`--include-partial-messages`)."""

    message_id: str
    index: int = -1
    kind: str | None = None  # the open block's type: "text" | "thinking"

    def delta(self, kind: str, text: str) -> list[dict[str, object]]:
        events: list[dict[str, object]] = []
        if kind != self.kind:
            events += self.close()
            self.index += 1
            self.kind = kind
            empty = {"type": kind, kind: ""} if kind == "thinking" else {"type": "text", "text": ""}
            events.append(
                {"type": "content_block_start", "index": self.index, "content_block": empty}
            )
        key = "thinking" if kind == "thinking" else "text"
        delta = {"type": f"{kind}_delta", key: text}
        events.append({"type": "content_block_delta", "index": self.index, "delta": delta})
        return events

    def close(self) -> list[dict[str, object]]:
        if self.kind is None:
            return []
        self.kind = None
        return [{"type": "content_block_stop", "index": self.index}]


@dataclass(slots=True)
class _Call:
    id: str
    name: str
    input: object
    is_error: bool | None = None
    code: str | None = None
    duration_ms: int | None = None

    def record(self) -> dict[str, object]:
        return {
            "id": self.id,
            "name": self.name,
            "input": self.input,
            "is_error": self.is_error,
            "code": self.code,
            "duration_ms": self.duration_ms,
        }


@dataclass
class HeadlessReport:
    """One headless run's records (see the module note). `out` receives the lines;
    `partial_messages` adds the `stream_event` records (stream-json only)."""

    format: Literal["json", "stream-json"]
    info: RunInfo
    out: TextIO
    partial_messages: bool = False
    clock: Callable[[], float] = time.monotonic
    _began: float = field(init=False)
    _api_ms: float = field(init=False, default=0.0)
    _step_began: float | None = field(init=False, default=None)
    _steps: int = field(init=False, default=0)
    _turn: int = field(init=False, default=0)
    _usage: dict[str, int] = field(init=False, default_factory=lambda: _usage(None))
    _calls: dict[str, _Call] = field(init=False, default_factory=dict)
    _partial: _Partial | None = field(init=False, default=None)
    _models: dict[str, TokenUsage] = field(init=False, default_factory=dict)
    _stop_reason: str | None = field(init=False, default=None)
    model: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self._began = self.clock()
        self.model = self.info.model

    @property
    def input_tokens(self) -> int:
        """The input tokens (cached included) of the responses so far."""
        usage = self._usage
        return usage["input_tokens"] + usage["cache_read_input_tokens"]

    # -- records -------------------------------------------------------------------------------

    def _emit(self, record: Mapping[str, object]) -> None:
        if self.format == "stream-json":
            self._write(record)

    def _write(self, record: Mapping[str, object]) -> None:
        self.out.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.out.flush()

    def _record(self, type: str, **fields: object) -> dict[str, object]:
        return {
            "type": type,
            **fields,
            "session_id": self.info.session_id,
            "uuid": str(uuid.uuid4()),
        }

    def _message_id(self, step: int) -> str:
        return f"msg_{self.info.session_id}_{self._turn}_{step}"

    def _stream(self, events: list[dict[str, object]]) -> None:
        if self.partial_messages:
            for event in events:
                self._emit(self._record("stream_event", event=event, parent_tool_use_id=None))

    # -- the run -------------------------------------------------------------------------------

    def start(self) -> None:
        """The `system`/`init` record (stream-json)."""
        info = self.info
        self._emit(
            self._record(
                "system",
                subtype="init",
                cwd=info.cwd,
                model=info.model or None,
                tools=[info.names.claude_name(name) for name in info.tools],
                mcp_servers=[{"name": name, "status": status} for name, status in info.mcp_servers],
                permissionMode=info.permission_mode,
                slash_commands=list(info.slash_commands),
                terminal_slash_commands=[],
                apiKeySource=info.api_key_source,
                output_style="default",
                agents=list(info.agents),
                skills=[],
                plugins=[],
                capabilities=[],
                analytics_disabled=True,
                product_feedback_disabled=True,
                original_cwd=info.cwd,
                additional_directories=list(info.additional_directories),
            )
        )

    def __call__(self, event: AgentEvent) -> None:
        match event:
            case StepStarted(turn=turn, step=step):
                self._api_time()
                self._turn, self._steps = turn, self._steps + 1
                self._step_began = self.clock()
                self._partial = _Partial(self._message_id(step))
                self._stream([self._message_start()])
            case TextDelta(text=text):
                if self._partial is not None:
                    self._stream(self._partial.delta("text", text))
            case ReasoningDelta(text=text):
                if self._partial is not None:
                    self._stream(self._partial.delta("thinking", text))
            case Retrying():
                self._retrying(event)
            case ResponseComplete():
                self._response(event)
            case ToolCallStarted(call_id=call_id, name=name, arguments=arguments):
                self._calls[call_id] = _Call(call_id, name, _input(arguments))
            case ToolCallFinished():
                self._finished(event)
            case Notice(source=source, text=text):
                self._emit(
                    self._record("system", subtype="tether_notice", source=source, text=text)
                )

    def _message_start(self) -> dict[str, object]:
        message: dict[str, object] = {
            "id": self._partial.message_id if self._partial else "",
            "type": "message",
            "role": "assistant",
            "model": self.info.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": _usage(None),
        }
        return {"type": "message_start", "message": message}

    def _retrying(self, event: Retrying) -> None:
        self._api_time()  # the failed attempt's time; the wait before the next one is not
        self._step_began = self.clock() + event.delay_ms / 1000
        if self._partial is not None:  # what the failed attempt streamed is superseded
            self._stream([*self._partial.close(), {"type": "message_stop"}])
            self._partial = _Partial(self._partial.message_id)
        self._emit(
            self._record(
                "system",
                subtype="tether_retry",
                retry=event.attempt,
                max_retries=event.max_retries,
                delay_ms=round(event.delay_ms),
                code=event.code,
                message=event.reason,
            )
        )
        if self._partial is not None:
            self._stream([self._message_start()])

    def _api_time(self) -> None:
        """Add the open model request's time to `duration_api_ms`."""
        if self._step_began is not None:
            self._api_ms += max(0.0, self.clock() - self._step_began)
            self._step_began = None

    def _response(self, event: ResponseComplete) -> None:
        self._api_time()
        usage = _usage(event.usage)
        for key, value in usage.items():
            self._usage[key] += value
        if event.usage is not None:
            self._models[self.model] = _add(self._models.get(self.model), event.usage)
        stop_reason = _STOP_REASONS.get(event.stopped, event.stopped)
        self._stop_reason = stop_reason
        if self._partial is not None:
            self._stream(
                [
                    *self._partial.close(),
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                        "usage": {"output_tokens": usage["output_tokens"]},
                    },
                    {"type": "message_stop"},
                ]
            )
            self._partial = None
        message = {
            "id": self._message_id(event.step),
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": _content(event.message, self.info.names),
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
            "context_management": None,
        }
        self._emit(
            self._record(
                "assistant", message=message, parent_tool_use_id=None, timestamp=_timestamp()
            )
        )

    def _finished(self, event: ToolCallFinished) -> None:
        call = self._calls.setdefault(event.call_id, _Call(event.call_id, event.name, {}))
        is_error, code = _failure(event.code, event.is_error, event.result)
        call.is_error, call.code = is_error, code
        call.duration_ms = round(event.duration_ms)
        block = {
            "type": "tool_result",
            "tool_use_id": event.call_id,
            "content": result_text(event.result),
            "is_error": is_error,
        }
        extra: dict[str, object] = {}
        tool_use_result = _tool_use_result(event.result)
        if tool_use_result is not None:
            extra["tool_use_result"] = tool_use_result
        self._emit(
            self._record(
                "user",
                message={"role": "user", "content": [block]},
                parent_tool_use_id=None,
                timestamp=_timestamp(),
                **extra,
                tether={
                    "tool_name": event.name,
                    "code": code,
                    "duration_ms": call.duration_ms,
                },
            )
        )

    # -- the result ----------------------------------------------------------------------------

    def finish(self, outcome: TurnOutcome | None, *, exit_code: int) -> dict[str, object]:
        """Write the `result` record (both formats) and return it. `outcome` None: the run was
        cancelled before its turn ended (Ctrl-C twice)."""
        reason: Mapping[str, object] = (
            {"kind": "aborted", "reason": {"kind": "interrupted"}}
            if outcome is None
            else outcome.reason
        )
        kind = str(reason.get("kind"))
        subtype = _SUBTYPES.get(kind, "error_during_execution")
        answer: dict[str, object] = (
            {"result": "" if outcome is None else outcome.text}
            if subtype == "success"
            else {"errors": [_error_text(reason)]}
        )
        self._api_time()
        names = self.info.names
        denials = [
            {"tool_name": names.claude_name(c.name), "tool_use_id": c.id, "tool_input": c.input}
            for c in self._calls.values()
            if c.code == TOOL_DENIED
        ]
        record = self._record(
            "result",
            subtype=subtype,
            is_error=exit_code != 0,
            duration_ms=round((self.clock() - self._began) * 1000),
            duration_api_ms=round(self._api_ms * 1000),
            num_turns=self._steps,
            **answer,
            stop_reason=self._stop_reason,
            total_cost_usd=self._cost(),
            usage={**self._usage, "server_tool_use": {"web_search_requests": 0}},
            modelUsage=self._model_usage(),
            permission_denials=denials,
            terminal_reason=_TERMINAL.get(kind, kind),
            api_error_status=_status(reason),
            tether={
                "model": self.info.model,
                "turn": self._turn if outcome is None else outcome.turn,
                "outcome": dict(reason),
                "exit_code": exit_code,
                "tool_calls": [c.record() for c in self._calls.values()],
            },
        )
        self._write(record)
        return record

    def _cost(self) -> float | None:
        """The run's cost: None when any model it used has no price (or none answered and this
        model has none)."""
        if not self._models:
            return 0.0 if self.info.price is not None else None
        costs = [cost_usd(usage, self._price(model)) for model, usage in self._models.items()]
        return None if None in costs else sum(c for c in costs if c is not None)

    def _price(self, model: str) -> ModelPrice | None:
        return self.info.price if model == self.info.model else self.info.prices.get(model)

    def _model_usage(self) -> dict[str, dict[str, object]]:
        """Claude Code's `modelUsage`: per model, its tokens and cost."""
        return {
            model: {
                "inputTokens": usage.input_tokens,
                "outputTokens": usage.output_tokens,
                "cacheReadInputTokens": usage.cache_read_tokens or 0,
                "cacheCreationInputTokens": usage.cache_write_tokens or 0,
                "webSearchRequests": 0,
                "costUSD": cost_usd(usage, self._price(model)),
                "contextWindow": self.info.context_window,
                "maxOutputTokens": self.info.max_output_tokens,
                "thinkingTokens": usage.reasoning_tokens or 0,
            }
            for model, usage in self._models.items()
        }


_TERMINAL: Final = {"completed": "completed", "max-steps": "max_turns", "aborted": "aborted"}


def _status(reason: Mapping[str, object]) -> int | None:
    """The HTTP status of the model error that ended the turn, if any."""
    error = reason.get("error")
    status = error.get("status") if isinstance(error, Mapping) else None
    return status if isinstance(status, int) else None


def _add(total: TokenUsage | None, usage: TokenUsage) -> TokenUsage:
    if total is None:
        return usage
    return TokenUsage(
        total.input_tokens + usage.input_tokens,
        total.output_tokens + usage.output_tokens,
        (total.cache_read_tokens or 0) + (usage.cache_read_tokens or 0),
        (total.cache_write_tokens or 0) + (usage.cache_write_tokens or 0),
        (total.reasoning_tokens or 0) + (usage.reasoning_tokens or 0),
    )


def _error_text(reason: Mapping[str, object]) -> str:
    """One line saying why the turn did not complete."""
    kind = str(reason.get("kind"))
    error = reason.get("error")
    if isinstance(error, Mapping):
        return f"{error.get('code')}: {error.get('message')}"
    if kind == "blocked":
        return f"BLOCKED: {reason.get('message')}"
    if kind == "max-steps":
        return f"MAX_STEPS: the turn ended after {reason.get('steps')} steps"
    if kind == "max-tokens":
        return "MAX_TOKENS: the model's answer was cut at its token limit"
    if kind == "aborted":
        return "ABORTED: the turn was aborted"
    return f"{kind.upper()}: the turn ended before completing"
