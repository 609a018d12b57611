"""Execution objects: what a caller hands the registry, and the one object each call lives in.

Owns: `ToolExecutionInput` (caller-owned, with a required signal), the opaque
`ToolExecutionToken`, the stage-specific views (`ToolExecution`, `ToolDispatchExecution`,
`ToolRunContext`), `ExecutionView`, the one runtime object behind all three, and `Call`, the
registry's private record of the call that the view reads through.

Mutability follows the pipeline stage. Every view reads the same object; only a `tools/execute`
listener may assign `exec.signal` (never `None`, never delete it), and the object is frozen when
`tools/result` is published. The split keeps the registry's own writes plain slot stores (the
guarded `__setattr__` costs every write a function call) while the object handed out rejects
everything but a dispatch-stage signal assignment. Requested vs took effect are kept as separate
facts: whether the caller's cancellation was observed (`interrupted`, the caller signal) and
whether the body was entered (`body_invoked`); the registry derives `ABORTED_BEFORE_DISPATCH`
vs `ABORTED` from them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, NoReturn, Protocol

from ..core.json import JsonValue
from ..core.records import layout_twin
from ..core.signals import AbortSignal
from ..kernel.agent_scope import AgentScope
from ..kernel.events import Listener
from .results import ToolExecutionResult, UserMessage

__all__ = [
    "Call",
    "ExecutionView",
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


@dataclass(frozen=True, kw_only=True, slots=True, init=False)
class ToolExecutionInput:
    """One call as the caller asks for it. `signal` is required: the caller owns the lifetime."""

    call_id: str
    name: str
    arguments: object
    signal: AbortSignal
    agent: object | None = None
    parent: ToolExecutionToken | None = None
    root_call_id: str | None = None

    def __new__(
        cls,
        *,
        call_id: str,
        name: str,
        arguments: object,
        signal: AbortSignal,
        agent: object | None = None,
        parent: ToolExecutionToken | None = None,
        root_call_id: str | None = None,
    ) -> ToolExecutionInput:
        # Built through a layout twin (tether.core.records): one is made per tool call.
        record = _InputLayout()
        record.call_id = call_id
        record.name = name
        record.arguments = arguments
        record.signal = signal
        record.agent = agent
        record.parent = parent
        record.root_call_id = root_call_id
        record.__class__ = cls
        return record  # type: ignore[no-any-return]


_InputLayout: Any = layout_twin(ToolExecutionInput)


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


_IDENTITY = frozenset({"token", "call_id", "root_call_id", "name", "arguments", "agent", "parent"})


class Stage(enum.Enum):
    """Where a call is in the pipeline; it decides what may be changed on the execution."""

    PREPARE = "prepare"
    DISPATCH = "dispatch"
    BODY = "body"
    """The tool body runs (inside dispatch): it may defer contexts but not replace the signal."""
    FINALIZE = "finalize"
    PUBLISHED = "published"


# The members as plain module constants: `Stage.BODY` goes through the enum class's attribute
# machinery (about 15 times the cost of reading a global in CPython 3.11), and the pipeline reads
# a stage about ten times per call.
PREPARE: Final = Stage.PREPARE
DISPATCH: Final = Stage.DISPATCH
BODY: Final = Stage.BODY
FINALIZE: Final = Stage.FINALIZE
PUBLISHED: Final = Stage.PUBLISHED


class Call:
    """The registry's private record of one call: identity, the replaceable signal, and the
    pipeline's bookkeeping. Written only by the registry (and the agent's scheduler); listeners,
    guards and bodies see it through `view`, an `ExecutionView`.

    A plain class on purpose: bookkeeping starts at the class-level defaults below, so creating a
    call stores only what differs (CPython 3.11 keeps such instance attributes inline).
    """

    token: ToolExecutionToken
    call_id: str
    root_call_id: str
    name: str
    agent: object | None
    parent: ToolExecutionToken | None
    scope: AgentScope | None = None
    """The agent's scope when the call was created (None: no agent, or an unscoped one)."""
    listeners: Mapping[str, tuple[Listener, ...]]
    """The live listener table the call's dispatches use: the registry's untagged table, or
    its agent scope's filtered view."""
    arguments: JsonValue | None = None
    """The frozen deep copy of the caller's arguments; None until, or if, materialization fails."""
    signal: AbortSignal
    """What `exec.signal` reads: the caller's, a wrapper's replacement, or the body's own."""
    caller_signal: AbortSignal
    """The caller's signal, captured at creation, outside what wrappers can replace."""
    finalizer: Callable[[ToolExecution, ToolExecutionResult], object] | None
    deferred: list[UserMessage] | None = None
    concluded: bool = False
    body_invoked: bool = False
    """Whether a body of this call ever started (its coroutine entered; a synchronous body's
    function started in its thread). Sticky: set once a body is known to have started, never
    cleared, so `ABORTED_BEFORE_DISPATCH` means no body of the call ran (a retrying wrapper's
    second `next()` included)."""
    run: Any = None
    """The base in flight whose body has not settled (the pipeline's relay), None when none:
    when the `tools/execute` waterfall ends with one still in flight (a shielded `next()`, one
    run in a task of its own), dispatch aborts its body and waits for it before the result.
    There is never more than one: a `next()` while one runs (stage `BODY`) starts nothing."""
    landed: BaseException | None = None
    """The awaiting task's cancellation that landed on the pipeline's private settle future
    (the caller's by construction, even one requested before `execute()`)."""
    landed_in: object = None
    """The task `landed` was delivered to: the caller's only if it is the task that runs the
    call's dispatch (a base awaited in a task a wrapper spawned gets that task's own)."""
    interrupted: bool = False
    """The caller's cancellation of the awaiting task reached the pipeline (every wrapper scope
    let it through): treated like a caller abort."""
    cancel_baseline: int = 0
    """`cancelling()` of the task running the call's stage when it began (creation; `dispatch`
    in a task of its own): more later means that task is being cancelled."""
    outcome: ToolExecutionResult | None = None
    """The latest outcome reached, for the cancelled-awaiter path."""
    stage: Stage = Stage.PREPARE
    view: ExecutionView

    def __init__(
        self,
        call_id: str,
        root_call_id: str,
        name: str,
        agent: object | None,
        parent: ToolExecutionToken | None,
        signal: AbortSignal,
        finalizer: Callable[[ToolExecution, ToolExecutionResult], object] | None,
    ) -> None:
        self.token = ToolExecutionToken()
        self.call_id = call_id
        self.root_call_id = root_call_id
        self.name = name
        self.agent = agent
        self.parent = parent
        self.signal = signal
        self.caller_signal = signal
        self.finalizer = finalizer
        view = _new_view(ExecutionView)
        _set_call(view, self)
        self.view = view

    def __repr__(self) -> str:
        return f"<Call {self.name!r} call_id={self.call_id!r} stage={self.stage.value}>"


