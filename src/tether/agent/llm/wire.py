"""The OpenAI chat-completions wire format: request bodies out, stream chunks in (spec §9.8).

Owns: serialising an `LlmRequest` into a `POST /chat/completions` body (every string UTF-8
encodable: a lone surrogate, which a tool result or a model's own escape can carry, is sent as
the text `\\ud800` instead of failing every attempt to encode the request), translating streamed
`chat.completion.chunk` payloads into tether stream chunks (`ChunkTranslator`), and classifying
provider error texts (context overflow, quota). Pure functions and one small state machine; no
I/O (`tether.agent.llm.openai` does that).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Final

from ...core.json import JsonValue, NotLosslessJson, snapshot, thaw
from ...tools.results import ContentBlock, UserMessage
from ..messages import (
    AssistantBlock,
    AssistantMessage,
    BlockEnd,
    BlockStart,
    BlockType,
    Finish,
    LlmFailure,
    Message,
    ReasoningBlock,
    ReasoningDelta,
    StreamChunk,
    TextBlock,
    TextDelta,
    TokenUsage,
    ToolCallBlock,
    ToolCallDelta,
    UsageChunk,
)
from .config import LlmRoute
from .errors import LlmError
from .transport import LlmRequest

__all__ = [
    "ChunkTranslator",
    "build_body",
    "error_text",
    "is_context_overflow",
    "is_quota",
    "wire_messages",
]

NO_OUTPUT: Final = "(no output)"


@functools.cache
def _context() -> re.Pattern[str]:
    return re.compile(
        r"context[ _-]?(length|window)[ _-]?(exceeded|overflow)"
        r"|context[ _-]?limit[ _-]?exceeded"
        r"|max(imum)?[ _-]((allowed|supported)[ _-])?context[ _-]?(length|window)"
        r"|(request|prompt|input|messages?) (is |are )?too (large|long) for (this|the) model"
        r"|(input|prompt|request|messages?)\b.{0,40}\b(exceeds|overflows|is larger than)\b.{0,40}"
        r"\bcontext[ _-]?(length|window)",
        re.IGNORECASE,
    )


@functools.cache
def _quota() -> re.Pattern[str]:
    return re.compile(
        r"insufficient[ _-]?(quota|balance|credits?)"
        r"|(quota|usage limit)[ _-]?(exceeded|exhausted|reached)"
        r"|exceed(ed|s)? (your |the )?(current )?quota"
        r"|(balance|credits?) (exhausted|depleted)"
        r"|out of (credits|budget)",
        re.IGNORECASE,
    )


def is_context_overflow(text: str) -> bool:
    """Whether a provider error text says the prompt does not fit the context window."""
    return _context().search(text) is not None


def is_quota(text: str) -> bool:
    """Whether a provider error text says the account is out of quota or balance."""
    return _quota().search(text) is not None


# -- request ------------------------------------------------------------------------------------


def build_body(request: LlmRequest, route: LlmRoute) -> dict[str, JsonValue]:
    """The JSON body; unset options are omitted, never `null`.

    Raises LlmError(`UNSUPPORTED_CONTENT`) for an image block.
    """
    body: dict[str, JsonValue] = {
        "model": request.model or route.model,
        "messages": wire_messages(request.system, request.messages, route.replay_reasoning),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = [_tool(tool) for tool in request.tools]
    max_tokens = request.max_tokens if request.max_tokens is not None else route.max_tokens
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    temperature = request.temperature if request.temperature is not None else route.temperature
    if temperature is not None:
        body["temperature"] = temperature
    if request.stop:
        body["stop"] = list(request.stop)
    if request.reasoning_effort is not None:
        body["reasoning_effort"] = request.reasoning_effort
    for extra in (route.extra_body, request.extra_body):
        for key, value in extra.items():
            body[key] = _json(value, f"extra_body.{key}")
    return {key: _utf8(value) for key, value in body.items()}


def _utf8_text(text: str) -> str:
    """`text` with every lone surrogate written as a `\\udXXX` escape (UTF-8 cannot carry it)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _utf8(value: JsonValue) -> JsonValue:
    """`value` with `_utf8_text` applied to every string in it, keys included."""
    if isinstance(value, str):
        return _utf8_text(value)
    if isinstance(value, list):
        return [_utf8(item) for item in value]
    if isinstance(value, dict):
        return {_utf8_text(key): _utf8(item) for key, item in value.items()}
    return value


