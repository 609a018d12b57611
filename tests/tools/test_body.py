"""How a tool body runs (tether.tools.body): eagerly in its own task, then to quiescence.

The body's first step runs at once, in the body's own task and in a copy of the caller's context;
a body that never suspends costs the caller no loop iteration; one that suspends continues in the
same task. What a body does with its task, its context or its own cancellation behaves as if the
body had been started with `asyncio.create_task`.
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import pytest

from tether import AbortController, ToolRunContext
from tether.kernel import Context
from tether.tools.body import BodyStarter, BodyTask, _start_fresh

from .conftest import ABORTED_JSON, call, raw_tool, success_json

_seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")


def _run_without_suspending(awaitable: Any) -> Any:
    """Drive a coroutine by hand: return its value if it finishes in one step, else fail."""
    try:
        awaitable.send(None)
    except StopIteration as stop:
        return stop.value
    awaitable.close()
    raise AssertionError("the call suspended its caller")


async def test_a_body_that_never_suspends_completes_the_call_without_suspending_the_caller(
    ctx: Context,
) -> None:
    ctx.tools.register(raw_tool("echo"))

    result = _run_without_suspending(ctx.tools.execute(call()))

    assert result.to_json() == success_json("ok")


async def test_a_body_runs_in_its_own_task_not_the_callers(ctx: Context) -> None:
    tasks: list[asyncio.Task[Any] | None] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        tasks.append(asyncio.current_task())
        return "ok"

    ctx.tools.register(raw_tool("echo", body))

    await ctx.tools.execute(call())

    assert isinstance(tasks[0], BodyTask)
    assert tasks[0] is not asyncio.current_task()


async def test_a_body_keeps_its_task_across_its_first_suspension(ctx: Context) -> None:
    tasks: list[asyncio.Task[Any] | None] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        tasks.append(asyncio.current_task())
        await asyncio.sleep(0)
        tasks.append(asyncio.current_task())
        await asyncio.sleep(0.001)
        tasks.append(asyncio.current_task())
        return "ok"

    ctx.tools.register(raw_tool("echo", body))

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("ok")
    assert tasks[0] is tasks[1] is tasks[2]


async def test_an_asyncio_timeout_entered_before_the_first_suspension_fires_in_the_body(
    ctx: Context,
) -> None:
    async def body(args: Any, exec: ToolRunContext) -> str:
        try:
            async with asyncio.timeout(0.01):
                await asyncio.sleep(5)
        except TimeoutError:
            return "timed out inside"
        return "slept"

    ctx.tools.register(raw_tool("echo", body))

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("timed out inside")


async def test_a_task_group_opened_in_the_first_step_runs_its_children(ctx: Context) -> None:
    async def child(n: int) -> int:
        await asyncio.sleep(0)
        return n * 2

    async def body(args: Any, exec: ToolRunContext) -> int:
        async with asyncio.TaskGroup() as group:
            first = group.create_task(child(1))
            second = group.create_task(child(2))
        return first.result() + second.result()

    ctx.tools.register(raw_tool("echo", body))

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("6")


async def test_the_body_sees_the_callers_context_and_its_changes_stay_in_the_body(
    ctx: Context,
) -> None:
    seen: list[str] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        seen.append(_seen.get())
        _seen.set("set by the body")
        await asyncio.sleep(0)
        seen.append(_seen.get())
        return "ok"

    ctx.tools.register(raw_tool("echo", body))
    _seen.set("set by the caller")

    await ctx.tools.execute(call())

    assert seen == ["set by the caller", "set by the body"]
    assert _seen.get() == "set by the caller"


async def test_a_cancellation_before_the_tasks_first_step_reaches_the_suspended_body(
    ctx: Context,
) -> None:
    controller = AbortController()
    entered = asyncio.Event()

    async def body(args: Any, exec: ToolRunContext) -> str:
        async with exec.signal.cancels():
            entered.set()
            await asyncio.sleep(3600)
        return "unreachable"

    ctx.tools.register(raw_tool("echo", body))
    running = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    await entered.wait()  # the body suspended; its task has not taken a step yet

    controller.abort()

    assert (await running).to_json() == ABORTED_JSON


async def test_a_body_that_cancels_its_own_task_before_suspending_gets_cancelled_at_its_await(
    ctx: Context,
) -> None:
    async def body(args: Any, exec: ToolRunContext) -> str:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            task.uncancel()
            return "cancelled at its first await"
        return "slept"

    ctx.tools.register(raw_tool("echo", body))

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("cancelled at its first await")


async def test_a_task_a_finished_body_kept_is_settled_with_its_result(ctx: Context) -> None:
    kept: list[asyncio.Task[Any]] = []

    async def keeps_its_task(args: Any, exec: ToolRunContext) -> str:
        task = asyncio.current_task()
        assert task is not None
        kept.append(task)
        return "kept"

    async def records_its_task(args: Any, exec: ToolRunContext) -> str:
        task = asyncio.current_task()
        assert task is not None
        kept.append(task)
        return "next"

    ctx.tools.register(raw_tool("keeper", keeps_its_task))
    ctx.tools.register(raw_tool("next", records_its_task))

    await ctx.tools.execute(call("keeper"))
    await ctx.tools.execute(call("next"))

    assert kept[0].done()
    assert kept[0].result() == "kept"
    assert kept[1] is not kept[0]


async def test_a_done_callback_a_finished_body_added_to_its_task_runs(ctx: Context) -> None:
    called = asyncio.Event()
    outcomes: list[object] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        task = asyncio.current_task()
        assert task is not None

        def on_done(finished: asyncio.Task[Any]) -> None:
            outcomes.append(finished.result())
            called.set()

        task.add_done_callback(on_done)
        return "done"

    ctx.tools.register(raw_tool("echo", body))

    await ctx.tools.execute(call())
    await asyncio.wait_for(called.wait(), 1)

    assert outcomes == ["done"]


async def test_an_idle_body_task_is_not_one_of_the_loops_tasks(ctx: Context) -> None:
    ctx.tools.register(raw_tool("echo"))
    before = asyncio.all_tasks()

    await ctx.tools.execute(call())

    assert asyncio.all_tasks() == before


async def test_a_body_can_run_a_nested_call_in_its_first_step(ctx: Context) -> None:
    tasks: list[asyncio.Task[Any] | None] = []

    async def inner(args: Any, exec: ToolRunContext) -> str:
        tasks.append(asyncio.current_task())
        return "inner"

    async def outer(args: Any, exec: ToolRunContext) -> str:
        tasks.append(asyncio.current_task())
        nested = await ctx.tools.execute(call("inner", signal=exec.signal))
        tasks.append(asyncio.current_task())
        return f"outer+{nested.content[0]['text']}"

    ctx.tools.register(raw_tool("inner", inner))
    ctx.tools.register(raw_tool("outer", outer))

    result = await ctx.tools.execute(call("outer"))

    assert result.to_json() == success_json("outer+inner")
    assert tasks[0] is tasks[2]
    assert tasks[1] is not tasks[0]


def test_a_loop_left_with_an_idle_body_task_shuts_down() -> None:
    async def main() -> str:
        ctx = Context()
        from tether.tools import ToolRuntime

        await ctx.plugin(ToolRuntime)
        ctx.tools.register(raw_tool("echo"))
        result = await ctx.tools.execute(call())
        return str(result.content[0]["text"])

    assert asyncio.run(asyncio.wait_for(main(), 5)) == "ok"


async def test_starting_a_body_raises_what_its_first_step_raised() -> None:
    async def fails() -> str:
        raise ValueError("bad input")

    starter = BodyStarter()
    with pytest.raises(ValueError, match=r"^bad input$"):
        starter.start(fails(), lambda: None)


async def test_a_body_started_without_holding_its_first_step_back_still_finishes() -> None:
    loop = asyncio.get_running_loop()

    async def quick() -> str:
        return "quick"

    async def slow() -> str:
        await asyncio.sleep(0)
        return "slow"

    finished_task, value = _start_fresh(loop, quick(), lambda: None)
    suspended_task, _ = _start_fresh(loop, slow(), lambda: None)

    assert finished_task is None
    assert value == "quick"
    assert suspended_task is not None
    assert await suspended_task == "slow"


async def test_bodies_that_finish_unseen_run_in_one_reused_task(ctx: Context) -> None:
    task_ids: list[int] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        task_ids.append(id(asyncio.current_task()))  # looks, keeps nothing
        return "ok"

    ctx.tools.register(raw_tool("echo", body))

    for _ in range(3):
        await ctx.tools.execute(call())

    assert len(set(task_ids)) == 1
