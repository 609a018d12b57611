"""`tether run --output-format json|stream-json`: machine-readable results on stdout.

Owns the JSON shapes (documented in `docs/output-format.md`). `RunReport` feeds on the agent's
events and builds the result object:

    {"type": "result", "result": <answer>, "is_error": bool, "session_id", "model", "turn",
     "outcome": <the turn/end reason: {"kind": "completed" | "aborted" | "blocked" | "error" |
                 "max-steps" | "max-tokens", ...}>,
     "exit_code": int,
     "usage": {"input_tokens", "output_tokens"},
     "tool_calls": [{"id", "name", "input", "is_error", "code", "duration_ms"}]}

`json` prints only that object, once, at the end. `stream-json` prints one object per line as
things happen, the same result object last:

    {"type": "start", "session_id", "model", "cwd"}
    {"type": "step", "turn", "step"}
    {"type": "text", "text"}                      a streamed text delta
    {"type": "retry", "retry", "max_retries", "delay_ms", "code", "message"}
    {"type": "tool_call", "id", "name", "input"}
    {"type": "tool_result", "id", "name", "is_error", "code", "duration_ms", "content"}
    {"type": "result", ...}
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import TextIO

from ..agent.events import (
    AgentEvent,
    Retrying,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from ..agent.loop import TurnOutcome
from ..tools.results import ToolFailure

__all__ = ["OUTPUT_FORMATS", "RunReport"]

OUTPUT_FORMATS = ("text", "json", "stream-json")


def _input(raw: str) -> object:
    try:
        value = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return raw
    return value


def _text(blocks: Sequence[Mapping[str, object]]) -> str:
    return "".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"
    )


class RunReport:
    """Collects a run's tool calls; with `stream` set, writes each event as a JSON line."""

    def __init__(self, *, stream: TextIO | None = None) -> None:
        self._stream = stream
        self._calls: dict[str, dict[str, object]] = {}
        self._turn = 0

    def emit(self, record: Mapping[str, object]) -> None:
        """Write one JSON line (stream-json only)."""
        if self._stream is not None:
            self._stream.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._stream.flush()

    def __call__(self, event: AgentEvent) -> None:
        match event:
            case StepStarted(turn=turn, step=step):
                self._turn = turn
                self.emit({"type": "step", "turn": turn, "step": step})
            case TextDelta(text=text):
                self.emit({"type": "text", "text": text})
            case Retrying():
                self.emit(
                    {
                        "type": "retry",
                        "retry": event.attempt,
                        "max_retries": event.max_retries,
                        "delay_ms": round(event.delay_ms),
                        "code": event.code,
                        "message": event.reason,
                    }
                )
            case ToolCallStarted(call_id=call_id, name=name, arguments=arguments):
                call: dict[str, object] = {"id": call_id, "name": name, "input": _input(arguments)}
                self._calls[call_id] = call
                self.emit({"type": "tool_call", **call})
            case ToolCallFinished(call_id=call_id, name=name, result=result, duration_ms=ms):
                code = result.code if isinstance(result, ToolFailure) else None
                outcome = {"is_error": result.is_error, "code": code, "duration_ms": round(ms)}
                self._calls.setdefault(call_id, {"id": call_id, "name": name}).update(outcome)
                self.emit(
                    {
                        "type": "tool_result",
                        "id": call_id,
                        "name": name,
                        **outcome,
                        "content": _text(result.content),
                    }
                )

    def result(
        self,
        outcome: TurnOutcome | None,
        *,
        session_id: str,
        model: str,
        exit_code: int,
        usage: Mapping[str, int],
    ) -> dict[str, object]:
        """The result object (`outcome` None: the run was cancelled before the turn ended)."""
        reason: Mapping[str, object] = (
            {"kind": "aborted", "reason": {"kind": "interrupted"}}
            if outcome is None
            else outcome.reason
        )
        return {
            "type": "result",
            "result": "" if outcome is None else outcome.text,
            "is_error": exit_code != 0,
            "session_id": session_id,
            "model": model,
            "turn": self._turn if outcome is None else outcome.turn,
            "outcome": dict(reason),
            "exit_code": exit_code,
            "usage": dict(usage),
            "tool_calls": list(self._calls.values()),
        }

    def print_result(self, record: Mapping[str, object], out: TextIO = sys.stdout) -> None:
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        out.flush()
