"""A call's life in one place (issue 33): exactly one result, whatever a wrapper, the executor,
the awaiting task or a finalizer does.

Contract:
- The `tools/execute` waterfall's base is bound to its call: when the waterfall returns or
  raises while a base is still in flight (a shielded `next()`, one in a task of its own), that
  base's body signal aborts and the body is awaited to quiescence before the result is built;
  nothing writes the call once it is published (`exec.signal` stays unassignable); a `next()`
  after the waterfall ended starts nothing and returns `ABORTED_BEFORE_DISPATCH`.
- `ABORTED_BEFORE_DISPATCH` means no body of the call ever started: a retry wrapper's second
  `next()` never turns a call whose body ran into one.
- A synchronous body starts when its function starts in its thread: a call aborted while its
  work item waits for a worker is `ABORTED_BEFORE_DISPATCH` at once, the function never called.
- A cancellation requested before `execute()` is the caller's: it is delivered at
  `execute()`'s entry (`ABORTED_BEFORE_DISPATCH`, nothing of the call started, not even a
  pre-execute listener) and raised, never turned into a result. One delivered to a task a
  wrapper spawned for `next()` is that task's: re-raised out of the wrapper, it is the
  wrapper's failure, never the caller's.
- `execute()` closed mid-body aborts the body; the body keeps its own signal.
- A `BaseException` from `finalize_content` or a `tools/result` observer reaches the caller after
  the one result was published to every observer.
- At the recursion limit a call either never exists or has its one result, and no task or
  coroutine is left un-awaited.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import threading
import warnings
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any

import pytest

from tether import (
    AbortController,
    AbortError,
    AbortSignal,
    ErrorDetail,
    ToolDispatchExecution,
    ToolExecution,
    ToolExecutionResult,
    ToolFailure,
    ToolRunContext,
)
from tether.kernel import Context
from tether.tools import ToolRuntime

from .conftest import ABD_JSON, ABORTED_JSON, call, error_json, raw_tool, success_json

Next = Callable[[], Awaitable[ToolExecutionResult]]


def _published(ctx: Context, running: list[str] | None = None) -> list[Any]:
    """Every published result's wire form; with `running`, paired with what ran at that moment."""
    results: list[Any] = []

    def observe(exec: ToolExecution, result: ToolExecutionResult) -> None:
        results.append(result.to_json() if running is None else (result.to_json(), [*running]))

    ctx.on("tools/result", observe)
    return results


def _own(message: str) -> ToolFailure:
    return ToolFailure(error=ErrorDetail(message), content=[{"type": "text", "text": message}])


_OWN_JSON = {
    "is_error": True,
    "content": [{"type": "text", "text": "gave up"}],
    "error": {"message": "gave up"},
}