def _json(value: object, where: str) -> JsonValue:
    try:
        return thaw(snapshot(value))
    except NotLosslessJson as error:
        raise LlmError(f"{where} is not JSON: {error}", "INVALID_REQUEST") from error


def _tool(tool: Mapping[str, object]) -> JsonValue:
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise LlmError(f"a tool schema needs a name, got {dict(tool)!r}", "INVALID_REQUEST")
    description = tool.get("description")
    parameters = tool.get("parameters", {"type": "object"})
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description if isinstance(description, str) else "",
            "parameters": _json(parameters, f'tool "{name}" parameters'),
        },
    }


def wire_messages(system: str | None, messages: Sequence[Message], replay: bool) -> list[JsonValue]:
    """The `messages` array: system first, then history in order (spec §9.8 serialisation)."""
    out: list[JsonValue] = []
    if system:
        out.append({"role": "system", "content": system})
    for message in messages:
        if isinstance(message, AssistantMessage):
            out.append(_assistant(message, replay))
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": _user_text(message)})
        else:
            text = "\n".join(_texts(message.content, skip_images=True))
            out.append(
                {"role": "tool", "tool_call_id": message.call_id, "content": text or NO_OUTPUT}
            )
    return out


def _assistant(message: AssistantMessage, replay: bool) -> JsonValue:
    wire: dict[str, JsonValue] = {"role": "assistant", "content": message.text}
    if replay and any(isinstance(b, ReasoningBlock) for b in message.content):
        wire["reasoning_content"] = message.reasoning
    calls = message.tool_calls
    if calls:
        wire["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ]
    return wire


def _user_text(message: UserMessage) -> str:
    return "".join(_texts(message.content, skip_images=False))


def _texts(blocks: Sequence[ContentBlock], *, skip_images: bool) -> list[str]:
    texts: list[str] = []
    for block in blocks:
        kind, text = block.get("type"), block.get("text")
        if kind == "text" and isinstance(text, str):
            texts.append(text)
        elif kind == "image" and not skip_images:
            raise LlmError(
                "the OpenAI-compatible chat-completions adapter does not support image content",
                "UNSUPPORTED_CONTENT",
            )
    return texts


# -- response -----------------------------------------------------------------------------------


class _Open:
    __slots__ = ("id", "index", "kind", "name", "parts")

    def __init__(self, index: int, kind: BlockType) -> None:
        self.index = index
        self.kind: BlockType = kind
        self.parts: list[str] = []
        self.id = ""
        self.name = ""

    def block(self) -> AssistantBlock:
        text = "".join(self.parts)
        if self.kind == "text":
            return TextBlock(text)
        if self.kind == "reasoning":
            return ReasoningBlock(text)
        return ToolCallBlock(self.id or f"call-{self.index}", self.name, text)


class ChunkTranslator:
    """Turns `chat.completion.chunk` payloads into stream chunks; `done()` closes the stream.

    One `reasoning` and one `text` block per response (opened on first non-empty delta), one
    `tool-call` block per wire `tool_calls[].index`. Block ends, usage and the finish are
    deferred to `done()` (the `[DONE]` event).
    """

    __slots__ = ("_finish_reason", "_open", "_reasoning", "_text", "_tools", "_usage")

    def __init__(self) -> None:
        self._open: list[_Open] = []
        self._text: _Open | None = None
        self._reasoning: _Open | None = None
        self._tools: dict[int, _Open] = {}
        self._finish_reason: str | None = None
        self._usage: TokenUsage | None = None

    def _start(self, kind: BlockType, out: list[StreamChunk]) -> _Open:
        block = _Open(len(self._open), kind)
        self._open.append(block)
        out.append(BlockStart(block.index, kind))
        return block

    def payload(self, data: JsonValue) -> list[StreamChunk]:
        """The chunks one parsed SSE payload yields. Raises LlmError for an error payload."""
        if not isinstance(data, dict):
            raise LlmError(f"malformed SSE payload: {str(data)[:120]}", "MALFORMED_RESPONSE")
        error = data.get("error")
        if error is not None:
            raise _stream_error(error)
        usage = data.get("usage")
        if isinstance(usage, dict):
            self._usage = _usage(usage)
        out: list[StreamChunk] = []
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return out
        choice = choices[0]
        delta = choice.get("delta")
        if isinstance(delta, dict):
            self._delta(delta, out)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self._finish_reason = reason
        return out

    def _delta(self, delta: Mapping[str, JsonValue], out: list[StreamChunk]) -> None:
        reasoning = delta.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            if self._reasoning is None:
                self._reasoning = self._start("reasoning", out)
            self._reasoning.parts.append(reasoning)
            out.append(ReasoningDelta(self._reasoning.index, reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            if self._text is None:
                self._text = self._start("text", out)
            self._text.parts.append(content)
            out.append(TextDelta(self._text.index, content))
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for position, call in enumerate(calls):
                if isinstance(call, dict):
                    self._tool_call(call, position, out)

    def _tool_call(
        self, call: Mapping[str, JsonValue], position: int, out: list[StreamChunk]
    ) -> None:
        wire_index = call.get("index")
        key = wire_index if isinstance(wire_index, int) else position
        block = self._tools.get(key)
        if block is None:
            block = self._tools[key] = self._start("tool-call", out)
        function = call.get("function")
        fn: Mapping[str, JsonValue] = function if isinstance(function, dict) else {}
        call_id, name, args = _text(call, "id"), _text(fn, "name"), _text(fn, "arguments")
        block.id = block.id or call_id
        block.name = block.name or name
        block.parts.append(args)
        out.append(ToolCallDelta(block.index, call_id, name, args))

    def done(self) -> list[StreamChunk]:
        """Block ends (index order), usage, then the finish."""
        out: list[StreamChunk] = [BlockEnd(b.index, b.block()) for b in self._open]
        if self._usage is not None:
            out.append(UsageChunk(self._usage))
        out.append(self._finish())
        return out

    def _finish(self) -> Finish:
        match self._finish_reason:
            case None | "stop":
                if not self._open:
                    return Finish(
                        "error",
                        LlmFailure(
                            "model returned a completed response with no content",
                            "EMPTY_RESPONSE",
                        ),
                    )
                return Finish("stop")
            case "tool_calls" | "function_call":
                return Finish("tool-calls")
            case "length":
                return Finish("max-tokens")
            case other:
                return Finish("error", LlmFailure(f"model stopped: {other}", other.upper()))


def _text(obj: Mapping[str, JsonValue], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def _usage(raw: Mapping[str, JsonValue]) -> TokenUsage:
    def count(obj: object, key: str) -> int | None:
        value = obj.get(key) if isinstance(obj, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    prompt = count(raw, "prompt_tokens") or 0
    cached = count(raw.get("prompt_tokens_details"), "cached_tokens")
    missed = None
    if cached is None:  # DeepSeek: prompt_cache_hit_tokens + prompt_cache_miss_tokens
        cached = count(raw, "prompt_cache_hit_tokens")
        missed = count(raw, "prompt_cache_miss_tokens")
    return TokenUsage(
        input_tokens=missed if missed is not None else prompt - (cached or 0),
        output_tokens=count(raw, "completion_tokens") or 0,
        cache_read_tokens=cached,
        reasoning_tokens=count(raw.get("completion_tokens_details"), "reasoning_tokens"),
    )


def error_text(error: JsonValue) -> tuple[str | None, str]:
    """(the provider's message, "code type message" for classifiers) of an error object."""
    if isinstance(error, str):
        return error, error
    if not isinstance(error, dict):
        return None, ""
    message = error.get("message")
    parts = [str(error.get(k)) for k in ("code", "type") if error.get(k) is not None]
    text = message if isinstance(message, str) and message else None
    return text, " ".join([*parts, text or ""])


def _stream_error(error: JsonValue) -> LlmError:
    message, text = error_text(error)
    code = "PROVIDER_ERROR"
    if is_quota(text):
        code = "QUOTA"
    elif is_context_overflow(text):
        code = "CONTEXT_WINDOW_EXCEEDED"
    return LlmError(f"provider error in the stream: {message or 'no message'}", code)
