"""The tool runtime's events as typed keys (CONTRACT §4.5): `ctx.on(PRE_EXECUTE, listener)`.

Owns the `EventKey` constants for the events the tool pipeline dispatches, each typed with its
listener's signature so mypy checks a listener where it is registered, and the declaration of
the `tools/` namespace: every `tools/...` event must be declared, so a misspelt one
(`"tools/pre_execute"`) raises at registration instead of silently never running. Does not own
the dispatch (pipeline.py, registry.py) or the payload types (execution.py, results.py,
decisions.py). Plain strings (`ctx.on("tools/pre-execute", ...)`) keep working.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Final, TypeAlias

from ..kernel.events import EventKey, Next, declare_namespace

if TYPE_CHECKING:
    from ..core.signals import AbortSignal
    from .code_dispatch import CodeDispatchLog
    from .decisions import PostToolDecision, PreToolDecision
    from .execution import ToolDispatchExecution, ToolExecution
    from .results import ContentBlock, ToolExecutionResult
    from .slow_stop import SlowStop

__all__ = [
    "CHANGE",
    "CODE_DISPATCH_LOG",
    "EXECUTE",
    "POST_EXECUTE",
    "PRE_EXECUTE",
    "RESULT",
    "SETTLE",
    "SLOW_STOP_EVENT",
    "ChangeListener",
    "CodeDispatchLogListener",
    "ExecuteListener",
    "PostExecuteListener",
    "PreExecuteListener",
    "ResultListener",
    "SettleListener",
    "SlowStopListener",
]

PreExecuteListener: TypeAlias = Callable[
    ["ToolExecution", Next["PreToolDecision"]], Awaitable["PreToolDecision"]
]
"""`async (call, call_next) -> PreToolDecision`: a waterfall whose base is `Allow()`."""
ExecuteListener: TypeAlias = Callable[
    ["ToolDispatchExecution", Next["ToolExecutionResult"]], Awaitable["ToolExecutionResult"]
]
"""`async (call, call_next) -> ToolExecutionResult`: a waterfall around the normalized dispatch."""
PostExecuteListener: TypeAlias = Callable[
    ["ToolExecution", "ToolExecutionResult", Next["PostToolDecision"]],
    Awaitable["PostToolDecision"],
]
"""`async (call, result, call_next) -> PostToolDecision`: a waterfall whose base is `Accept()`."""
ResultListener: TypeAlias = Callable[["ToolExecution", "ToolExecutionResult"], None]
"""`(call, result) -> None`: synchronous, once per call, each observer contained."""
ChangeListener: TypeAlias = Callable[[], None]
"""`() -> None`: the tool list changed."""
SettleListener: TypeAlias = Callable[["AbortSignal"], Awaitable[None]]
"""`async (signal) -> None`: return once this plugin's pending tools arrived (arrivals.py)."""
SlowStopListener: TypeAlias = Callable[["ToolExecution", "SlowStop"], None]
"""`(call, stop) -> None`: a body still running after its signal aborted (slow_stop.py)."""
CodeDispatchLogListener: TypeAlias = Callable[
    ["CodeDispatchLog", Next[Sequence["ContentBlock"]]], Awaitable[Sequence["ContentBlock"]]
]
"""`async (dispatch, next) -> content blocks`: call `await next()` for the content so far
(code_dispatch.py)."""

declare_namespace("tools")

PRE_EXECUTE: Final[EventKey[PreExecuteListener]] = EventKey("tools/pre-execute")
EXECUTE: Final[EventKey[ExecuteListener]] = EventKey("tools/execute")
POST_EXECUTE: Final[EventKey[PostExecuteListener]] = EventKey("tools/post-execute")
RESULT: Final[EventKey[ResultListener]] = EventKey("tools/result")
CHANGE: Final[EventKey[ChangeListener]] = EventKey("tools/change")
SETTLE: Final[EventKey[SettleListener]] = EventKey("tools/settle")
SLOW_STOP_EVENT: Final[EventKey[SlowStopListener]] = EventKey("tools/slow-stop")
"""The typed key of `tools/slow-stop` (`SLOW_STOP` stays the plain name)."""
CODE_DISPATCH_LOG: Final[EventKey[CodeDispatchLogListener]] = EventKey("tools/code-dispatch-log")
"""Dispatched by `code_dispatch.logged_content`; the key lives here so that a listener's mount
(the spill policy's) does not import the dispatch (issue 36)."""
