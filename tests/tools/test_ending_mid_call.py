"""A `kill` of the process landing in the middle of a call (issue 33: every way tether ends).

The process's ending (`tether.core.ending.ProcessEnding`, a real SIGTERM to this process) is
fused into the call's signal, as every command fuses it into its turn. Contract:
- Landing while a `tools/execute` wrapper is between its `next()` returning and its own return:
  the wrapper finishes (its cleanup runs), the body's success is superseded: `ABORTED`, one
  result, `tools/post-execute` sees it (spec §1.15 row 14).
- Landing while a `tools/post-execute` listener awaits: the listener finishes (its cleanup runs),
  the accepted success is superseded: `ABORTED`, one result (row 16).
- A wrapper or post-execute listener that raises the ending's abort (`exec.signal.cancels()`)
  has thrown: its failure is kept (rows 9 and 15), one result.
- The process is ending with `128 + N` (143 for SIGTERM); nothing exits before the call has its
  one result, and no body task is left.
"""

from __future__ import annotations

import asyncio
import os
import signal as os_signal
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from tether import (
    AbortController,
    AbortSignal,
    PostToolDecision,
    ToolDispatchExecution,
    ToolExecution,
    ToolExecutionResult,
    ToolRunContext,
)
from tether.core.ending import ProcessEnding
from tether.kernel import Context
from tether.tools.body import is_body_task

from ..patience import PATIENCE_S
from .conftest import ABORTED_JSON, call, error_json, raw_tool

Next = Callable[[], Awaitable[ToolExecutionResult]]
PostNext = Callable[[], Awaitable[PostToolDecision]]


class _Trace:
    """What happened, in order: `body`, `cleanup`, `post`, `result`; and the results."""

    def __init__(self, ctx: Context) -> None:
        self.events: list[str] = []
        self.results: list[Any] = []
        ctx.on("tools/result", self._observe)
        ctx.tools.register(raw_tool("work", self._body))

    async def _body(self, args: Any, exec: ToolRunContext) -> str:
        self.events.append("body")
        return "done"

    def _observe(self, exec: ToolExecution, result: ToolExecutionResult) -> None:
        self.results.append(result.to_json())
        self.events.append("result")


class _Ending:
    """A `ProcessEnding` on this loop whose exit is recorded instead of taken."""

    def __init__(self) -> None:
        self.exits: list[int] = []
        self.process = ProcessEnding(exit=self.exits.append)

    def signal_of_a_turn(self) -> AbortSignal:
        return AbortSignal.any(AbortController().signal, self.process.signal)

    def kill(self) -> None:
        os.kill(os.getpid(), os_signal.SIGTERM)


@pytest.fixture
async def ending() -> AsyncIterator[_Ending]:
    made = _Ending()
    with made.process:
        yield made


async def _bounded(awaitable: Awaitable[Any]) -> Any:
    return await asyncio.wait_for(awaitable, PATIENCE_S)


def _bodies_alive() -> list[asyncio.Task[Any]]:
    return [task for task in asyncio.all_tasks() if is_body_task(task) and not task.done()]


async def test_a_kill_while_a_wrapper_holds_its_next_result_ends_the_call_aborted(
    ctx: Context, ending: _Ending
) -> None:
    trace = _Trace(ctx)
    holding = asyncio.Event()

    async def holds(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        result = await next()
        try:
            holding.set()
            await exec.signal.wait()  # still working on the result when the kill lands
            return result
        finally:
            trace.events.append("cleanup")

    async def post(exec: ToolExecution, result: ToolExecutionResult, next: PostNext) -> Any:
        trace.events.append("post")
        return await next()

    ctx.on("tools/execute", holds)
    ctx.on("tools/post-execute", post)
    runner = asyncio.create_task(ctx.tools.execute(call("work", signal=ending.signal_of_a_turn())))
    await _bounded(holding.wait())

    ending.kill()

    assert (await _bounded(runner)).to_json() == ABORTED_JSON
    assert trace.events == ["body", "cleanup", "post", "result"]
    assert trace.results == [ABORTED_JSON]
    assert (ending.process.exit_code(0), ending.exits) == (143, [])
    assert _bodies_alive() == []


async def test_a_kill_while_post_execute_awaits_ends_the_call_aborted(
    ctx: Context, ending: _Ending
) -> None:
    trace = _Trace(ctx)
    waiting = asyncio.Event()

    async def post(exec: ToolExecution, result: ToolExecutionResult, next: PostNext) -> Any:
        try:
            waiting.set()
            await exec.signal.wait()
            return await next()
        finally:
            trace.events.append("cleanup")

    ctx.on("tools/post-execute", post)
    runner = asyncio.create_task(ctx.tools.execute(call("work", signal=ending.signal_of_a_turn())))
    await _bounded(waiting.wait())

    ending.kill()

    assert (await _bounded(runner)).to_json() == ABORTED_JSON
    assert trace.events == ["body", "cleanup", "result"]
    assert trace.results == [ABORTED_JSON]
    assert (ending.process.exit_code(0), ending.exits) == (143, [])


async def test_a_wrapper_raising_the_kills_abort_after_next_keeps_its_failure(
    ctx: Context, ending: _Ending
) -> None:
    trace = _Trace(ctx)
    holding = asyncio.Event()

    async def holds(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        result = await next()
        async with exec.signal.cancels():
            holding.set()
            await asyncio.Event().wait()
        return result

    ctx.on("tools/execute", holds)
    runner = asyncio.create_task(ctx.tools.execute(call("work", signal=ending.signal_of_a_turn())))
    await _bounded(holding.wait())

    ending.kill()

    assert (await _bounded(runner)).to_json() == error_json("tether got SIGTERM")  # row 9
    assert trace.events == ["body", "result"]
    assert (ending.process.exit_code(0), ending.exits) == (143, [])


async def test_a_post_execute_listener_raising_the_kills_abort_keeps_its_failure(
    ctx: Context, ending: _Ending
) -> None:
    trace = _Trace(ctx)
    waiting = asyncio.Event()

    async def post(exec: ToolExecution, result: ToolExecutionResult, next: PostNext) -> Any:
        async with exec.signal.cancels():
            waiting.set()
            await asyncio.Event().wait()
        return await next()

    ctx.on("tools/post-execute", post)
    runner = asyncio.create_task(ctx.tools.execute(call("work", signal=ending.signal_of_a_turn())))
    await _bounded(waiting.wait())

    ending.kill()

    assert (await _bounded(runner)).to_json() == error_json("tether got SIGTERM")  # row 15
    assert trace.events == ["body", "result"]
