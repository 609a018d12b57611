"""What a scripted model answers: the script events and the scripted responses.

Owns the events a scripted SSE stream is made of (`text`, `reasoning`, `tool_call`, `finish`,
`usage`, `delay`, `until`, `comment`, `raw`, `hang`, `drop`, `end`, `done`) and the responses
built from them (`reply`, `text_reply`, `tool_calls_reply`, `http_error`). Does not own serving
them (`tether.testing.scripted_model`) nor writing them on the wire (`tether.testing._exchange`).
Import them from `tether.testing.scripted_model` or `tether.testing`, which re-export them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, TypeAlias

__all__ = [
    "ScriptEvent",
    "ScriptedResponse",
    "comment",
    "delay",
    "delta",
    "done",
    "drop",
    "end",
    "finish",
    "hang",
    "http_error",
    "raw",
    "reasoning",
    "reply",
    "text",
    "text_reply",
    "tool_call",
    "tool_calls_reply",
    "until",
    "usage",
]

# -- script events ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Delta:
    delta: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class _Finish:
    reason: str


@dataclass(frozen=True, slots=True)
class _Usage:
    usage: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class _Delay:
    ms: float


@dataclass(frozen=True, slots=True)
class _Comment:
    text: str


@dataclass(frozen=True, slots=True)
class _Raw:
    data: bytes  # written as one body chunk, verbatim


@dataclass(frozen=True, slots=True)
class _Until:
    event: asyncio.Event


@dataclass(frozen=True, slots=True)
class _Hang:
    pass


@dataclass(frozen=True, slots=True)
class _Drop:
    pass


@dataclass(frozen=True, slots=True)
class _End:
    pass


@dataclass(frozen=True, slots=True)
class _Done:
    pass


ScriptEvent: TypeAlias = (
    _Delta | _Finish | _Usage | _Delay | _Until | _Comment | _Raw | _Hang | _Drop | _End | _Done
)
_TERMINAL: Final = (_Hang, _Drop, _End, _Done)


def delta(fields: Mapping[str, object]) -> ScriptEvent:
    """A chunk whose `choices[0].delta` is exactly `fields`."""
    return _Delta(dict(fields))


def text(content: str) -> ScriptEvent:
    """A chunk with `delta.content`."""
    return _Delta({"content": content})


def reasoning(content: str) -> ScriptEvent:
    """A chunk with DeepSeek's `delta.reasoning_content`."""
    return _Delta({"reasoning_content": content})


def tool_call(
    index: int, *, id: str | None = None, name: str | None = None, arguments: str = ""
) -> ScriptEvent:
    """A `delta.tool_calls` fragment; `id`/`name` are usually sent on the first fragment only."""
    call: dict[str, object] = {"index": index}
    if id is not None:
        call["id"] = id
        call["type"] = "function"
    function: dict[str, object] = {"arguments": arguments}
    if name is not None:
        function = {"name": name, **function}
    call["function"] = function
    return _Delta({"tool_calls": [call]})


def finish(reason: str = "stop") -> ScriptEvent:
    """A chunk with `finish_reason` (`stop`, `tool_calls`, `length`, `content_filter`, ...)."""
    return _Finish(reason)


def usage(
    prompt_tokens: int,
    completion_tokens: int,
    *,
    cached_tokens: int | None = None,
    reasoning_tokens: int | None = None,
) -> ScriptEvent:
    """A trailing usage-only chunk (`choices: []`)."""
    body: dict[str, object] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached_tokens is not None:
        body["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    if reasoning_tokens is not None:
        body["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return _Usage(body)


def delay(ms: float) -> ScriptEvent:
    """Wait `ms` before the next event (ends early if the client disconnects)."""
    return _Delay(ms)


def until(event: asyncio.Event) -> ScriptEvent:
    """Send nothing more until `event` is set (ends early if the client disconnects): a stream
    paused mid-answer for as long as a test needs."""
    return _Until(event)


def comment(content: str = "keep-alive") -> ScriptEvent:
    """An SSE comment line (`: keep-alive`)."""
    return _Comment(content)


def raw(data: str | bytes) -> ScriptEvent:
    """Body bytes written verbatim (e.g. `raw("data: {not json\\n\\n")`)."""
    return _Raw(data.encode() if isinstance(data, str) else data)


def hang() -> ScriptEvent:
    """Send nothing more until the client disconnects."""
    return _Hang()


def drop() -> ScriptEvent:
    """Sever the connection mid-body (the chunked body is left incomplete)."""
    return _Drop()


def end() -> ScriptEvent:
    """End the body cleanly without `data: [DONE]`."""
    return _End()


def done() -> ScriptEvent:
    """`data: [DONE]` and the end of the body."""
    return _Done()


# -- responses ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScriptedResponse:
    """One scripted answer: an SSE stream of `events` (status 200) or an error `body`."""

    status: int = 200
    events: tuple[ScriptEvent, ...] = ()
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None


def reply(*events: ScriptEvent, headers: Mapping[str, str] | None = None) -> ScriptedResponse:
    """A 200 SSE response; `done()` is appended unless the last event is terminal."""
    if not events or not isinstance(events[-1], _TERMINAL):
        events = (*events, _Done())
    return ScriptedResponse(200, events, dict(headers or {}))


def text_reply(
    content: str, *, reasoning_text: str | None = None, pieces: int = 1
) -> ScriptedResponse:
    """Text (split into `pieces` deltas), optionally after reasoning; `stop`; usage."""
    events: list[ScriptEvent] = []
    if reasoning_text is not None:
        events.append(reasoning(reasoning_text))
    step = max(1, -(-len(content) // max(pieces, 1)))
    events.extend(text(content[i : i + step]) for i in range(0, len(content), step))
    return reply(*events, finish("stop"), usage(10, max(1, len(content) // 4)))


def tool_calls_reply(*calls: tuple[str, str, str], content: str | None = None) -> ScriptedResponse:
    """Tool calls `(id, name, arguments_json)`, each streamed in two argument fragments."""
    events: list[ScriptEvent] = []
    if content:
        events.append(text(content))
    for index, (call_id, name, arguments) in enumerate(calls):
        half = len(arguments) // 2
        events.append(tool_call(index, id=call_id, name=name, arguments=arguments[:half]))
        events.append(tool_call(index, arguments=arguments[half:]))
    return reply(*events, finish("tool_calls"), usage(10, 5))


def http_error(
    status: int,
    message: str | None = None,
    *,
    headers: Mapping[str, str] | None = None,
    body: str | bytes | None = None,
    code: str | None = None,
) -> ScriptedResponse:
    """A non-2xx answer; by default the OpenAI error shape `{"error": {"message", ...}}`."""
    if body is None:
        error: dict[str, object] = {"message": message or f"scripted HTTP {status}"}
        error["type"] = "scripted_error"
        if code is not None:
            error["code"] = code
        body = json.dumps({"error": error})
    data = body.encode() if isinstance(body, str) else body
    return ScriptedResponse(status, (), dict(headers or {}), data)
