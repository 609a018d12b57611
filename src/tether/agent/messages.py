"""The message and stream vocabulary shared by the loop, the LLM adapters and the session log.

Owns: assistant content blocks (`TextBlock`, `ReasoningBlock`, `ToolCallBlock`), the messages
(`AssistantMessage`, `ToolResultMessage`, and `tether.tools.results.UserMessage` reused as the user
message), the stream chunks an adapter emits (`BlockStart` … `Finish`), `TokenUsage`, `LlmFailure`,
and the JSON forms the session log stores (assembly of chunks into blocks lives in
`tether.agent.assembly`). Does not own talking
to a model (`tether.agent.llm`) or persisting anything (`tether.agent.session`).

JSON forms (snake_case keys, plain dicts/lists; what `*_to_json` writes and `*_from_json` reads):

    user          {"id", "role": "user", "content": [block...], "source": {...}}
    assistant     {"id", "role": "assistant", "content": [block...], "source": {"kind": "model",
                   "provider", "model"}}
                   block: {"type": "text"|"reasoning", "text"} | {"type": "tool-call", "id",
                   "name", "arguments"}  (arguments: the raw JSON string the model produced)
    tool result   {"id", "role": "user", "content": [{"type": "tool-result", "call_id",
                   "content": [block...], "is_error"}], "source": {"kind": "tool", "call_id"}}
    chunk         {"type": "block-start", "index", "block_type"} | {"type": "text-delta", "index",
                   "text"} | {"type": "reasoning-delta", ...} | {"type": "tool-call-delta",
                   "index", "id", "name"?, "arguments_delta"} | {"type": "block-end", "index",
                   "block"} | {"type": "usage", "usage": {...}} | {"type": "finish", "reason":
                   {"kind", "failure"?}}
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Final, Literal, TypeAlias, cast, get_args

from ..core.json import FrozenDict, FrozenList, JsonValue, snapshot
from ..tools.results import (
    ContentBlock,
    ToolExecutionResult,
    ToolFailure,
    ToolSuccess,
    UserMessage,
)

__all__ = [
    "AssistantBlock",
    "AssistantMessage",
    "BlockEnd",
    "BlockStart",
    "BlockType",
    "Finish",
    "FinishKind",
    "LlmFailure",
    "Message",
    "ReasoningBlock",
    "ReasoningDelta",
    "StreamChunk",
    "TextBlock",
    "TextDelta",
    "TokenUsage",
    "ToolCallBlock",
    "ToolCallDelta",
    "ToolResultMessage",
    "UsageChunk",
    "UserMessage",
    "assistant_message",
    "block_from_json",
    "block_to_json",
    "chunk_from_json",
    "chunk_to_json",
    "failure_from_json",
    "failure_to_json",
    "message_from_json",
    "message_to_json",
    "tool_result_message",
    "usage_from_json",
    "usage_to_json",
]

# -- blocks and messages ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextBlock:
    """Visible assistant text."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningBlock:
    """Model reasoning (DeepSeek `reasoning_content`); sent back to providers that want it."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallBlock:
    """A tool call the model asked for; `arguments` is the raw JSON string it produced."""

    id: str
    name: str
    arguments: str


AssistantBlock: TypeAlias = TextBlock | ReasoningBlock | ToolCallBlock


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """What the model said: blocks in stream order; `source` names provider and model."""

    id: str
    content: tuple[AssistantBlock, ...]
    source: Mapping[str, JsonValue]
    role: Literal["assistant"] = "assistant"

    @property
    def text(self) -> str:
        """The text blocks joined with no separator."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def reasoning(self) -> str:
        """The reasoning blocks joined with no separator."""
        return "".join(b.text for b in self.content if isinstance(b, ReasoningBlock))

    @property
    def tool_calls(self) -> tuple[ToolCallBlock, ...]:
        """The tool-call blocks in model order."""
        return tuple(b for b in self.content if isinstance(b, ToolCallBlock))


@dataclass(frozen=True, slots=True)
class ToolResultMessage:
    """The result of one tool call, as the model sees it (a user-role message, spec §1.5)."""

    id: str
    call_id: str
    content: Sequence[ContentBlock]
    is_error: bool = False
    role: Literal["user"] = "user"

    @property
    def source(self) -> Mapping[str, JsonValue]:
        """`{"kind": "tool", "call_id": ...}`."""
        return FrozenDict(kind="tool", call_id=self.call_id)


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage


