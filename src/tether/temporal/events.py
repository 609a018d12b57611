"""A Temporal turn in the agent's event vocabulary: log entries in, `LoopEvent`s out, so `tether
run --temporal` renders and reports a turn with the same renderer and the same JSON as a local
run (`tether.cli.render`, `tether.cli.output`).

Owns the mapping (one `EntryEvents` per turn, fed the turn's entries in log order, each already
resolved from the payload store):

    step/start          StepStarted
    assistant/message   TextDelta (the message's text, whole: the workflow sees no chunks)
    llm/retry           Retrying
    tool/call           ToolCallStarted
    tool/result         ToolCallFinished (the result rebuilt from the record; `duration_ms`
                        from the two entries' workflow times)

Every other entry (turn and step bounds, request header and context, approvals) maps to
nothing. Not here: following the entries while the turn runs (`tether.temporal.frontend`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..agent.events import (
    LoopEvent,
    Retrying,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from ..core.json import JsonValue
from ..tools.results import (
    ErrorDetail,
    ErrorInfo,
    ToolExecutionResult,
    ToolFailure,
    ToolSuccess,
    freeze_content,
)

__all__ = ["EntryEvents", "result_of", "usage_of"]


def _text(blocks: object) -> str:
    if not isinstance(blocks, list):
        return ""
    return "".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"
    )


def result_of(record: Mapping[str, Any]) -> tuple[str, ToolExecutionResult]:
    """The call id and the result of a `tool/result` record."""
    block = record["message"]["content"][0]
    content = freeze_content(block.get("content") or [])
    meta: JsonValue | None = record.get("meta")
    if not block.get("is_error"):
        return str(block["call_id"]), ToolSuccess(value=None, content=content, meta=meta)
    error = record.get("error")
    info = None
    if isinstance(error, Mapping) and error.get("code"):
        info = ErrorInfo(str(error.get("name") or "Error"), str(error["code"]))
    message = _text(block.get("content")).removeprefix("Error: ")
    return str(block["call_id"]), ToolFailure(ErrorDetail(message, info), content, meta=meta)


def usage_of(entries: list[tuple[str, Mapping[str, Any]]]) -> dict[str, int]:
    """Input and output tokens of the model responses among `(type, data)` entries."""
    totals = {"input_tokens": 0, "output_tokens": 0}
    for kind, data in entries:
        usage = data.get("usage") if kind == "assistant/message" else None
        if isinstance(usage, Mapping):
            for key in totals:
                value = usage.get(key)
                totals[key] += value if isinstance(value, int) else 0
    return totals


class EntryEvents:
    """One turn's entries as events (see the module note)."""

    def __init__(self) -> None:
        self._calls: dict[str, tuple[str, int | None]] = {}

    def __call__(self, kind: str, data: Mapping[str, Any], at: int | None) -> list[LoopEvent]:
        match kind:
            case "step/start":
                return [StepStarted(int(data["turn"]), int(data["step"]))]
            case "assistant/message":
                text = _text(data.get("message", {}).get("content"))
                return [TextDelta(text)] if text else []
            case "llm/retry":
                failure = data.get("failure") or {}
                return [
                    Retrying(
                        attempt=int(data.get("retry", 0)),
                        max_retries=None,
                        delay_ms=float(data.get("delay_ms", 0)),
                        reason=str(failure.get("message", "")),
                        code=str(failure.get("code", "")),
                    )
                ]
            case "tool/call":
                call_id, name = str(data["call_id"]), str(data["name"])
                self._calls[call_id] = (name, at)
                return [ToolCallStarted(call_id, name, str(data.get("arguments", "")))]
            case "tool/result":
                call_id, result = result_of(data)
                name, started = self._calls.pop(call_id, ("?", None))
                elapsed = 0.0 if started is None or at is None else float(at - started)
                return [ToolCallFinished.of(call_id, name, result, elapsed)]
        return []
