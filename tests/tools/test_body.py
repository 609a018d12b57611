"""How a tool body runs (tether.tools.body): in its own task, to quiescence.

A body runs in a `BodyTask` of its own, in a copy of the caller's context. On Python >= 3.12 the
task starts eagerly (the public `eager_start=True`): a body that never suspends completes the call
without suspending the caller. What a body does with its task, its context or its own
cancellation behaves as if the body had been started with `asyncio.create_task`.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from typing import Any

import pytest

from tether import ToolRunContext
from tether.kernel import Context
from tether.tools.body import EAGER_DEPTH, is_body_task

from .conftest import call, error_json, raw_tool, success_json

_seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")


def _run_without_suspending(awaitable: Any) -> Any:
    """Drive a coroutine by hand: return its value if it finishes in one step, else fail."""
    try:
        awaitable.send(None)
    except StopIteration as stop:
        return stop.value
    awaitable.close()
    raise AssertionError("the call suspended its caller")


eager_only = pytest.mark.skipif(
    sys.version_info < (3, 12), reason="eager task start is Python 3.12's public API"
)


@eager_only
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

    assert tasks[0] is not None
    assert is_body_task(tasks[0])
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


async def test_a_finished_body_leaves_no_task_on_the_loop(ctx: Context) -> None:
    ctx.tools.register(raw_tool("echo"))
    before = asyncio.all_tasks()

    await ctx.tools.execute(call())

    assert asyncio.all_tasks() == before


async def test_a_body_task_is_named_after_its_call(ctx: Context) -> None:
    names: list[str] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        task = asyncio.current_task()
        assert task is not None
        names.append(task.get_name())
        return "ok"

    ctx.tools.register(raw_tool("echo", body))

    await ctx.tools.execute(call(call_id="c7"))

    assert names == ["tool echo c7"]


async def test_nested_calls_deeper_than_the_eager_limit_still_complete(ctx: Context) -> None:
    depth = EAGER_DEPTH * 3

    async def nest(args: Any, exec: ToolRunContext) -> str:
        level = int(str(args["level"]))
        if level == depth:
            return str(level)
        inner = await ctx.tools.execute(
            call("nest", {"level": level + 1}, signal=exec.signal, call_id=f"n{level + 1}")
        )
        return str(inner.content[0]["text"])

    ctx.tools.register(raw_tool("nest", nest))

    result = await ctx.tools.execute(call("nest", {"level": 0}, call_id="n0"))

    assert result.to_json() == success_json(str(depth))


async def test_a_body_that_cancels_its_own_task_and_catches_it_keeps_its_result(
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


async def test_a_body_that_cancels_its_own_task_fails_whether_or_not_it_suspended_first(
    ctx: Context,
) -> None:
    async def before_suspending(args: Any, exec: ToolRunContext) -> str:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        return "returned after cancelling itself"

    async def after_suspending(args: Any, exec: ToolRunContext) -> str:
        await asyncio.sleep(0)
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        await asyncio.sleep(3600)
        return "unreachable"

    ctx.tools.register(raw_tool("before", before_suspending))
    ctx.tools.register(raw_tool("after", after_suspending))

    first = await ctx.tools.execute(call("before"))
    second = await ctx.tools.execute(call("after"))

    assert first.to_json() == error_json("CancelledError")
    assert second.to_json() == error_json("CancelledError")