def _new_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


def assistant_message(
    content: Iterable[AssistantBlock], *, provider: str, model: str, id: str | None = None
) -> AssistantMessage:
    """An assistant message with model provenance; mints an id unless one is given."""
    return AssistantMessage(
        id=_new_id() if id is None else id,
        content=tuple(content),
        source=FrozenDict(kind="model", provider=provider, model=model),
    )


def tool_result_message(
    call_id: str,
    result: ToolExecutionResult | Sequence[ContentBlock] | str,
    *,
    is_error: bool | None = None,
    id: str | None = None,
) -> ToolResultMessage:
    """The result message for `call_id` from a tool result, content blocks, or a text.

    `is_error` defaults to the result's own flag (False for blocks and text).
    """
    if isinstance(result, ToolSuccess | ToolFailure):
        blocks, flag = result.content, result.is_error
    elif isinstance(result, str):
        blocks, flag = [{"type": "text", "text": result}], False
    else:
        blocks, flag = result, False
    return ToolResultMessage(
        id=_new_id() if id is None else id,
        call_id=call_id,
        content=cast(Sequence[ContentBlock], _frozen(blocks)),
        is_error=flag if is_error is None else is_error,
    )


def _frozen(value: object) -> JsonValue:
    """Deep-frozen JSON: frozen containers are reused, anything else is snapshotted."""
    if isinstance(value, FrozenDict | FrozenList):
        return value
    if isinstance(value, Mapping):
        return snapshot(dict(value))
    if isinstance(value, Sequence) and not isinstance(value, str):
        return snapshot(list(value))
    return snapshot(value)


# -- usage, failures and stream chunks ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Token counts of one response; `input_tokens` counts uncached input only."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class LlmFailure:
    """Why a model request failed: the facts a retry policy and the session log need."""

    message: str
    code: str
    status: int | None = None
    retry_after_ms: float | None = None
    request_id: str | None = None


BlockType: TypeAlias = Literal["text", "reasoning", "tool-call"]
FinishKind: TypeAlias = Literal["stop", "tool-calls", "max-tokens", "aborted", "error"]
_FINISH_KINDS: Final = frozenset(get_args(FinishKind))
_BLOCK_TYPES: Final = frozenset(get_args(BlockType))


@dataclass(frozen=True, slots=True)
class BlockStart:
    index: int
    block_type: BlockType


@dataclass(frozen=True, slots=True)
class TextDelta:
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a tool call; `id`/`name` may be empty on all but the first fragment."""

    index: int
    id: str
    name: str | None
    arguments_delta: str


@dataclass(frozen=True, slots=True)
class BlockEnd:
    """The finished block at `index` (authoritative: it replaces what the deltas built)."""

    index: int
    block: AssistantBlock


@dataclass(frozen=True, slots=True)
class UsageChunk:
    usage: TokenUsage


@dataclass(frozen=True, slots=True)
class Finish:
    """The terminal chunk. Invariant: `failure` is set exactly for `aborted` and `error`."""

    kind: FinishKind
    failure: LlmFailure | None = None

    def __post_init__(self) -> None:
        if self.kind not in _FINISH_KINDS:
            raise ValueError(f"unknown finish kind {self.kind!r}")
        if (self.kind in ("aborted", "error")) != (self.failure is not None):
            raise ValueError(f'a "{self.kind}" finish needs failure only for aborted and error')


StreamChunk: TypeAlias = (
    BlockStart | TextDelta | ReasoningDelta | ToolCallDelta | BlockEnd | UsageChunk | Finish
)

# -- JSON ------------------------------------------------------------------------------------


def _field(
    obj: Mapping[str, JsonValue], key: str, kind: type | tuple[type, ...], where: str
) -> JsonValue:
    value = obj.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{where}.{key} is missing or not a {_kind_name(kind)}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "string", int: "integer", bool: "boolean", dict: "object", list: "array"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _object(value: object, where: str) -> Mapping[str, JsonValue]:
    if not isinstance(value, dict):
        raise ValueError(f"{where} is not an object")
    return cast(Mapping[str, JsonValue], value)


def _str(obj: Mapping[str, JsonValue], key: str, where: str) -> str:
    return cast(str, _field(obj, key, str, where))


def _int(obj: Mapping[str, JsonValue], key: str, where: str) -> int:
    return cast(int, _field(obj, key, int, where))


def _opt_int(obj: Mapping[str, JsonValue], key: str, where: str) -> int | None:
    return None if obj.get(key) is None else _int(obj, key, where)


def block_to_json(block: AssistantBlock) -> dict[str, JsonValue]:
    """An assistant block's JSON form."""
    if isinstance(block, ToolCallBlock):
        return {
            "type": "tool-call",
            "id": block.id,
            "name": block.name,
            "arguments": block.arguments,
        }
    return {"type": "text" if isinstance(block, TextBlock) else "reasoning", "text": block.text}