class _Cooperative:
    """A body that marks itself running, waits for its signal, then stops a few steps later."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.stopped = asyncio.Event()
        self.running: list[str] = []
        self.signals: list[AbortSignal] = []
        self.execs: list[ToolRunContext] = []

    async def __call__(self, args: Any, exec: ToolRunContext) -> str:
        self.running.append("body")
        self.signals.append(exec.signal)
        self.execs.append(exec)
        self.started.set()
        try:
            aborted = asyncio.Event()
            exec.signal.add_listener(lambda _: aborted.set())
            await aborted.wait()
            for _ in range(3):
                await asyncio.sleep(0)
            return "done"
        finally:
            self.running.remove("body")
            self.stopped.set()


async def _bounded(awaitable: Awaitable[Any]) -> Any:
    return await asyncio.wait_for(awaitable, 30)


# -- 1. a base still in flight when the waterfall ends -------------------------------------------


async def test_a_shielding_wrapper_cancelled_publishes_only_once_the_body_has_stopped(
    ctx: Context,
) -> None:
    body = _Cooperative()
    published = _published(ctx, body.running)

    async def shielding(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        return await asyncio.shield(next())

    ctx.on("tools/execute", shielding)
    ctx.tools.register(raw_tool("slow", body))
    runner = asyncio.create_task(ctx.tools.execute(call("slow")))
    await _bounded(body.started.wait())

    runner.cancel()
    with pytest.raises(asyncio.CancelledError):
        await _bounded(runner)

    assert published == [(ABORTED_JSON, [])]
    assert body.signals[0].aborted


async def test_a_published_calls_signal_stays_unassignable_after_a_shielded_base_ends(
    ctx: Context,
) -> None:
    body = _Cooperative()
    execs: list[ToolDispatchExecution] = []

    async def shielding(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        execs.append(exec)
        return await asyncio.shield(next())

    ctx.on("tools/execute", shielding)
    ctx.tools.register(raw_tool("slow", body))
    runner = asyncio.create_task(ctx.tools.execute(call("slow")))
    await _bounded(body.started.wait())
    runner.cancel()
    with pytest.raises(asyncio.CancelledError):
        await _bounded(runner)
    await _bounded(body.stopped.wait())

    with pytest.raises(AttributeError, match="published stage"):
        execs[0].signal = AbortController().signal


async def test_a_wrapper_that_returns_while_next_runs_in_its_own_task_stops_the_body_first(
    ctx: Context,
) -> None:
    body = _Cooperative()
    published = _published(ctx, body.running)
    inner: list[asyncio.Future[ToolExecutionResult]] = []

    async def impatient(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        task = asyncio.ensure_future(next())
        inner.append(task)
        await body.started.wait()
        done, _ = await asyncio.wait({task}, timeout=0.01)  # the body never ends on its own
        assert not done
        return _own("gave up")

    ctx.on("tools/execute", impatient)
    ctx.tools.register(raw_tool("slow", body))

    result = await _bounded(ctx.tools.execute(call("slow")))

    assert result.to_json() == _OWN_JSON
    assert published == [(_OWN_JSON, [])]
    assert (await _bounded(inner[0])).to_json() == ABORTED_JSON


async def test_a_wrapper_timing_out_a_shielded_next_stops_the_body_before_publishing(
    ctx: Context,
) -> None:
    body = _Cooperative()
    published = _published(ctx, body.running)

    async def timed(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        try:
            return await asyncio.wait_for(asyncio.shield(next()), 0.01)
        except TimeoutError:
            return _own("gave up")

    ctx.on("tools/execute", timed)
    ctx.tools.register(raw_tool("slow", body))

    result = await _bounded(ctx.tools.execute(call("slow")))

    assert result.to_json() == _OWN_JSON
    assert published == [(_OWN_JSON, [])]


async def test_a_next_kept_and_called_after_the_waterfall_ended_starts_nothing(
    ctx: Context,
) -> None:
    body = _Cooperative()
    published = _published(ctx)
    kept: list[Next] = []

    async def keeper(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        kept.append(next)
        return _own("gave up")

    ctx.on("tools/execute", keeper)
    ctx.tools.register(raw_tool("slow", body))
    await ctx.tools.execute(call("slow"))

    late = await _bounded(kept[0]())

    assert late.to_json() == ABD_JSON
    assert body.running == []
    assert not body.started.is_set()
    assert published == [_OWN_JSON]


# -- 2. ABORTED_BEFORE_DISPATCH iff no body of the call ever started -----------------------------


async def test_a_retry_after_the_caller_aborted_a_running_body_is_aborted(ctx: Context) -> None:
    body = _Cooperative()
    published = _published(ctx)

    async def retry(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        await next()
        return await next()

    ctx.on("tools/execute", retry)
    ctx.tools.register(raw_tool("slow", body))
    controller = AbortController()
    runner = asyncio.create_task(ctx.tools.execute(call("slow", signal=controller.signal)))
    await _bounded(body.started.wait())

    controller.abort()

    assert (await _bounded(runner)).to_json() == ABORTED_JSON
    assert published == [ABORTED_JSON]


async def test_a_retry_after_catching_the_callers_cancellation_is_aborted(ctx: Context) -> None:
    body = _Cooperative()
    published = _published(ctx)

    async def retry(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        try:
            return await next()
        except asyncio.CancelledError:
            return await next()

    ctx.on("tools/execute", retry)
    ctx.tools.register(raw_tool("slow", body))
    runner = asyncio.create_task(ctx.tools.execute(call("slow")))
    await _bounded(body.started.wait())

    runner.cancel()

    with pytest.raises(asyncio.CancelledError):
        await _bounded(runner)
    assert published == [ABORTED_JSON]


# -- 3. a sync body queued behind a busy executor -------------------------------------------------


class _Watched(ThreadPoolExecutor):
    """One worker; `submitted` is set whenever a work item is handed to it."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.submitted = asyncio.Event()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future = super().submit(fn, *args, **kwargs)
        self.submitted.set()
        return future


