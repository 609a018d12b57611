"""The static contract, allowed uses (CONTRACT §4.1): mypy --strict and pyright must be clean.

Read only by type checkers (tests/test_static_contract.py); never imported or collected.
"""

from __future__ import annotations

from typing import assert_type

from pydantic import BaseModel

from tether import (
    AbortController,
    AbortSignal,
    ToolDispatchExecution,
    ToolExecution,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolOutput,
    ToolRunContext,
    deadline,
    define_tool,
)
from tether.kernel import Context, Next


class Query(BaseModel):
    q: str


async def search(args: Query, exec: ToolRunContext) -> str:
    """A tool body: its signal is exactly an `AbortSignal`, never optional."""
    assert_type(exec.signal, AbortSignal)
    signal: AbortSignal = exec.signal
    if signal.aborted:
        return ""
    return args.q


# define_tool types a lambda body's `exec` contextually: its signal is an `AbortSignal` too.
contextual = define_tool(
    name="contextual",
    description="d",
    parameters={"type": "object"},
    output=ToolOutput(),
    execute=lambda args, exec: assert_type(exec.signal, AbortSignal).aborted,
)


async def add_deadline(
    exec: ToolDispatchExecution, next: Next[ToolExecutionResult]
) -> ToolExecutionResult:
    """A tools/execute listener may replace the signal for its delegated lifetime."""
    upstream = exec.signal
    with deadline(upstream, 100, "EXAMPLE_TIMEOUT") as limit:
        exec.signal = limit.signal
        try:
            return await next()
        finally:
            exec.signal = upstream


def observe(exec: ToolExecution, result: ToolExecutionResult) -> None:
    """Read-only views can read the signal."""
    assert_type(exec.signal, AbortSignal)


async def main(ctx: Context) -> ToolExecutionResult:
    ctx.tools.register(
        define_tool(
            name="search",
            description="search",
            parameters=Query,
            output=ToolOutput(schema=str),
            execute=search,
        )
    )
    ctx.on("tools/execute", add_deadline)
    ctx.on("tools/result", observe)
    controller = AbortController()
    request = ToolExecutionInput(
        call_id="c1", name="search", arguments={"q": "x"}, signal=controller.signal
    )
    assert_type(request.signal, AbortSignal)
    result: ToolExecutionResult = await ctx.tools.execute(request)
    return result
