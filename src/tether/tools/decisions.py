"""Policy decisions: what `tools/pre-execute` and `tools/post-execute` listeners return.

Owns: `Allow` / `Deny` / `Ask` (pre) and `Accept` / `Block` (post), the `MISSING` marker that
tells "not given" from "given as None" on `Accept`, and `PreExecuteNext`, the type of a
`tools/pre-execute` listener's `next` (which may pass the rest of the chain changed arguments).
These records do not validate themselves; the pipeline checks them and fails closed (an error
result, never a dispatch) when one is malformed.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, TypeAlias

from ..core.json import JsonValue
from .results import ContentBlock, UserMessage

__all__ = [
    "MISSING",
    "Accept",
    "Allow",
    "Ask",
    "Block",
    "Deny",
    "PostToolDecision",
    "PreExecuteNext",
    "PreToolDecision",
]


class _Missing(enum.Enum):
    MISSING = "MISSING"

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing.MISSING
"""Marks an `Accept` field that was not given (`Accept(value=None)` replaces it with null)."""


@dataclass(frozen=True, slots=True)
class Allow:
    """Let the call proceed to the guards; with `arguments`, with these arguments instead of the
    model's (an approver's changed input). They are checked as the model's are: snapshotted
    (not JSON: a failure), the guards, then the tool's own validation at dispatch
    (`INVALID_ARGS`, the body never runs); every later listener sees them as the call's."""

    arguments: JsonValue | _Missing = MISSING


@dataclass(frozen=True, slots=True)
class Deny:
    """Refuse the call; the model sees `Error: <reason>`."""

    reason: str


@dataclass(frozen=True, slots=True)
class Ask:
    """Ask the approval service; without one the call is denied (spec §1.4 texts)."""

    reason: str | None = None


PreToolDecision: TypeAlias = Allow | Deny | Ask


class PreExecuteNext(Protocol):
    """A `tools/pre-execute` listener's `next`. `next()` asks the rest of the chain;
    `next(arguments=...)` first makes these the call's arguments (a PreToolUse hook's changed
    input), checked as the model's are: snapshotted (not JSON: a failure), and every later
    listener, the approval question, the guards, the tool's validation at dispatch
    (`INVALID_ARGS`, the body never runs) and the body see them."""

    def __call__(
        self, *, arguments: JsonValue | _Missing = MISSING
    ) -> Awaitable[PreToolDecision]: ...


@dataclass(frozen=True, slots=True)
class Accept:
    """Keep the outcome, optionally replacing its `content` or (successes only) its `value`."""

    content: Sequence[ContentBlock] | _Missing = MISSING
    value: JsonValue | _Missing = MISSING
    additional_contexts: Sequence[UserMessage] = ()


@dataclass(frozen=True, slots=True)
class Block:
    """Turn the outcome into a failure whose content is `feedback`."""

    feedback: Sequence[ContentBlock]
    additional_contexts: Sequence[UserMessage] = ()


PostToolDecision: TypeAlias = Accept | Block
