"""Typed event keys (issue 38): `ctx.on(tools.PRE_EXECUTE, listener)` is checked by mypy.

Each line marked `# expect: mypy[<code>]` must yield exactly that error under mypy --strict, and
no other line may yield any (tests/tools/test_events.py). Read only by the type checker.
"""

from __future__ import annotations

from tether import tools
from tether.kernel import Context, Next
from tether.tools import PostToolDecision, PreToolDecision, ToolExecution, ToolExecutionResult


async def allow_all(exec: ToolExecution, next: Next[PreToolDecision]) -> PreToolDecision:
    return await next()


async def returns_nothing(exec: ToolExecution, next: Next[PreToolDecision]) -> None:
    await next()


async def takes_a_string(exec: str, next: Next[PreToolDecision]) -> PreToolDecision:
    return await next()


async def accept(
    exec: ToolExecution, result: ToolExecutionResult, next: Next[PostToolDecision]
) -> PostToolDecision:
    return await next()


def observe(exec: ToolExecution, result: ToolExecutionResult) -> None:
    pass


def register(ctx: Context) -> None:
    ctx.on(tools.PRE_EXECUTE, allow_all)
    ctx.on(tools.POST_EXECUTE, accept)
    ctx.on(tools.RESULT, observe)
    ctx.on("tools/pre-execute", returns_nothing)  # a plain string is not checked
    ctx.on(tools.PRE_EXECUTE, returns_nothing)  # expect: mypy[misc]
    ctx.on(tools.PRE_EXECUTE, takes_a_string)  # expect: mypy[misc]
    ctx.on(tools.POST_EXECUTE, allow_all)  # expect: mypy[misc]
    ctx.on(tools.RESULT, allow_all)  # expect: mypy[misc]