async def test_a_sync_call_aborted_while_queued_is_aborted_before_dispatch_at_once(
    ctx: Context,
) -> None:
    loop = asyncio.get_running_loop()
    executor = _Watched()
    loop.set_default_executor(executor)
    gate = threading.Event()
    blocking = asyncio.Event()
    ran: list[str] = []

    def blocker(args: Any, exec: ToolRunContext) -> str:
        loop.call_soon_threadsafe(blocking.set)
        gate.wait(30)
        return "blocked"

    def queued(args: Any, exec: ToolRunContext) -> str:
        ran.append("queued")
        return "ran"

    ctx.tools.register(raw_tool("blocker", blocker))
    ctx.tools.register(raw_tool("queued", queued))
    published = _published(ctx)
    first = asyncio.create_task(ctx.tools.execute(call("blocker", call_id="b")))
    await _bounded(blocking.wait())
    executor.submitted.clear()
    controller = AbortController()
    second = asyncio.create_task(ctx.tools.execute(call("queued", signal=controller.signal)))
    await _bounded(executor.submitted.wait())

    try:
        controller.abort()
        result = await _bounded(second)

        assert result.to_json() == ABD_JSON
        assert not first.done()  # at once: not after the worker came free
    finally:
        gate.set()
        await _bounded(first)
        await loop.run_in_executor(None, lambda: None)  # the queued item has had its turn
        executor.shutdown(wait=True)
    assert ran == []
    assert published == [ABD_JSON, success_json("blocked")]


# -- 4. a cancellation requested before execute() -------------------------------------------------


async def test_a_self_cancel_before_execute_is_raised_not_returned(ctx: Context) -> None:
    body = _Cooperative()
    published = _published(ctx)
    ctx.tools.register(raw_tool("slow", body))

    async def caller() -> ToolExecutionResult:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        result: ToolExecutionResult = await ctx.tools.execute(call("slow"))
        return result

    runner = asyncio.create_task(caller())

    with pytest.raises(asyncio.CancelledError):
        await _bounded(runner)
    assert published == [ABD_JSON]  # delivered at execute()'s entry: the body never started
    assert not body.started.is_set()


async def test_a_cancels_scope_aborted_just_before_the_call_raises_its_abort(ctx: Context) -> None:
    body = _Cooperative()
    published = _published(ctx)
    ctx.tools.register(raw_tool("slow", body))
    controller = AbortController()

    async def caller() -> ToolExecutionResult:
        async with controller.signal.cancels():
            controller.abort()
            result: ToolExecutionResult = await ctx.tools.execute(call("slow"))
            return result

    with pytest.raises(AbortError):
        await _bounded(caller())
    assert published == [ABD_JSON]
    assert not body.started.is_set()


async def _self_cancelled_call(ctx: Context) -> ToolExecutionResult:
    async def caller() -> ToolExecutionResult:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        result: ToolExecutionResult = await ctx.tools.execute(call("slow"))
        return result

    result: ToolExecutionResult = await _bounded(asyncio.create_task(caller()))
    return result


async def test_a_self_cancel_before_execute_never_lands_in_a_pre_execute_listener(
    ctx: Context,
) -> None:
    body = _Cooperative()
    published = _published(ctx)
    entered: list[str] = []

    async def pre(exec: ToolExecution, next: Callable[[], Awaitable[Any]]) -> Any:
        entered.append("pre")
        await asyncio.sleep(0)
        return await next()

    ctx.on("tools/pre-execute", pre)
    ctx.tools.register(raw_tool("slow", body))

    with pytest.raises(asyncio.CancelledError):
        await _self_cancelled_call(ctx)
    assert published == [ABD_JSON]
    assert entered == []


