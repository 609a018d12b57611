"""The tool-call timeout policy: one `tools/execute` listener that enforces each tool's declared
`timeout_ms` and turns *its own* expiry into `TOOL_TIMEOUT` (spec §4).

Owns: the budget lookup (the definition visible to the caller), the deadline it installs on
`call.signal` for its delegated lifetime, and the classification. Does not own stopping the work:
the deadline only aborts the signal; a tool that declares `timeout_ms` promises to forward
`call.signal` and reach quiescence. Tools without a budget pass through untouched (a wrapper after
this one still sees the caller's own signal object). Nested deadlines compose by registration
order, because `timeout_of` is code-scoped.

Mount: `await ctx.plugin(tether.plugins.timeout_policy)` (entry point `tool-call-timeout-policy`),
before or after the tools: it declares itself with `ctx.tools.declare_timeout_policy()`, so the
registry does not warn that budgets go unenforced.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

from ..core.timeout import LOOP_SCHEDULER, Deadline, TimeoutReason, timeout_of
from ..kernel import Context
from ..tools.execution import ToolDispatchExecution
from ..tools.results import TOOL_TIMEOUT, ToolExecutionResult, ToolFailure, timed_out_result

__all__ = ["TOOL_TIMEOUT", "apply", "inject", "name", "timeout_result"]

name: Final = "tool-call-timeout-policy"
inject: Final = ("tools",)


def timeout_result(timeout_ms: float) -> ToolFailure:
    """`Error: tool call timed out after <ms>ms`, info `ToolTimeoutError`/`TOOL_TIMEOUT`."""
    return timed_out_result(TimeoutReason(TOOL_TIMEOUT, timeout_ms))


def apply(ctx: Context, config: None = None) -> None:
    """Register the one `tools/execute` listener and declare it to the registry (both undone
    when this plugin is disposed)."""
    tools = ctx.tools
    tools.declare_timeout_policy()

    async def enforce_budget(
        call: ToolDispatchExecution, call_next: Callable[[], Awaitable[ToolExecutionResult]]
    ) -> ToolExecutionResult:
        definition = tools.get(call.name, call.agent)
        budget = None if definition is None else definition.timeout_ms
        if budget is None:
            return await call_next()
        upstream = call.signal
        limit = Deadline(upstream, budget, TOOL_TIMEOUT, LOOP_SCHEDULER)
        try:
            call.signal = limit.signal
            try:
                result = await call_next()
            finally:
                call.signal = upstream
            if timeout_of(limit.signal, TOOL_TIMEOUT) is not None:
                return timeout_result(budget)
            return result
        finally:
            limit.dispose()

    ctx.on("tools/execute", enforce_budget)
