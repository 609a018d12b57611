"""A `tools/execute` wrapper calling `next()` twice at once: the call runs at most one body.

Contract (tools.body_run, docs/design.md):
- A call has at most one base in flight. A `next()` started while another base of the same call
  runs (`asyncio.gather(next(), next())`, a `next()` in a task of its own beside the wrapper's
  own) starts nothing and raises a `RuntimeError` naming the call's `tools/execute` wrappers.
- What the wrapper makes of that error decides the one result: raised, it is the wrapper's
  failure (spec §1.15 row 9) and the base still in flight is stopped and awaited before it is
  published; caught, the first `next()`'s result stands.
- A retry after the earlier `next()` returned runs the base again (spec §7.3; test_wrappers.py).
- No body task outlives the call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tether import ToolDispatchExecution, ToolExecution, ToolExecutionResult, ToolRunContext
from tether.kernel import Context
from tether.tools.body import is_body_task

from .conftest import ABORTED_JSON, call, error_json, raw_tool, success_json

Next = Callable[[], Awaitable[ToolExecutionResult]]


class _Body:
    """A body that counts its entries and returns "done" once `release` is set or its signal
    aborts (then "stopped")."""

    def __init__(self) -> None:
        self.entered = 0
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, args: Any, exec: ToolRunContext) -> str:
        self.entered += 1
        self.started.set()
        aborted = asyncio.Event()
        exec.signal.add_listener(lambda _: aborted.set())
        released = asyncio.ensure_future(self.release.wait())
        stopped = asyncio.ensure_future(aborted.wait())
        done, pending = await asyncio.wait({released, stopped}, return_when="FIRST_COMPLETED")
        for task in pending:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        return "done" if released in done else "stopped"


def _overlap(wrappers: str, name: str = "slow") -> str:
    return (
        f"{wrappers} called call_next() while an earlier call_next() of the same call "
        f'(tool "{name}", call c1) was still running: a call runs at most one body at a time, '
        f"so await the earlier call_next() before calling it again"
    )


def _named(listener: Callable[..., object]) -> str:
    return f"{listener.__module__}.{listener.__qualname__}"


def _published(ctx: Context) -> list[Any]:
    results: list[Any] = []

    def observe(exec: ToolExecution, result: ToolExecutionResult) -> None:
        results.append(result.to_json())

    ctx.on("tools/result", observe)
    return results


def _bodies_alive() -> list[asyncio.Task[Any]]:
    return [task for task in asyncio.all_tasks() if is_body_task(task) and not task.done()]


async def _bounded(awaitable: Awaitable[Any]) -> Any:
    return await asyncio.wait_for(awaitable, 30)


async def test_a_wrapper_gathering_two_nexts_fails_with_an_error_naming_it(ctx: Context) -> None:
    body = _Body()
    published = _published(ctx)

    async def hedging(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        first, _ = await asyncio.gather(next(), next())
        return first

    ctx.on("tools/execute", hedging)
    ctx.tools.register(raw_tool("slow", body))

    result = await _bounded(ctx.tools.execute(call("slow")))

    expected = error_json(_overlap(f"tools/execute wrapper {_named(hedging)}"))
    assert result.to_json() == expected
    assert published == [expected]


async def test_a_wrapper_gathering_two_nexts_enters_the_body_once_and_leaves_none_running(
    ctx: Context,
) -> None:
    body = _Body()

    async def hedging(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        first, _ = await asyncio.gather(next(), next())
        return first

    ctx.on("tools/execute", hedging)
    ctx.tools.register(raw_tool("slow", body))

    await _bounded(ctx.tools.execute(call("slow")))

    assert body.entered == 1
    assert _bodies_alive() == []


async def test_a_wrapper_gathering_two_nexts_with_return_exceptions_keeps_the_first_result(
    ctx: Context,
) -> None:
    body = _Body()
    published = _published(ctx)
    second: list[BaseException | ToolExecutionResult] = []

    async def hedging(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        first, other = await asyncio.gather(next(), next(), return_exceptions=True)
        second.append(other)
        assert isinstance(first, ToolExecutionResult)
        return first

    ctx.on("tools/execute", hedging)
    ctx.tools.register(raw_tool("slow", body))
    runner = asyncio.create_task(ctx.tools.execute(call("slow")))
    await _bounded(body.started.wait())

    body.release.set()

    assert (await _bounded(runner)).to_json() == success_json("done")
    assert published == [success_json("done")]
    assert body.entered == 1
    assert isinstance(second[0], RuntimeError)
    assert str(second[0]) == _overlap(f"tools/execute wrapper {_named(hedging)}")


async def test_a_next_in_a_spawned_task_beside_the_wrappers_own_starts_nothing_and_raises(
    ctx: Context,
) -> None:
    body = _Body()
    published = _published(ctx)
    spawned: list[asyncio.Future[ToolExecutionResult]] = []

    async def spawning(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        spawned.append(asyncio.ensure_future(next()))
        return await next()  # runs first: the spawned next() has not taken a step yet

    ctx.on("tools/execute", spawning)
    ctx.tools.register(raw_tool("slow", body))
    runner = asyncio.create_task(ctx.tools.execute(call("slow")))
    await _bounded(body.started.wait())
    await _bounded(asyncio.wait(spawned))  # refused while the wrapper's own body runs

    body.release.set()

    assert (await _bounded(runner)).to_json() == success_json("done")
    assert published == [success_json("done")]
    assert body.entered == 1
    refused = spawned[0].exception()
    assert isinstance(refused, RuntimeError)
    assert str(refused) == _overlap(f"tools/execute wrapper {_named(spawning)}")


async def test_a_second_next_raised_out_of_the_wrapper_stops_the_first_body_before_publishing(
    ctx: Context,
) -> None:
    body = _Body()
    seen: list[str] = []
    spawned: list[asyncio.Future[ToolExecutionResult]] = []

    async def spawning(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        first = asyncio.ensure_future(next())
        spawned.append(first)
        await body.started.wait()
        try:
            return await next()  # refused: raised out of the wrapper
        finally:
            seen.append(f"first done: {first.done()}")

    def observe(exec: ToolExecution, result: ToolExecutionResult) -> None:
        seen.append(f"published, bodies alive: {len(_bodies_alive())}")

    ctx.on("tools/execute", spawning)
    ctx.on("tools/result", observe)
    ctx.tools.register(raw_tool("slow", body))

    result = await _bounded(ctx.tools.execute(call("slow")))

    assert result.to_json() == error_json(_overlap(f"tools/execute wrapper {_named(spawning)}"))
    assert seen == ["first done: False", "published, bodies alive: 0"]
    assert body.entered == 1
    assert (await _bounded(spawned[0])).to_json() == ABORTED_JSON  # its holder learns it stopped


async def test_nested_wrappers_overlapping_next_names_every_wrapper_of_the_call(
    ctx: Context,
) -> None:
    body = _Body()

    async def outer(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        first, _ = await asyncio.gather(next(), next())
        return first

    async def inner(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        return await next()

    ctx.on("tools/execute", outer)
    ctx.on("tools/execute", inner)
    ctx.tools.register(raw_tool("slow", body))

    result = await _bounded(ctx.tools.execute(call("slow")))

    wrappers = f"a tools/execute wrapper (one of {_named(outer)}, {_named(inner)})"
    assert result.to_json() == error_json(_overlap(wrappers))


async def test_cancelling_the_caller_while_a_wrapper_gathers_two_nexts_aborts_the_one_body(
    ctx: Context,
) -> None:
    body = _Body()
    published = _published(ctx)

    async def hedging(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        first, _ = await asyncio.gather(next(), next(), return_exceptions=True)
        assert isinstance(first, ToolExecutionResult)
        return first

    ctx.on("tools/execute", hedging)
    ctx.tools.register(raw_tool("slow", body))
    runner = asyncio.create_task(ctx.tools.execute(call("slow")))
    await _bounded(body.started.wait())

    runner.cancel()

    with pytest.raises(asyncio.CancelledError):
        await _bounded(runner)
    assert published == [ABORTED_JSON]
    assert body.entered == 1
    assert _bodies_alive() == []
