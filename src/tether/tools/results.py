"""Tool results: the frozen records a call ends with, and the registry's exact result texts.

Owns: `ToolSuccess` / `ToolFailure` (and their wire form, `to_json`), `ErrorDetail` / `ErrorInfo`,
`UserMessage` (a context a tool or policy attaches), the result codes, and the builders for the
results the registry itself writes (aborts, denials, thrown values). Does not own when those
results are chosen — that is the pipeline's precedence (`tether.tools.precedence`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias, cast

from ..core.errors import error_code_info, error_message
from ..core.json import FrozenDict, FrozenList, JsonValue, frozen_array, frozen_record, snapshot
from ..core.records import layout_twin
from ..core.timeout import TimeoutReason, format_ms

__all__ = [
    "TOOL_ABORTED",
    "TOOL_ABORTED_BEFORE_DISPATCH",
    "TOOL_DENIED",
    "TOOL_TIMEOUT",
    "ContentBlock",
    "ErrorDetail",
    "ErrorInfo",
    "ToolExecutionResult",
    "ToolFailure",
    "ToolSuccess",
    "UserMessage",
    "aborted_before_dispatch_result",
    "aborted_result",
    "denial_result",
    "failure_from",
    "freeze_content",
    "freeze_source",
    "text_content",
    "user_message",
]

TOOL_ABORTED: Final = "ABORTED"
TOOL_ABORTED_BEFORE_DISPATCH: Final = "ABORTED_BEFORE_DISPATCH"
TOOL_TIMEOUT: Final = "TOOL_TIMEOUT"
TOOL_DENIED: Final = "DENIED"
"""A call the policy refused before it ran (a deny rule or hook, a guard, an approval that was
rejected or could not be asked). Not in the runtime spec's catalogue, where a denial has no
code: tether adds it so that every consumer (the session log, `--output-format json`, a Code
Mode program) can tell a refused call from one that failed."""

ContentBlock: TypeAlias = Mapping[str, JsonValue]
"""`{"type": "text", "text": str}` | `{"type": "image", ...}` | ... (frozen once in a result)."""


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """The structured part of an error: which error (`name`) and its stable `code`."""

    name: str
    code: str


@dataclass(frozen=True, slots=True)
class ErrorDetail:
    """Why a call failed: `message` never carries the `Error: ` envelope the content has."""

    message: str
    info: ErrorInfo | None = None


@dataclass(frozen=True, slots=True)
class UserMessage:
    """A context message that rides a result and becomes its own session message."""

    id: str
    content: Sequence[ContentBlock]
    source: Mapping[str, JsonValue]
    role: Literal["user"] = "user"


def user_message(
    content: Sequence[ContentBlock] | str, source: Mapping[str, JsonValue] | None = None
) -> UserMessage:
    """Mint a `UserMessage` with a fresh id; a `str` becomes one text block."""
    blocks = text_content(content) if isinstance(content, str) else content
    return UserMessage(
        id=f"msg_{uuid.uuid4().hex}",
        content=freeze_content(blocks),
        source=freeze_source({"kind": "user"} if source is None else source),
    )


@dataclass(frozen=True, slots=True)
class ToolSuccess:
    """A successful call: `value` is the canonical JSON value, `content` what the model sees."""

    value: JsonValue
    content: Sequence[ContentBlock]
    meta: JsonValue | None = None
    additional_contexts: Sequence[UserMessage] = ()
    concludes_turn: bool = False
    is_error: Literal[False] = False
    _owner: object = field(default=None, init=False, repr=False, compare=False)

    def to_json(self) -> dict[str, JsonValue]:
        """The durable/wire form: `is_error`, `content`, and `meta` when present."""
        out: dict[str, JsonValue] = {"is_error": False, "content": _json_list(self.content)}
        if self.meta is not None:
            out["meta"] = self.meta
        return out


@dataclass(frozen=True, slots=True)
class ToolFailure:
    """A failed call: `error.message` plus model-facing `content` (usually `Error: <message>`)."""

    error: ErrorDetail
    content: Sequence[ContentBlock]
    meta: JsonValue | None = None
    additional_contexts: Sequence[UserMessage] = ()
    is_error: Literal[True] = True

    @property
    def code(self) -> str | None:
        """`error.info.code`, when the failure has one."""
        return None if self.error.info is None else self.error.info.code

    def to_json(self) -> dict[str, JsonValue]:
        """The durable/wire form: `is_error`, `content`, `error`, and `meta` when present."""
        error: dict[str, JsonValue] = {"message": self.error.message}
        if self.error.info is not None:
            error["info"] = {"name": self.error.info.name, "code": self.error.info.code}
        out: dict[str, JsonValue] = {
            "is_error": True,
            "content": _json_list(self.content),
            "error": error,
        }
        if self.meta is not None:
            out["meta"] = self.meta
        return out


ToolExecutionResult: TypeAlias = ToolSuccess | ToolFailure

_SuccessLayout: Any = layout_twin(ToolSuccess)


def canonical_success_record(
    value: JsonValue,
    content: Sequence[ContentBlock],
    meta: JsonValue | None,
    concludes_turn: bool,
    owner: object,
) -> ToolSuccess:
    """A `ToolSuccess` from parts that are already frozen, owned by `owner` (an execution token).

    The registry's hot path: a frozen dataclass's `__init__` sets every field through
    `object.__setattr__`, which costs several times the whole rest of this function.
    """
    record = _SuccessLayout()
    record.value = value
    record.content = content
    record.meta = meta
    record.additional_contexts = ()
    record.concludes_turn = concludes_turn
    record.is_error = False
    record._owner = owner
    record.__class__ = ToolSuccess
    return record  # type: ignore[no-any-return]


def _json_list(blocks: Sequence[ContentBlock]) -> JsonValue:
    if isinstance(blocks, FrozenList):
        return blocks
    return [dict(b) for b in blocks]


def freeze_content(content: object) -> Sequence[ContentBlock]:
    """Content blocks as a frozen list of frozen objects (the same object when already frozen).

    Raises `NotLosslessJson` for non-JSON and `TypeError` for anything but a list of blocks.
    """
    if isinstance(content, FrozenList):
        return content  # type: ignore[return-value]  # frozen once, by snapshot
    frozen = snapshot(list(content) if isinstance(content, tuple) else content)
    if not isinstance(frozen, list) or not all(isinstance(b, dict) for b in frozen):
        raise TypeError("result content must be a list of content blocks (dicts)")
    return cast(Sequence[ContentBlock], frozen)


def freeze_source(source: Mapping[str, JsonValue]) -> Mapping[str, JsonValue]:
    """A message source as a frozen object (the same object when already frozen)."""
    if isinstance(source, FrozenDict):
        return source
    return cast(Mapping[str, JsonValue], snapshot(dict(source)))


def text_content(text: str) -> Sequence[ContentBlock]:
    """One frozen text block."""
    if type(text) is not str:
        return frozen_array(frozen_record(type="text", text=text))  # type: ignore[return-value]
    block = _new_dict(FrozenDict)
    _dict_update(block, {"type": "text", "text": text})
    blocks = _new_list(FrozenList)
    _list_append(blocks, block)
    return blocks  # type: ignore[return-value]


_new_dict: Final = dict.__new__
_dict_update: Final = dict.update
_new_list: Final = list.__new__
_list_append: Final = list.append


def _failure(message: str, info: ErrorInfo | None, text: str | None = None) -> ToolFailure:
    return ToolFailure(
        error=ErrorDetail(message, info),
        content=text_content(f"Error: {message}" if text is None else text),
    )


_ABORT_INFO: Final = ErrorInfo("AbortError", TOOL_ABORTED)
_ABD_INFO: Final = ErrorInfo("AbortError", TOOL_ABORTED_BEFORE_DISPATCH)
_ABORTED: Final = _failure("tool call aborted", _ABORT_INFO)
_ABD: Final = _failure("tool call aborted before dispatch", _ABD_INFO)


def aborted_result(contexts: Sequence[UserMessage] = ()) -> ToolFailure:
    """`ABORTED`: the body was invoked and its success was superseded by cancellation."""
    if not contexts:
        return _ABORTED
    return ToolFailure(_ABORTED.error, _ABORTED.content, additional_contexts=tuple(contexts))


def aborted_before_dispatch_result(contexts: Sequence[UserMessage] = ()) -> ToolFailure:
    """`ABORTED_BEFORE_DISPATCH`: cancellation prevented the body; no side effects possible."""
    if not contexts:
        return _ABD
    return ToolFailure(_ABD.error, _ABD.content, additional_contexts=tuple(contexts))


def timed_out_result(reason: TimeoutReason) -> ToolFailure:
    """A deadline's expiry: `Error: tool call timed out after <ms>ms`, info
    `ToolTimeoutError`/`<the deadline's code>` (`TOOL_TIMEOUT` for the timeout policy's)."""
    message = f"tool call timed out after {format_ms(reason.timeout_ms)}ms"
    return _failure(message, ErrorInfo("ToolTimeoutError", reason.code))


_DENIED_INFO: Final = ErrorInfo("ToolDenied", TOOL_DENIED)


def denial_result(reason: str) -> ToolFailure:
    """A policy denial (a deny decision, a guard, an approval that was rejected or could not be
    asked): message = the reason, content `Error: <reason>`, code `DENIED` (name `ToolDenied`),
    so every consumer can tell a refused call from one that failed."""
    return _failure(reason, _DENIED_INFO)


def failure_from(thrown: object) -> ToolFailure:
    """The error result for a thrown value: its message, and `info` for a `HarnessError`."""
    message = error_message(thrown)
    pair = error_code_info(thrown)
    return _failure(message, None if pair is None else ErrorInfo(*pair))
