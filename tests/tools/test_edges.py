"""Edge cases of the pipeline's cancellation, each found by a probe against an earlier version.

Contract: whatever a body raises and whenever the awaiting task is cancelled, `execute()` publishes
exactly one result, classified by spec §1.15 — only successes are ever replaced by cancellation
codes; a deadline that fired first stays `TOOL_TIMEOUT`; a body that has not started never starts;
`KeyboardInterrupt`/`SystemExit` reach the caller only after the result is published.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any

import pytest

from tether import (
    MAX_TIMER_DELAY_MS,
    AbortController,
    ToolExecution,
    ToolExecutionResult,
    ToolRunContext,
    define_tool,
)
from tether.kernel import Context
from tether.plugins import timeout_policy
from tether.tools import ToolRuntime
from tether.tools.body import is_body_task

from .conftest import ABD_JSON, ABORTED_JSON, call, error_json, raw_tool, success_json


def _published(ctx: Context) -> list[ToolExecutionResult]:
    results: list[ToolExecutionResult] = []

    def observe(exec: ToolExecution, result: ToolExecutionResult) -> None:
        results.append(result)

    ctx.on("tools/result", observe)
    return results


async def test_a_sync_body_raising_stop_iteration_is_a_tool_failure(ctx: Context) -> None:
    def body(args: Any, exec: ToolRunContext) -> str:
        raise StopIteration

    ctx.tools.register(raw_tool("sync", body))

    result = await ctx.tools.execute(call("sync"))

    assert result.to_json() == error_json("the tool body raised StopIteration")


async def test_a_failure_completing_as_the_awaiting_task_is_cancelled_is_kept(
    ctx: Context,
) -> None:
    published = _published(ctx)
    runner: list[asyncio.Task[Any]] = []
    gate = asyncio.Event()

    async def body(args: Any, exec: ToolRunContext) -> str:
        await gate.wait()
        runner[0].cancel()  # the awaiter is cancelled in the iteration the body fails in
        raise ValueError("tool failed")

    ctx.tools.register(raw_tool("fails", body))
    runner.append(asyncio.create_task(ctx.tools.execute(call("fails"))))
    await asyncio.sleep(0)
    gate.set()

    with pytest.raises(asyncio.CancelledError):
        await runner[0]

    assert [r.to_json() for r in published] == [error_json("tool failed")]


async def test_a_success_completing_as_the_awaiting_task_is_cancelled_becomes_aborted(
    ctx: Context,
) -> None:
    published = _published(ctx)
    runner: list[asyncio.Task[Any]] = []
    gate = asyncio.Event()

    async def body(args: Any, exec: ToolRunContext) -> str:
        await gate.wait()
        runner[0].cancel()
        return "done"

    ctx.tools.register(raw_tool("succeeds", body))
    runner.append(asyncio.create_task(ctx.tools.execute(call("succeeds"))))
    await asyncio.sleep(0)
    gate.set()

    with pytest.raises(asyncio.CancelledError):
        await runner[0]

    assert [r.to_json() for r in published] == [ABORTED_JSON]


async def test_cancelling_the_awaiting_task_after_the_deadline_fired_keeps_tool_timeout(
    ctx: Context,
) -> None:
    await ctx.plugin(timeout_policy)
    published = _published(ctx)
    deadline_fired = asyncio.Event()
    release = asyncio.Event()

    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.signal.add_listener(lambda _: deadline_fired.set())
        await release.wait()  # uncooperative: finishes only when released
        return "late"

    ctx.tools.register(raw_tool("slow", body, timeout_ms=20))
    runner = asyncio.create_task(ctx.tools.execute(call("slow")))
    await deadline_fired.wait()

    runner.cancel()
    await asyncio.sleep(0)
    release.set()

    with pytest.raises(asyncio.CancelledError):
        await runner
    assert [r.to_json() for r in published] == [
        error_json("tool call timed out after 20ms", "ToolTimeoutError", "TOOL_TIMEOUT")
    ]


async def test_a_body_raising_generator_exit_is_a_tool_failure(ctx: Context) -> None:
    async def body(args: Any, exec: ToolRunContext) -> str:
        await asyncio.sleep(0)
        raise GeneratorExit("closed inside")

    ctx.tools.register(raw_tool("gen", body))

    result = await ctx.tools.execute(call("gen"))

    assert result.to_json() == error_json("closed inside")


class _Custom(BaseException):
    pass


async def test_a_body_raising_a_custom_base_exception_is_a_tool_failure(ctx: Context) -> None:
    async def body(args: Any, exec: ToolRunContext) -> str:
        raise _Custom("not an Exception")

    ctx.tools.register(raw_tool("custom", body))

    result = await ctx.tools.execute(call("custom"))

    assert result.to_json() == error_json("not an Exception")


@pytest.mark.parametrize("fatal", [KeyboardInterrupt, SystemExit])
def test_keyboard_interrupt_and_system_exit_reach_the_caller_after_the_result_is_published(
    fatal: type[BaseException],
) -> None:
    published: list[ToolExecutionResult] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        await asyncio.sleep(0)
        raise fatal("stop")

    async def main() -> None:
        ctx = Context()
        await ctx.plugin(ToolRuntime)
        ctx.on("tools/result", lambda exec, result: published.append(result))
        ctx.tools.register(raw_tool("fatal", body))
        await ctx.tools.execute(call("fatal"))

    with pytest.raises(fatal):
        asyncio.run(main())

    assert [r.to_json() for r in published] == [error_json("stop")]


async def test_a_wrapper_that_swallows_the_cancellation_and_delegates_never_starts_the_body(
    ctx: Context,
) -> None:
    published = _published(ctx)
    waiting = asyncio.Event()
    bodies = 0

    async def swallowing(exec: Any, next: Any) -> Any:
        waiting.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            pass  # swallowed: the request stands on the task
        return await next()

    async def body(args: Any, exec: ToolRunContext) -> str:
        nonlocal bodies
        bodies += 1
        return "ran"

    ctx.on("tools/execute", swallowing)
    ctx.tools.register(raw_tool("echo", body))
    runner = asyncio.create_task(ctx.tools.execute(call()))
    await waiting.wait()

    runner.cancel()

    with pytest.raises(asyncio.CancelledError):  # the request stood: it is raised again
        await runner
    assert [r.to_json() for r in published] == [ABD_JSON]
    assert bodies == 0


def test_a_pending_call_at_asyncio_run_shutdown_publishes_aborted() -> None:
    published: list[ToolExecutionResult] = []
    started = threading.Event()

    async def body(args: Any, exec: ToolRunContext) -> str:
        started.set()
        await asyncio.sleep(3600)  # ignores its signal: shutdown cancels its task directly
        return "unreachable"

    async def main() -> None:
        ctx = Context()
        await ctx.plugin(ToolRuntime)
        ctx.on("tools/result", lambda exec, result: published.append(result))
        ctx.tools.register(raw_tool("slow", body))
        asyncio.get_running_loop().create_task(ctx.tools.execute(call("slow")))
        while not started.is_set():
            await asyncio.sleep(0)
        # main returns with the call pending: asyncio.run cancels every task left

    asyncio.run(main())

    assert [r.to_json() for r in published] == [ABORTED_JSON]


async def test_cancelling_a_body_task_before_its_first_step_orphans_nothing(
    ctx: Context,
) -> None:
    published = _published(ctx)
    children: list[asyncio.Task[Any]] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        child = asyncio.create_task(asyncio.sleep(3600))
        children.append(child)
        await child
        return "unreachable"

    ctx.tools.register(raw_tool("parent", body))
    before = asyncio.all_tasks()
    runner = asyncio.create_task(ctx.tools.execute(call("parent")))
    await asyncio.sleep(0)  # the call ran up to its body task (3.12+: its first step too)
    bodies = [t for t in asyncio.all_tasks() - before if is_body_task(t)]
    assert len(bodies) == 1

    bodies[0].cancel()
    result = await runner

    # 3.11 starts the body on the next loop iteration: it never ran, so nothing could have
    # happened; 3.12+ ran its first step eagerly, and its task was cancelled under it.
    never_ran = sys.version_info < (3, 12)
    assert result.to_json() == (ABD_JSON if never_ran else error_json("CancelledError"))
    assert [r.to_json() for r in published] == [result.to_json()]
    assert all(child.cancelled() for child in children)
    assert asyncio.all_tasks() == before


def test_a_timeout_above_the_timer_maximum_is_refused_at_definition() -> None:
    with pytest.raises(ValueError) as raised:
        define_tool(
            name="slow",
            description="d",
            parameters={"type": "object"},
            output=raw_tool().output,
            execute=lambda args, exec: "x",
            timeout_ms=MAX_TIMER_DELAY_MS + 1,
        )

    assert str(raised.value) == (
        "define_tool(slow): timeout_ms must be at most 2147483647 (about 24.9 days); got 2147483648"
    )


async def test_registering_a_timeout_above_the_timer_maximum_is_refused(ctx: Context) -> None:
    with pytest.raises(ValueError) as raised:
        ctx.tools.register(raw_tool("slow", timeout_ms=3e9))

    assert str(raised.value) == (
        'tool "slow" timeout_ms must be at most 2147483647 (about 24.9 days); got 3000000000'
    )


NESTING = 300


def _nesting_tool(ctx: Context, innermost: asyncio.Event | None = None) -> None:
    async def nest(args: Any, exec: ToolRunContext) -> str:
        level = int(str(args["level"]))
        if level == NESTING:
            if innermost is not None:
                innermost.set()
            async with exec.signal.cancels():
                if args.get("wait"):
                    await asyncio.sleep(3600)
            return f"level {level}"
        inner = await ctx.tools.execute(
            call(
                "nest",
                {"level": level + 1, "wait": bool(args.get("wait"))},
                signal=exec.signal,
                call_id=f"n{level + 1}",
            )
        )
        if inner.is_error:
            exec.signal.throw_if_aborted()
        return str(inner.content[0]["text"])

    ctx.tools.register(raw_tool("nest", nest))


async def test_nested_dispatch_works_three_hundred_levels_deep(ctx: Context) -> None:
    _nesting_tool(ctx)

    result = await ctx.tools.execute(call("nest", {"level": 0}, call_id="n0"))

    assert result.to_json() == success_json(f"level {NESTING}")


async def test_an_abort_reaches_a_body_three_hundred_levels_down(ctx: Context) -> None:
    innermost = asyncio.Event()
    _nesting_tool(ctx, innermost)
    published = _published(ctx)
    caller = AbortController()
    runner = asyncio.create_task(
        ctx.tools.execute(call("nest", {"level": 0, "wait": True}, signal=caller.signal))
    )
    await innermost.wait()

    caller.abort()

    assert (await runner).to_json() == ABORTED_JSON
    assert len(published) == NESTING + 1
    assert all(r.to_json() == ABORTED_JSON for r in published)
