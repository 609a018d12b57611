"""A cancellation landing while a `tools/pre-execute` listener awaits (spec §1.15 rows 5 and 8).

Contract:
- The turn's signal aborted while a listener awaits: the listener is awaited to the end (its own
  cleanup runs first), the body never starts, the one result is `ABORTED_BEFORE_DISPATCH`, and
  `tools/post-execute` sees it (row 8).
- The awaiting task cancelled while a listener awaits (`task.cancel()`, a caller's
  `asyncio.timeout`): the `CancelledError` is thrown into the listener, whose cleanup runs; the
  one result is `ABORTED_BEFORE_DISPATCH`, published before the cancellation reaches the caller,
  whose scope then sees exactly its own cancellation (`cancelling()` back to 0); no task is left.
- A listener that raises `CancelledError` while its task is not being cancelled has failed on
  its own (a failure, kept; no cancellation reaches the caller); one that cancels its own task
  ends the call `ABORTED_BEFORE_DISPATCH` and the cancellation goes on.
- A listener that aborts the turn and allows: `ABORTED_BEFORE_DISPATCH`; one that aborts it and
  raises the abort has thrown: its failure is kept (row 5).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tether import (
    AbortController,
    Allow,
    PreToolDecision,
    ToolExecution,
    ToolExecutionResult,
    ToolRunContext,
)
from tether.kernel import Context
from tether.tools.body import is_body_task

from .conftest import ABD_JSON, call, error_json, raw_tool

PreNext = Callable[[], Awaitable[PreToolDecision]]


class _Trace:
    """What happened, in order: `cleanup`, `body`, `post`, `result <code>`."""

    def __init__(self, ctx: Context) -> None:
        self.events: list[str] = []
        self.results: list[Any] = []
        ctx.on("tools/post-execute", self._post)
        ctx.on("tools/result", self._observe)
        ctx.tools.register(raw_tool("guarded", self._body))

    async def _body(self, args: Any, exec: ToolRunContext) -> str:
        self.events.append("body")
        return "ran"

    async def _post(self, exec: ToolExecution, result: ToolExecutionResult, next: Any) -> Any:
        self.events.append("post")
        return await next()

    def _observe(self, exec: ToolExecution, result: ToolExecutionResult) -> None:
        self.results.append(result.to_json())
        self.events.append("result")


def _no_task_left() -> bool:
    current = asyncio.current_task()
    return all(task is current or task.done() for task in asyncio.all_tasks())


async def _bounded(awaitable: Awaitable[Any]) -> Any:
    return await asyncio.wait_for(awaitable, 30)


async def test_the_turn_aborted_while_pre_execute_awaits_is_abd_after_the_listeners_cleanup(
    ctx: Context,
) -> None:
    trace = _Trace(ctx)
    turn = AbortController()
    entered = asyncio.Event()

    async def waits_for_abort(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        aborted = asyncio.Event()
        exec.signal.add_listener(lambda _: aborted.set())
        try:
            entered.set()
            await aborted.wait()
            return await next()
        finally:
            trace.events.append("cleanup")

    ctx.on("tools/pre-execute", waits_for_abort)
    runner = asyncio.create_task(ctx.tools.execute(call("guarded", signal=turn.signal)))
    await _bounded(entered.wait())

    turn.abort()

    assert (await _bounded(runner)).to_json() == ABD_JSON
    assert trace.events == ["cleanup", "post", "result"]
    assert trace.results == [ABD_JSON]


async def test_cancelling_the_caller_while_pre_execute_awaits_runs_its_cleanup_then_abd(
    ctx: Context,
) -> None:
    trace = _Trace(ctx)
    entered = asyncio.Event()

    async def waits_forever(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        try:
            entered.set()
            await asyncio.Event().wait()
            return await next()
        finally:
            trace.events.append("cleanup")

    ctx.on("tools/pre-execute", waits_forever)
    runner = asyncio.create_task(ctx.tools.execute(call("guarded")))
    await _bounded(entered.wait())

    runner.cancel()

    with pytest.raises(asyncio.CancelledError):
        await _bounded(runner)
    assert trace.events == ["cleanup", "result"]
    assert trace.results == [ABD_JSON]
    assert _no_task_left()


async def test_a_callers_timeout_landing_in_pre_execute_sees_its_own_cancellation_balanced(
    ctx: Context,
) -> None:
    trace = _Trace(ctx)
    entered = asyncio.Event()
    scopes: list[asyncio.Timeout] = []

    async def waits_forever(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        try:
            entered.set()
            await asyncio.Event().wait()
            return await next()
        finally:
            trace.events.append("cleanup")

    async def caller() -> tuple[str, int]:
        task = asyncio.current_task()
        assert task is not None
        try:
            async with asyncio.timeout(None) as scope:
                scopes.append(scope)
                await ctx.tools.execute(call("guarded"))
        except TimeoutError:
            return "TimeoutError", task.cancelling()
        return "returned", task.cancelling()

    ctx.on("tools/pre-execute", waits_forever)
    runner = asyncio.create_task(caller())
    await _bounded(entered.wait())

    scopes[0].reschedule(asyncio.get_running_loop().time())

    assert await _bounded(runner) == ("TimeoutError", 0)
    assert trace.events == ["cleanup", "result"]
    assert trace.results == [ABD_JSON]
    assert _no_task_left()


async def test_a_pre_execute_listener_that_swallows_the_callers_cancellation_starts_no_body(
    ctx: Context,
) -> None:
    trace = _Trace(ctx)
    entered = asyncio.Event()

    async def swallows(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        try:
            entered.set()
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            trace.events.append("swallowed")
        return await next()

    ctx.on("tools/pre-execute", swallows)
    runner = asyncio.create_task(ctx.tools.execute(call("guarded")))
    await _bounded(entered.wait())

    runner.cancel()

    with pytest.raises(asyncio.CancelledError):
        await _bounded(runner)
    assert trace.events == ["swallowed", "result"]
    assert trace.results == [ABD_JSON]


async def test_a_pre_execute_listener_raising_cancelled_error_on_its_own_is_its_failure(
    ctx: Context,
) -> None:
    trace = _Trace(ctx)

    async def raises(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        await asyncio.sleep(0)
        raise asyncio.CancelledError("listener gave up")

    ctx.on("tools/pre-execute", raises)
    runner = asyncio.create_task(ctx.tools.execute(call("guarded")))

    result = await _bounded(runner)  # returned, not raised: nobody cancelled the caller

    assert result.to_json() == error_json("listener gave up")
    assert trace.events == ["result"]  # no body, no post-execute (row 5)
    assert runner.cancelling() == 0


async def test_a_pre_execute_listener_cancelling_its_own_task_ends_the_call_abd_and_raises(
    ctx: Context,
) -> None:
    trace = _Trace(ctx)

    async def cancels_itself(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        try:
            await asyncio.sleep(0)
        finally:
            trace.events.append("cleanup")
        return await next()

    ctx.on("tools/pre-execute", cancels_itself)
    runner = asyncio.create_task(ctx.tools.execute(call("guarded")))

    with pytest.raises(asyncio.CancelledError):
        await _bounded(runner)
    assert trace.events == ["cleanup", "result"]
    assert trace.results == [ABD_JSON]


async def test_a_pre_execute_listener_that_aborts_the_turn_and_allows_is_abd(
    ctx: Context,
) -> None:
    trace = _Trace(ctx)
    turn = AbortController()

    async def aborts(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        turn.abort()
        await asyncio.sleep(0)
        return Allow()

    ctx.on("tools/pre-execute", aborts)

    result = await _bounded(ctx.tools.execute(call("guarded", signal=turn.signal)))

    assert result.to_json() == ABD_JSON
    assert trace.events == ["post", "result"]


async def test_a_pre_execute_listener_that_aborts_the_turn_and_raises_the_abort_keeps_it(
    ctx: Context,
) -> None:
    trace = _Trace(ctx)
    turn = AbortController()

    async def aborts(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        turn.abort()
        exec.signal.throw_if_aborted()
        return Allow()

    ctx.on("tools/pre-execute", aborts)

    result = await _bounded(ctx.tools.execute(call("guarded", signal=turn.signal)))

    assert result.to_json() == error_json("operation aborted")  # row 5: a throw is kept
    assert trace.events == ["result"]
    assert not any(is_body_task(task) for task in asyncio.all_tasks())