class ExecutionView:
    """The one object every listener, guard, observer and body of a call receives; it satisfies
    `ToolExecution`, `ToolDispatchExecution` and `ToolRunContext`. Identity is read-only, `signal`
    is assignable only by a `tools/execute` listener, nothing can be added or deleted."""

    __slots__ = ("_call",)

    _call: Call

    @property
    def token(self) -> ToolExecutionToken:
        return self._call.token

    @property
    def call_id(self) -> str:
        return self._call.call_id

    @property
    def root_call_id(self) -> str:
        return self._call.root_call_id

    @property
    def name(self) -> str:
        return self._call.name

    @property
    def arguments(self) -> JsonValue | None:
        return self._call.arguments

    @property
    def agent(self) -> object | None:
        return self._call.agent

    @property
    def parent(self) -> ToolExecutionToken | None:
        return self._call.parent

    @property
    def signal(self) -> AbortSignal:
        return self._call.signal

    @signal.setter
    def signal(self, value: AbortSignal) -> None:
        # `exec.signal = x` goes through __setattr__ (which checks it); this setter is for the
        # type checkers and for anyone calling the property directly.
        ExecutionView.__setattr__(self, "signal", value)

    @signal.deleter
    def signal(self) -> None:
        raise AttributeError("exec.signal is required and cannot be deleted")

    def defer_context(self, message: UserMessage) -> None:
        if not isinstance(message, UserMessage):
            raise TypeError(
                f"defer_context takes a UserMessage (see tether.user_message); "
                f"got {type(message).__name__}"
            )
        call = self._call
        if call.stage is not BODY and call.stage is not DISPATCH:
            raise RuntimeError(
                f'tool "{call.name}" ({call.call_id}): defer_context called after dispatch '
                "ended; the context would be lost"
            )
        deferred = call.deferred
        if deferred is None:
            call.deferred = [message]
        else:
            deferred.append(message)

    def conclude_turn(self) -> None:
        self._call.concluded = True

    def __setattr__(self, name: str, value: object) -> None:
        if name == "signal":  # checked here, not in a setter: wrappers assign it on every call
            call = self._call
            if call.stage is not DISPATCH:
                raise AttributeError(
                    f"exec.signal can only be replaced by a tools/execute listener; "
                    f"the call is in its {call.stage.value} stage"
                )
            if not isinstance(value, AbortSignal):
                raise TypeError(f"exec.signal must be an AbortSignal; got {type(value).__name__}")
            call.signal = value
            return
        if name in _IDENTITY:
            raise AttributeError(f"exec.{name} is read-only")
        raise AttributeError(f"cannot set exec.{name}: the execution object is registry-owned")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete exec.{name}")

    def __repr__(self) -> str:
        call = self._call
        return f"<ToolExecution {call.name!r} call_id={call.call_id!r} stage={call.stage.value}>"


_new_view = object.__new__
_set_call: Callable[[ExecutionView, Call], None] = ExecutionView.__dict__["_call"].__set__


if TYPE_CHECKING:

    def _views(e: ExecutionView) -> tuple[ToolExecution, ToolDispatchExecution, ToolRunContext]:
        """The private object satisfies every view (checked statically)."""
        return (e, e, e)