def block_from_json(value: JsonValue, where: str = "block") -> AssistantBlock:
    """Read an assistant block. Raises ValueError naming the bad field."""
    obj = _object(value, where)
    match obj.get("type"):
        case "text":
            return TextBlock(_str(obj, "text", where))
        case "reasoning":
            return ReasoningBlock(_str(obj, "text", where))
        case "tool-call":
            return ToolCallBlock(
                _str(obj, "id", where), _str(obj, "name", where), _str(obj, "arguments", where)
            )
        case other:
            raise ValueError(f"{where}.type {other!r} is not an assistant block type")


def message_to_json(message: Message) -> dict[str, JsonValue]:
    """A message's JSON form (see the module docstring). Containers may be frozen ones, which
    compare equal to plain ones and encode the same."""
    if isinstance(message, AssistantMessage):
        return {
            "id": message.id,
            "role": "assistant",
            "content": [block_to_json(b) for b in message.content],
            "source": _frozen(message.source),
        }
    if isinstance(message, ToolResultMessage):
        block: dict[str, JsonValue] = {
            "type": "tool-result",
            "call_id": message.call_id,
            "content": _frozen(message.content),
            "is_error": message.is_error,
        }
        return {
            "id": message.id,
            "role": "user",
            "content": [block],
            "source": {"kind": "tool", "call_id": message.call_id},
        }
    return {
        "id": message.id,
        "role": "user",
        "content": _frozen(message.content),
        "source": _frozen(message.source),
    }


def message_from_json(value: JsonValue, where: str = "message") -> Message:
    """Read a message written by `message_to_json`. Raises ValueError naming the bad field."""
    obj = _object(value, where)
    msg_id = _str(obj, "id", where)
    content = cast(list[JsonValue], _field(obj, "content", list, where))
    source = _object(obj.get("source"), f"{where}.source")
    role = obj.get("role")
    if role == "assistant":
        blocks = tuple(block_from_json(b, f"{where}.content[{i}]") for i, b in enumerate(content))
        return AssistantMessage(id=msg_id, content=blocks, source=FrozenDict(source))
    if role != "user":
        raise ValueError(f"{where}.role {role!r} is not 'user' or 'assistant'")
    if source.get("kind") == "tool":
        if len(content) != 1:
            raise ValueError(f"{where}: a tool result message has exactly one tool-result block")
        inner = _object(content[0], f"{where}.content[0]")
        if inner.get("type") != "tool-result":
            raise ValueError(f"{where}.content[0].type is not 'tool-result'")
        blocks_json = _field(inner, "content", list, f"{where}.content[0]")
        return ToolResultMessage(
            id=msg_id,
            call_id=_str(inner, "call_id", f"{where}.content[0]"),
            content=cast(Sequence[ContentBlock], snapshot(blocks_json)),
            is_error=cast(bool, _field(inner, "is_error", bool, f"{where}.content[0]")),
        )
    return UserMessage(
        id=msg_id,
        content=cast(Sequence[ContentBlock], snapshot(content)),
        source=FrozenDict(source),
    )


def usage_to_json(usage: TokenUsage) -> dict[str, JsonValue]:
    """A `TokenUsage`'s JSON form (optional counts only when set)."""
    return _without_none(usage)


def _without_none(record: TokenUsage | LlmFailure) -> dict[str, JsonValue]:
    pairs = ((f.name, getattr(record, f.name)) for f in fields(record))
    return {name: value for name, value in pairs if value is not None}


