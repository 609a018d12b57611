"""`tether run --output-format json | stream-json`: Claude Code's headless records on stdout.

Owns `HeadlessReport`, the one renderer of a headless run's machine-readable output, fed with
the agent's events (`tether run`, and `tether run --temporal` through the same calls: `start`,
`__call__` per event, `finish`). The records are Claude Code's (`claude -p --output-format
…`, its Agent SDK's `SDKMessage` types), documented field by field against Claude Code's in
`docs/output-format.md`:

    {"type": "system", "subtype": "init", "session_id", "uuid", "cwd", "model", "tools",
     "mcp_servers": [{"name", "status"}], "permissionMode", "slash_commands", "output_style"}
    {"type": "assistant", "session_id", "uuid", "parent_tool_use_id": null,
     "message": {"id", "type": "message", "role": "assistant", "model", "content": [thinking,
                 text, tool_use {"id", "name", "input"} blocks], "stop_reason", "stop_sequence",
                 "usage"}}
    {"type": "user", "session_id", "uuid", "parent_tool_use_id": null,
     "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id", "content",
                 "is_error"}]}, "tether": {"code", "duration_ms"}}
    {"type": "stream_event", "session_id", "uuid", "parent_tool_use_id": null, "event": {…}}
                 (with `--include-partial-messages`: the Anthropic stream events of each
                 response's text and thinking)
    {"type": "system", "subtype": "tether_retry" | "tether_notice", …}   (tether's own)
    {"type": "result", "subtype": "success" | "error_max_turns" | "error_during_execution",
     "session_id", "uuid", "is_error", "duration_ms", "duration_api_ms", "num_turns", "result"
     (success) | "errors" (otherwise), "total_cost_usd" (null: tether does not know prices),
     "usage", "permission_denials": [{"tool_name", "tool_use_id", "tool_input"}],
     "tether": {"model", "turn", "outcome", "exit_code", "tool_calls"}}

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
from ..agent.loop import TurnOutcome
from ..agent.messages import AssistantMessage, ReasoningBlock, TextBlock, TokenUsage, ToolCallBlock
from ..tools.results import TOOL_DENIED

__all__ = ["OUTPUT_FORMATS", "HeadlessReport", "RunInfo"]

OUTPUT_FORMATS: Final = ("text", "json", "stream-json")

_STOP_REASONS: Final = {"stop": "end_turn", "tool-calls": "tool_use", "max-tokens": "max_tokens"}
_SUBTYPES: Final = {"completed": "success", "max-steps": "error_max_turns"}


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


def _content(message: AssistantMessage) -> list[dict[str, object]]:
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
                    "name": block.name,
                    "input": _input(block.arguments),
                }
            )
    return blocks


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

    def __post_init__(self) -> None:
        self._began = self.clock()

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
                tools=list(info.tools),
                mcp_servers=[{"name": name, "status": status} for name, status in info.mcp_servers],
                permissionMode=info.permission_mode,
                slash_commands=list(info.slash_commands),
                output_style="default",
            )
        )

    def __call__(self, event: AgentEvent) -> None:
        match event:
            case StepStarted(turn=turn, step=step):
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

    def _response(self, event: ResponseComplete) -> None:
        if self._step_began is not None:
            self._api_ms += self.clock() - self._step_began
            self._step_began = None
        usage = _usage(event.usage)
        for key, value in usage.items():
            self._usage[key] += value
        stop_reason = _STOP_REASONS.get(event.stopped, event.stopped)
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
            "model": self.info.model,
            "content": _content(event.message),
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }
        self._emit(self._record("assistant", message=message, parent_tool_use_id=None))

    def _finished(self, event: ToolCallFinished) -> None:
        call = self._calls.setdefault(event.call_id, _Call(event.call_id, event.name, {}))
        call.is_error, call.code = event.is_error, event.code
        call.duration_ms = round(event.duration_ms)
        block = {
            "type": "tool_result",
            "tool_use_id": event.call_id,
            "content": result_text(event.result),
            "is_error": event.is_error,
        }
        self._emit(
            self._record(
                "user",
                message={"role": "user", "content": [block]},
                parent_tool_use_id=None,
                tether={
                    "tool_name": event.name,
                    "code": event.code,
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
        denials = [
            {"tool_name": c.name, "tool_use_id": c.id, "tool_input": c.input}
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
            total_cost_usd=None,
            usage=dict(self._usage),
            permission_denials=denials,
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
