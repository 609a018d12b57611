"""A call awaited inside anyio cancel scopes (the MCP SDK, Starlette, httpx run asyncio code so).

Contract: when an anyio scope around `await ctx.tools.execute(...)` is cancelled, the body's signal
aborts and the body is still awaited to quiescence with its one result published; while it winds
down tether waits quietly (anyio re-delivers a pending cancellation on every loop iteration, which
would spin a CPU); then the scope catches its own cancellation.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import Any

import anyio

from tether import ToolExecution, ToolExecutionResult, ToolRunContext
from tether.kernel import Context

from .conftest import ABORTED_JSON, call, raw_tool

WIND_DOWN_S = 1.0


def _slow_to_stop(stopped: list[str], on_start: Callable[[], object] = lambda: None) -> Any:
    """A body that winds down for `WIND_DOWN_S` after its abort; `on_start` runs as it starts
    (a test cancels a started call then, not after a delay a loaded machine may not reach the
    body in)."""

    async def body(args: Any, exec: ToolRunContext) -> str:
        on_start()
        await exec.signal.wait()
        await asyncio.sleep(WIND_DOWN_S)  # cleanup that takes a while after the abort
        stopped.append("stopped")
        return "stopped"

    return body


def _published(ctx: Context) -> list[ToolExecutionResult]:
    results: list[ToolExecutionResult] = []

    def observe(exec: ToolExecution, result: ToolExecutionResult) -> None:
        results.append(result)

    ctx.on("tools/result", observe)
    return results


async def test_a_cancelled_move_on_after_catches_its_own_cancellation_after_the_body_settles(
    ctx: Context,
) -> None:
    stopped: list[str] = []
    published = _published(ctx)
    with anyio.move_on_after(math.inf) as scope:

        def expire() -> None:  # its deadline passes once the body runs
            scope.deadline = anyio.current_time()

        ctx.tools.register(raw_tool("slow", _slow_to_stop(stopped, expire)))
        await ctx.tools.execute(call("slow"))

    assert scope.cancel_called
    assert scope.cancelled_caught
    assert stopped == ["stopped"]
    assert [r.to_json() for r in published] == [ABORTED_JSON]


async def test_draining_a_body_under_a_cancelled_anyio_scope_uses_almost_no_cpu(
    ctx: Context,
) -> None:
    wall_start = cpu_start = 0.0

    with anyio.CancelScope() as scope:
        loop = asyncio.get_running_loop()

        def cancel() -> None:
            nonlocal wall_start, cpu_start
            wall_start, cpu_start = time.monotonic(), time.process_time()
            scope.cancel()

        ctx.tools.register(raw_tool("slow", _slow_to_stop([], lambda: loop.call_soon(cancel))))
        await ctx.tools.execute(call("slow"))
    cpu = time.process_time() - cpu_start
    wall = time.monotonic() - wall_start

    assert wall >= WIND_DOWN_S
    assert cpu <= 0.05 * wall, f"{cpu:.3f} s of CPU while draining for {wall:.3f} s"


async def test_a_cancelled_task_group_awaits_a_running_call_before_it_exits(
    ctx: Context,
) -> None:
    stopped: list[str] = []
    published = _published(ctx)
    started = anyio.Event()
    ctx.tools.register(raw_tool("slow", _slow_to_stop(stopped, started.set)))

    async def run_call() -> None:
        await ctx.tools.execute(call("slow"))

    async with anyio.create_task_group() as group:
        group.start_soon(run_call)
        await started.wait()  # the body runs
        group.cancel_scope.cancel()

    assert stopped == ["stopped"]
    assert [r.to_json() for r in published] == [ABORTED_JSON]