async def test_a_self_cancel_before_execute_is_raised_through_a_wrapper_awaiting_its_own_task(
    ctx: Context,
) -> None:
    body = _Cooperative()
    published = _published(ctx)

    async def in_a_task(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        return await asyncio.ensure_future(next())

    ctx.on("tools/execute", in_a_task)
    ctx.tools.register(raw_tool("slow", body))

    with pytest.raises(asyncio.CancelledError):
        await _self_cancelled_call(ctx)
    assert published == [ABD_JSON]
    assert not body.started.is_set()


async def test_a_wrapper_re_raising_its_own_next_tasks_cancellation_fails_the_call_only(
    ctx: Context,
) -> None:
    body = _Cooperative()
    published = _published(ctx, body.running)

    async def cancels_its_own(exec: ToolDispatchExecution, next: Next) -> ToolExecutionResult:
        inner = asyncio.ensure_future(next())
        await body.started.wait()
        inner.cancel()  # a cancellation of the wrapper's task, not of the caller's
        return await inner

    ctx.on("tools/execute", cancels_its_own)
    ctx.tools.register(raw_tool("slow", body))
    runner = asyncio.create_task(ctx.tools.execute(call("slow")))

    result = await _bounded(runner)  # returned: nobody cancelled the caller

    assert result.to_json() == error_json("CancelledError")  # the wrapper's throw (row 9)
    assert published == [(error_json("CancelledError"), [])]
    assert runner.cancelling() == 0


# -- 5. execute() closed mid-body ----------------------------------------------------------------


async def test_closing_execute_mid_body_aborts_the_body_which_keeps_its_own_signal(
    ctx: Context,
) -> None:
    body = _Cooperative()
    published = _published(ctx)
    ctx.tools.register(raw_tool("slow", body))
    caller = AbortController().signal
    coro = ctx.tools.execute(call("slow", signal=caller))
    coro.send(None)  # runs up to the wait for the body
    await _bounded(body.started.wait())

    coro.close()

    assert body.signals[0].aborted
    await _bounded(body.stopped.wait())
    assert body.execs[0].signal is body.signals[0]
    assert published == [ABORTED_JSON]


# -- 6. a BaseException while publishing ---------------------------------------------------------


@pytest.mark.parametrize("raised", [asyncio.CancelledError, SystemExit])
async def test_a_finalizer_raising_a_base_exception_publishes_one_result_then_raises_it(
    ctx: Context, raised: type[BaseException]
) -> None:
    published = _published(ctx)

    def finalize(exec: ToolExecution, result: ToolExecutionResult) -> object:
        raise raised("finalizer")

    ctx.tools.register(raw_tool("fin", finalize_content=finalize))

    with pytest.raises(raised):
        await ctx.tools.execute(call("fin"))
    assert [r["error"]["message"] for r in published] == ["finalizer"]


async def test_an_observer_raising_a_base_exception_hides_the_result_from_no_other_observer(
    ctx: Context,
) -> None:
    def first(exec: ToolExecution, result: ToolExecutionResult) -> None:
        raise SystemExit("observer")

    ctx.on("tools/result", first)
    published = _published(ctx)
    ctx.tools.register(raw_tool("echo"))

    with pytest.raises(SystemExit):
        await ctx.tools.execute(call("echo"))
    assert published == [success_json("ok")]


# -- 7. at the recursion limit -------------------------------------------------------------------


async def _from_depth(frames: int, make: Callable[[], Awaitable[Any]]) -> Any:
    if frames == 0:
        return await make()
    return await _from_depth(frames - 1, make)


@pytest.mark.parametrize("policy", [True, False], ids=["pre-execute", "no-listener"])
def test_at_the_recursion_limit_every_call_seen_has_one_result_and_nothing_is_left_pending(
    caplog: pytest.LogCaptureFixture, policy: bool
) -> None:
    seen: list[str] = []
    published: list[str] = []
    outcomes: list[str] = []

    async def pre(exec: ToolExecution, next: Next) -> object:
        seen.append(exec.call_id)
        return await next()

    async def body(args: Any, exec: ToolRunContext) -> str:
        await asyncio.sleep(0)
        return "ok"

    async def main() -> None:
        ctx = Context()
        await ctx.plugin(ToolRuntime)
        if policy:
            ctx.on("tools/pre-execute", pre)
        ctx.on("tools/result", lambda exec, result: published.append(exec.call_id))
        ctx.tools.register(raw_tool("deep", body))
        limit = sys.getrecursionlimit()
        for depth in range(limit - 160, limit):
            made = call("deep", call_id=f"c{depth}")
            try:
                await _from_depth(depth, partial(ctx.tools.execute, made))
                outcomes.append("result")
            except RecursionError:
                outcomes.append("recursion")
        await ctx.dispose()

    with (
        caplog.at_level(logging.ERROR, logger="asyncio"),
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always")
        asyncio.run(main())
        gc.collect()

    assert "recursion" in outcomes  # the sweep reached the limit
    assert "result" in outcomes
    assert sorted(published) == sorted(set(published))  # at most one result per call
    assert set(seen) <= set(published)  # every call a listener saw has its result
    assert [r.getMessage() for r in caplog.records] == []
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []
