"""The pipeline on every event loop users run: asyncio's, uvloop, and loops with a task factory.

Contract: the outcomes do not depend on the loop — a quick body, a suspending body, a caller
abort, a cancelled awaiting task, a sync body and a declared budget end exactly the same on each
(tether uses no private asyncio name, so nothing ties it to one loop implementation).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from tether import AbortController, ToolRunContext
from tether.kernel import Context
from tether.plugins import timeout_policy
from tether.tools import ToolRuntime

from .conftest import ABORTED_JSON, call, error_json, raw_tool, success_json

LoopFactory = Callable[[], asyncio.AbstractEventLoop]


def _recording_factory() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    created: list[asyncio.Future[Any]] = []

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        task = asyncio.Task(coro, loop=loop, **kwargs)
        created.append(task)
        return task

    loop.set_task_factory(factory)
    return loop


def _eager_factory() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    loop.set_task_factory(asyncio.eager_task_factory)  # type: ignore[attr-defined,unused-ignore]
    return loop


def _uvloop() -> asyncio.AbstractEventLoop:
    uvloop = pytest.importorskip("uvloop")
    loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    return loop


LOOPS: list[Any] = [
    pytest.param(asyncio.new_event_loop, id="asyncio"),
    pytest.param(_uvloop, id="uvloop"),
    pytest.param(_recording_factory, id="custom-task-factory"),
    pytest.param(
        _eager_factory,
        id="eager-task-factory",
        marks=pytest.mark.skipif(sys.version_info < (3, 12), reason="added in 3.12"),
    ),
]


def _run(factory: LoopFactory, main: Callable[[Context], Coroutine[Any, Any, Any]]) -> Any:
    async def boot() -> Any:
        ctx = Context()
        await ctx.plugin(ToolRuntime)
        await ctx.plugin(timeout_policy)
        return await main(ctx)

    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(boot())


async def _quick(args: Any, exec: ToolRunContext) -> str:
    return "quick"


async def _suspends(args: Any, exec: ToolRunContext) -> str:
    await asyncio.sleep(0.001)
    return "suspended"


async def _cooperative(args: Any, exec: ToolRunContext) -> str:
    async with exec.signal.cancels():
        await asyncio.sleep(3600)
    return "unreachable"


Body = Callable[[Any, ToolRunContext], Coroutine[Any, Any, str]]


def _announcing(started: asyncio.Event) -> Body:
    """`_cooperative` that sets `started` once its body runs (a test aborts a started call then,
    not after a fixed delay a loaded machine may not have reached the body in)."""

    async def body(args: Any, exec: ToolRunContext) -> str:
        started.set()
        return await _cooperative(args, exec)

    return body


def _sync(args: Any, exec: ToolRunContext) -> str:
    return "from a thread"


@pytest.mark.parametrize("factory", LOOPS)
def test_quick_suspending_and_sync_bodies_succeed(factory: LoopFactory) -> None:
    async def main(ctx: Context) -> list[Any]:
        ctx.tools.register(raw_tool("quick", _quick))
        ctx.tools.register(raw_tool("suspends", _suspends))
        ctx.tools.register(raw_tool("sync", _sync))
        return [
            (await ctx.tools.execute(call(name))).to_json()
            for name in ("quick", "suspends", "sync")
        ]

    assert _run(factory, main) == [
        success_json("quick"),
        success_json("suspended"),
        success_json("from a thread"),
    ]


@pytest.mark.parametrize("factory", LOOPS)
def test_a_caller_abort_ends_a_started_call_aborted(factory: LoopFactory) -> None:
    async def main(ctx: Context) -> Any:
        started = asyncio.Event()
        ctx.tools.register(raw_tool("slow", _announcing(started)))
        caller = AbortController()
        running = asyncio.ensure_future(ctx.tools.execute(call("slow", signal=caller.signal)))
        await started.wait()
        caller.abort()
        return (await running).to_json()

    assert _run(factory, main) == ABORTED_JSON


@pytest.mark.parametrize("factory", LOOPS)
def test_a_cancelled_awaiting_task_publishes_aborted_then_raises(factory: LoopFactory) -> None:
    async def main(ctx: Context) -> tuple[Any, bool]:
        published: list[Any] = []
        ctx.on("tools/result", lambda exec, result: published.append(result.to_json()))
        started = asyncio.Event()
        ctx.tools.register(raw_tool("slow", _announcing(started)))
        runner = asyncio.ensure_future(ctx.tools.execute(call("slow")))
        await started.wait()
        runner.cancel()
        try:
            await runner
        except asyncio.CancelledError:
            return published, True
        return published, False

    assert _run(factory, main) == ([ABORTED_JSON], True)


@pytest.mark.parametrize("factory", LOOPS)
def test_a_declared_budget_ends_tool_timeout(factory: LoopFactory) -> None:
    async def main(ctx: Context) -> Any:
        ctx.tools.register(raw_tool("slow", _cooperative, timeout_ms=20))
        return (await ctx.tools.execute(call("slow"))).to_json()

    assert _run(factory, main) == error_json(
        "tool call timed out after 20ms", "ToolTimeoutError", "TOOL_TIMEOUT"
    )