def usage_from_json(value: JsonValue, where: str = "usage") -> TokenUsage:
    """Read a `TokenUsage`. Raises ValueError naming the bad field."""
    obj = _object(value, where)
    return TokenUsage(
        input_tokens=_int(obj, "input_tokens", where),
        output_tokens=_int(obj, "output_tokens", where),
        cache_read_tokens=_opt_int(obj, "cache_read_tokens", where),
        cache_write_tokens=_opt_int(obj, "cache_write_tokens", where),
        reasoning_tokens=_opt_int(obj, "reasoning_tokens", where),
    )


def failure_to_json(failure: LlmFailure) -> dict[str, JsonValue]:
    """An `LlmFailure`'s JSON form: `message`, `code`, and the optional facts when set."""
    return _without_none(failure)


def failure_from_json(value: JsonValue, where: str = "failure") -> LlmFailure:
    """Read an `LlmFailure`. Raises ValueError naming the bad field."""
    obj = _object(value, where)
    retry_after = obj.get("retry_after_ms")
    request_id = obj.get("request_id")
    return LlmFailure(
        message=_str(obj, "message", where),
        code=_str(obj, "code", where),
        status=_opt_int(obj, "status", where),
        retry_after_ms=float(retry_after) if isinstance(retry_after, int | float) else None,
        request_id=request_id if isinstance(request_id, str) else None,
    )


def chunk_to_json(chunk: StreamChunk) -> dict[str, JsonValue]:
    """A stream chunk's JSON form (for `assistant/chunk` session events)."""
    match chunk:
        case BlockStart():
            return {"type": "block-start", "index": chunk.index, "block_type": chunk.block_type}
        case TextDelta():
            return {"type": "text-delta", "index": chunk.index, "text": chunk.text}
        case ReasoningDelta():
            return {"type": "reasoning-delta", "index": chunk.index, "text": chunk.text}
        case ToolCallDelta():
            out: dict[str, JsonValue] = {"type": "tool-call-delta", "index": chunk.index}
            out["id"] = chunk.id
            if chunk.name is not None:
                out["name"] = chunk.name
            out["arguments_delta"] = chunk.arguments_delta
            return out
        case BlockEnd():
            return {"type": "block-end", "index": chunk.index, "block": block_to_json(chunk.block)}
        case UsageChunk():
            return {"type": "usage", "usage": usage_to_json(chunk.usage)}
        case Finish():
            reason: dict[str, JsonValue] = {"kind": chunk.kind}
            if chunk.failure is not None:
                reason["failure"] = failure_to_json(chunk.failure)
            return {"type": "finish", "reason": reason}


def chunk_from_json(value: JsonValue, where: str = "chunk") -> StreamChunk:
    """Read a chunk written by `chunk_to_json`. Raises ValueError naming the bad field."""
    obj = _object(value, where)
    kind = obj.get("type")
    if kind == "usage":
        return UsageChunk(usage_from_json(obj.get("usage"), f"{where}.usage"))
    if kind == "finish":
        reason = _object(obj.get("reason"), f"{where}.reason")
        finish_kind = reason.get("kind")
        if finish_kind not in _FINISH_KINDS:
            raise ValueError(f"{where}.reason.kind {finish_kind!r} is not a finish kind")
        failure = reason.get("failure")
        return Finish(
            cast(FinishKind, finish_kind),
            None if failure is None else failure_from_json(failure, f"{where}.reason.failure"),
        )
    index = _int(obj, "index", where)
    match kind:
        case "block-start":
            block_type = obj.get("block_type")
            if block_type not in _BLOCK_TYPES:
                raise ValueError(f"{where}.block_type {block_type!r} is not a block type")
            return BlockStart(index, cast(BlockType, block_type))
        case "text-delta":
            return TextDelta(index, _str(obj, "text", where))
        case "reasoning-delta":
            return ReasoningDelta(index, _str(obj, "text", where))
        case "tool-call-delta":
            name = obj.get("name")
            return ToolCallDelta(
                index,
                _str(obj, "id", where),
                name if isinstance(name, str) else None,
                _str(obj, "arguments_delta", where),
            )
        case "block-end":
            return BlockEnd(index, block_from_json(obj.get("block"), f"{where}.block"))
    raise ValueError(f"{where}.type {kind!r} is not a stream chunk type")
