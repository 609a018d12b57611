"""Execution objects: what a caller hands the registry, and the one object each call lives in.

Owns: `ToolExecutionInput` (caller-owned, with a required signal), the opaque
`ToolExecutionToken`, the stage-specific views (`ToolExecution`, `ToolDispatchExecution`,
`ToolRunContext`), and `Execution`, the private mutable run object behind all three.

Mutability follows the pipeline stage. Every view reads the same object; only a `tools/execute`
listener may assign `exec.signal` (never `None`, never delete it), and the object is frozen when
`tools/result` is published. Requested vs took effect are kept as separate facts: whether the
caller's cancellation was observed (`caller_aborted`) and whether the body was entered
(`body_invoked`); the registry derives `ABORTED_BEFORE_DISPATCH` vs `ABORTED` from them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn, Protocol

from ..core.json import JsonValue
from ..core.signals import AbortSignal
from .results import ToolExecutionResult, UserMessage

__all__ = [
    "Execution",
    "Stage",
    "ToolDispatchExecution",
    "ToolExecution",
    "ToolExecutionInput",
    "ToolExecutionToken",
    "ToolRunContext",
]


class ToolExecutionToken:
    """Opaque, identity-only handle of one call (a nested call's `parent`). Never serialized."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<ToolExecutionToken>"

    def __reduce__(self) -> NoReturn:
        raise TypeError("a ToolExecutionToken is process-local and cannot be pickled")


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolExecutionInput:
    """One call as the caller asks for it. `signal` is required: the caller owns the lifetime."""

    call_id: str
    name: str
    arguments: object
    signal: AbortSignal
    agent: object | None = None
    parent: ToolExecutionToken | None = None
    root_call_id: str | None = None


class ToolExecution(Protocol):
    """The read-only view: pre-execute, guards, post-execute, `tools/result`, finalize_content."""

    @property
    def token(self) -> ToolExecutionToken: ...
    @property
    def call_id(self) -> str: ...
    @property
    def root_call_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> JsonValue | None: ...
    @property
    def signal(self) -> AbortSignal: ...
    @property
    def agent(self) -> object | None: ...
    @property
    def parent(self) -> ToolExecutionToken | None: ...


class ToolDispatchExecution(ToolExecution, Protocol):
    """The `tools/execute` view: `signal` may be replaced for the wrapper's delegated lifetime."""

    @property
    def signal(self) -> AbortSignal: ...
    @signal.setter
    def signal(self, value: AbortSignal) -> None: ...


class ToolRunContext(ToolExecution, Protocol):
    """What a tool body receives: the read-only view plus two ways to shape its own result."""

    def defer_context(self, message: UserMessage) -> None:
        """Attach a context to this call's result (ahead of wrapper and post-execute ones)."""
        ...

    def conclude_turn(self) -> None:
        """Ask that a successful result of this call end the agent turn."""
        ...


class Stage(enum.Enum):
    """Where a call is in the pipeline; it decides what may be changed on the execution."""

    PREPARE = "prepare"
    DISPATCH = "dispatch"
    BODY = "body"
    """The tool body runs (inside dispatch): it may defer contexts but not replace the signal."""
    FINALIZE = "finalize"
    PUBLISHED = "published"


_IDENTITY = frozenset({"token", "call_id", "root_call_id", "name", "arguments", "agent", "parent"})


class Execution:
    """The private run object of one call; stage views are typing-only projections of it."""

    __slots__ = (
        "_agent",
        "_arguments",
        "_call_id",
        "_name",
        "_parent",
        "_root_call_id",
        "_signal",
        "_token",
        "body_invoked",
        "caller_signal",
        "cancel_baseline",
        "concluded",
        "deferred",
        "finalizer",
        "interrupted",
        "outcome",
        "stage",
    )

    _token: ToolExecutionToken
    _call_id: str
    _root_call_id: str
    _name: str
    _agent: object | None
    _parent: ToolExecutionToken | None
    _arguments: JsonValue | None
    _signal: AbortSignal
    caller_signal: AbortSignal
    """The caller's signal, captured at creation, outside what wrappers can replace."""
    finalizer: Callable[[ToolExecution, ToolExecutionResult], object] | None
    deferred: list[UserMessage] | None
    concluded: bool
    body_invoked: bool
    """Set immediately before the body is called; never reset."""
    interrupted: bool
    """The task awaiting `execute()` was cancelled (treated like a caller abort)."""
    cancel_baseline: int
    outcome: ToolExecutionResult | None
    """The latest outcome reached, for the cancelled-awaiter path."""
    stage: Stage

    def __init__(
        self,
        *,
        call_id: str,
        root_call_id: str,
        name: str,
        agent: object | None,
        parent: ToolExecutionToken | None,
        signal: AbortSignal,
        finalizer: Callable[[ToolExecution, ToolExecutionResult], object] | None,
    ) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "_token", ToolExecutionToken())
        setattr_(self, "_call_id", call_id)
        setattr_(self, "_root_call_id", root_call_id)
        setattr_(self, "_name", name)
        setattr_(self, "_agent", agent)
        setattr_(self, "_parent", parent)
        setattr_(self, "_arguments", None)
        setattr_(self, "_signal", signal)
        setattr_(self, "caller_signal", signal)
        setattr_(self, "finalizer", finalizer)
        setattr_(self, "deferred", None)
        setattr_(self, "concluded", False)
        setattr_(self, "body_invoked", False)
        setattr_(self, "interrupted", False)
        setattr_(self, "cancel_baseline", 0)
        setattr_(self, "outcome", None)
        setattr_(self, "stage", Stage.PREPARE)

    # -- the public, read-only surface ---------------------------------------------------------

    @property
    def token(self) -> ToolExecutionToken:
        return self._token

    @property
    def call_id(self) -> str:
        return self._call_id

    @property
    def root_call_id(self) -> str:
        return self._root_call_id

    @property
    def name(self) -> str:
        return self._name

    @property
    def arguments(self) -> JsonValue | None:
        return self._arguments

    @property
    def agent(self) -> object | None:
        return self._agent

    @property
    def parent(self) -> ToolExecutionToken | None:
        return self._parent

    @property
    def signal(self) -> AbortSignal:
        return self._signal

    @signal.setter
    def signal(self, value: AbortSignal) -> None:
        if self.stage is not Stage.DISPATCH:
            raise AttributeError(
                f"exec.signal can only be replaced by a tools/execute listener; "
                f"the call is in its {self.stage.value} stage"
            )
        if not isinstance(value, AbortSignal):
            raise TypeError(f"exec.signal must be an AbortSignal; got {type(value).__name__}")
        object.__setattr__(self, "_signal", value)

    @signal.deleter
    def signal(self) -> None:
        raise AttributeError("exec.signal is required and cannot be deleted")

    def defer_context(self, message: UserMessage) -> None:
        if not isinstance(message, UserMessage):
            raise TypeError(
                f"defer_context takes a UserMessage (see tether.user_message); "
                f"got {type(message).__name__}"
            )
        if self.stage is not Stage.BODY and self.stage is not Stage.DISPATCH:
            raise RuntimeError(
                f'tool "{self._name}" ({self._call_id}): defer_context called after dispatch '
                "ended; the context would be lost"
            )
        deferred = self.deferred
        if deferred is None:
            object.__setattr__(self, "deferred", [message])
        else:
            deferred.append(message)

    def conclude_turn(self) -> None:
        object.__setattr__(self, "concluded", True)

    # -- the registry writes bookkeeping with object.__setattr__; nothing else may ------------

    def __setattr__(self, name: str, value: object) -> None:
        if name == "signal":
            object.__setattr__(self, name, value)  # routes through the property's checks
            return
        if name in _IDENTITY:
            raise AttributeError(f"exec.{name} is read-only")
        raise AttributeError(f"cannot set exec.{name}: the execution object is registry-owned")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete exec.{name}")

    def __repr__(self) -> str:
        return f"<Execution {self._name!r} call_id={self._call_id!r} stage={self.stage.value}>"


if TYPE_CHECKING:

    def _views(e: Execution) -> tuple[ToolExecution, ToolDispatchExecution, ToolRunContext]:
        """The private object satisfies every view (checked statically)."""
        return (e, e, e)
