"""Exactly one result whatever sits between the caller and the body (issue 23).

Contract:
- A cancellation is raised where it was delivered, once the body has settled: from `next()`
  inside the `tools/execute` wrappers, so a wrapper's own cancel scope (`asyncio.timeout`,
  `signal.cancels()`, `anyio.move_on_after`) catches exactly its own cancellation and the caller,
  whose task was not cancelled, gets the wrapper's result; a cancellation of the caller's task goes
  on through every wrapper scope and reaches the caller after the one result is published.
- Cancellation is level-triggered: a listener that swallows the caller's cancellation, or a
  wrapper that raises or returns a non-result after it, does not end it.
- A body that has not started when its call is cancelled never starts (`ABORTED_BEFORE_DISPATCH`);
  `ABORTED_BEFORE_DISPATCH` iff the body never started.
- Every synchronous body — raw, `define_tool` or `@tool` — takes one path: a worker thread the
  call waits for, whatever happens to the awaiting task.
- A cancelled awaiter is a caller abort: a deadline that fires while the body drains afterwards
  does not make it a timeout. A deadline that fired first stays `TOOL_TIMEOUT`.
- A body's eager first step (3.12+) shares its caller's stack, as asyncio's eager tasks do: a
  body that recurses past the limit there fails with its `RecursionError` (one result); after its
  first suspension it has a fresh stack. A body's `KeyboardInterrupt`/`SystemExit` is published as
  a failure, then reaches the caller, and leaves nothing unretrieved.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from tether import (
    AbortController,
    AbortError,
    ErrorDetail,
    ToolDispatchExecution,
    ToolExecution,
    ToolExecutionResult,
    ToolFailure,
    ToolOutput,
    ToolRunContext,
    define_tool,
    tool,
)
from tether.kernel import Context
from tether.plugins import timeout_policy
from tether.tools import ToolRuntime
from tether.tools.body import EAGER_DEPTH

from .conftest import ABD_JSON, ABORTED_JSON, call, error_json, raw_tool, success_json

Next = Callable[[], Awaitable[ToolExecutionResult]]


def _published(ctx: Context) -> list[ToolExecutionResult]:
    results: list[ToolExecutionResult] = []

    def observe(exec: ToolExecution, result: ToolExecutionResult) -> None:
        results.append(result)

    ctx.on("tools/result", observe)
    return results


def _own_failure(message: str) -> ToolFailure:
    """A wrapper's own result."""
    return ToolFailure(error=ErrorDetail(message), content=[{"type": "text", "text": message}])


def _slow_cooperative(stopped: list[str], started: asyncio.Event | None = None) -> Any:
    """A body that waits for its signal, then takes a few iterations to wind down."""

    async def body(args: Any, exec: ToolRunContext) -> str:
        if started is not None:
            started.set()
        await exec.signal.wait()
        for _ in range(3):
            await asyncio.sleep(0)
        stopped.append("stopped")
        return "stopped"

    return body


# -- 1. a cancel scope inside a wrapper sees its own cancellation ----------------------------------


async def test_a_wrappers_asyncio_timeout_catches_its_own_cancellation_after_the_body_settles(
    ctx: Context,
) -> None:
    published = _published(ctx)
    stopped: list[str] = []
    caught: list[str] = []

    async def bounded(exec: ToolDispatchExecution, next: Next) -> Any:
        try:
            async with asyncio.timeout(0.02):
                return await next()
        except TimeoutError:
            caught.append("TimeoutError")
            return _own_failure("wrapper cap")

    ctx.on("tools/execute", bounded)
    ctx.tools.register(raw_tool("slow", _slow_cooperative(stopped)))

    result = await ctx.tools.execute(call("slow"))

    assert caught == ["TimeoutError"]
    assert stopped == ["stopped"]  # the body settled before the wrapper saw its timeout
    assert result.to_json() == {
        "is_error": True,
        "content": [{"type": "text", "text": "wrapper cap"}],
        "error": {"message": "wrapper cap"},
    }
    assert [r.to_json() for r in published] == [result.to_json()]
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0


async def test_a_wrappers_signal_cancels_scope_raises_its_abort_after_the_body_settles(
    ctx: Context,
) -> None:
    stopped: list[str] = []
    seen: list[object] = []
    cap = AbortController()

    async def forwarding(exec: ToolDispatchExecution, next: Next) -> Any:
        try:
            async with cap.signal.cancels():
                return await next()
        except AbortError as exc:
            seen.append(exc.reason)
            raise

    started = asyncio.Event()
    ctx.on("tools/execute", forwarding)
    ctx.tools.register(raw_tool("slow", _slow_cooperative(stopped, started)))
    runner = asyncio.create_task(ctx.tools.execute(call("slow")))
    await started.wait()

    cap.abort("capped")
    result = await runner

    assert seen == ["capped"]
    assert stopped == ["stopped"]
    assert result.to_json() == error_json("operation aborted")


async def test_a_wrappers_anyio_move_on_after_catches_its_own_cancellation(ctx: Context) -> None:
    stopped: list[str] = []
    scopes: list[anyio.CancelScope] = []

    async def bounded(exec: ToolDispatchExecution, next: Next) -> Any:
        with anyio.move_on_after(0.02) as scope:
            return await next()
        scopes.append(scope)
        return _own_failure("moved on")

    ctx.on("tools/execute", bounded)
    ctx.tools.register(raw_tool("slow", _slow_cooperative(stopped)))

    result = await ctx.tools.execute(call("slow"))

    assert [s.cancelled_caught for s in scopes] == [True]
    assert stopped == ["stopped"]
    assert result.to_json()["content"] == [{"type": "text", "text": "moved on"}]


async def test_a_callers_cancellation_goes_through_a_wrapper_scope_that_did_not_cause_it(
    ctx: Context,
) -> None:
    published = _published(ctx)
    stopped: list[str] = []
    inner: list[str] = []

    async def generous(exec: ToolDispatchExecution, next: Next) -> Any:
        try:
            async with asyncio.timeout(3600):
                return await next()
        except TimeoutError:
            inner.append("caught a timeout that was not its own")
            raise

    ctx.on("tools/execute", generous)
    ctx.tools.register(raw_tool("slow", _slow_cooperative(stopped)))

    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.02):
            await ctx.tools.execute(call("slow"))

    assert inner == []
    assert stopped == ["stopped"]
    assert [r.to_json() for r in published] == [ABORTED_JSON]


# -- 2. a wrapper that fails after the drained body does not swallow the cancellation ------------


@pytest.mark.parametrize("failure", ["raises", "returns a non-result"])
async def test_a_wrapper_failing_after_the_drained_body_keeps_the_callers_cancellation(
    ctx: Context, failure: str
) -> None:
    published = _published(ctx)
    stopped: list[str] = []

    async def careless(exec: ToolDispatchExecution, next: Next) -> Any:
        try:
            await next()
        finally:
            if failure == "raises":
                raise ValueError("wrapper broke")
            return "not a result"  # noqa: B012

    ctx.on("tools/execute", careless)
    ctx.tools.register(raw_tool("slow", _slow_cooperative(stopped)))

    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.02):
            await ctx.tools.execute(call("slow"))

    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0
    assert stopped == ["stopped"]
    assert len(published) == 1
    assert published[0].is_error


# -- 3. a body that has not started when its call is cancelled never starts ---------------------


async def _past_eager_nesting(ctx: Context, make: Callable[[], Awaitable[Any]]) -> Any:
    """Await `make()` inside EAGER_DEPTH nested tool bodies, each calling the next in its first
    step: the body `make()` starts then is a plain task on every Python (as every body is on
    3.11), whose first step comes on a later loop iteration. Returns what `make()` returned, or
    raises what it raised, once the nesting has unwound."""
    outcome: list[tuple[bool, Any]] = []

    async def nest(args: Any, exec: ToolRunContext) -> str:
        level = int(str(args["level"]))
        if level < EAGER_DEPTH:
            await ctx.tools.execute(call("nest", {"level": level + 1}, call_id=f"nest{level + 1}"))
            return "nested"
        try:
            outcome.append((True, await make()))
        except BaseException as exc:
            outcome.append((False, exc))
            raise
        return "innermost"

    ctx.tools.register(raw_tool("nest", nest))
    await ctx.tools.execute(call("nest", {"level": 1}, call_id="nest1"))
    [(returned, value)] = outcome
    if not returned:
        raise value
    return value


def _published_for(ctx: Context, name: str) -> list[ToolExecutionResult]:
    results: list[ToolExecutionResult] = []

    def observe(exec: ToolExecution, result: ToolExecutionResult) -> None:
        if exec.name == name:
            results.append(result)

    ctx.on("tools/result", observe)
    return results


async def test_cancelling_the_awaiter_before_the_bodys_first_step_never_starts_the_body(
    ctx: Context,
) -> None:
    published = _published_for(ctx, "echo")
    started: list[str] = []
    loop = asyncio.get_running_loop()

    async def body(args: Any, exec: ToolRunContext) -> str:
        started.append("started")
        return "ran"

    async def cancel_me_before_the_body_runs(exec: ToolDispatchExecution, next: Next) -> Any:
        if exec.name == "echo":
            task = asyncio.current_task()
            assert task is not None
            loop.call_soon(task.cancel)  # runs before the body task's first step
        return await next()

    ctx.on("tools/execute", cancel_me_before_the_body_runs)
    ctx.tools.register(raw_tool("echo", body))
    runner = asyncio.create_task(_past_eager_nesting(ctx, lambda: ctx.tools.execute(call("echo"))))

    with pytest.raises(asyncio.CancelledError):
        await runner
    assert started == []
    assert [r.to_json() for r in published] == [ABD_JSON]


async def test_a_caller_abort_before_the_bodys_first_step_never_starts_the_body(
    ctx: Context,
) -> None:
    published = _published_for(ctx, "echo")
    started: list[str] = []
    caller = AbortController()
    loop = asyncio.get_running_loop()

    async def body(args: Any, exec: ToolRunContext) -> str:
        started.append("started")
        await exec.signal.wait()
        return "ran"

    async def abort_before_the_body_runs(exec: ToolDispatchExecution, next: Next) -> Any:
        if exec.name == "echo":
            loop.call_soon(caller.abort)
        return await next()

    ctx.on("tools/execute", abort_before_the_body_runs)
    ctx.tools.register(raw_tool("echo", body))

    result = await _past_eager_nesting(
        ctx, lambda: ctx.tools.execute(call("echo", signal=caller.signal))
    )

    assert started == []
    assert result.to_json() == ABD_JSON
    assert [r.to_json() for r in published] == [ABD_JSON]


# -- 4. one sync path for every kind of tool ------------------------------------------------------


class _Empty(BaseModel):
    pass


def _stops_iterating(args: object, exec: ToolRunContext) -> str:
    raise StopIteration("done early")


@tool(name="stops_iterating")
def stops_iterating_decorated() -> str:
    """Raises StopIteration from a sync body."""
    raise StopIteration("done early")


@pytest.mark.parametrize("kind", ["raw", "define_tool", "@tool"])
async def test_a_sync_body_raising_stop_iteration_fails_with_a_runtime_error(
    ctx: Context, kind: str
) -> None:
    if kind == "raw":
        definition = raw_tool("stops_iterating", _stops_iterating)
    elif kind == "define_tool":
        definition = define_tool(
            name="stops_iterating",
            description="sync",
            parameters=_Empty,
            output=ToolOutput(schema=str),
            execute=_stops_iterating,
        )
    else:
        definition = stops_iterating_decorated
    ctx.tools.register(definition)

    result = await asyncio.wait_for(ctx.tools.execute(call("stops_iterating")), 30)

    assert result.to_json() == error_json("the tool body raised StopIteration: done early")


@pytest.mark.parametrize("kind", ["define_tool", "@tool"])
def test_a_typed_sync_body_is_published_only_after_its_thread_returned_at_shutdown(
    kind: str,
) -> None:
    returned = threading.Event()
    entered = threading.Event()
    order: list[str] = []

    def slow(exec: ToolRunContext) -> str:
        entered.set()
        while not exec.signal.aborted:  # a well-behaved sync body polls its signal
            threading.Event().wait(0.01)
        threading.Event().wait(0.2)  # and takes a moment to clean up
        order.append("thread returned")
        returned.set()
        return "late"

    if kind == "@tool":
        definition = tool(name="slow")(slow)
    else:
        definition = define_tool(
            name="slow",
            description="sync",
            parameters=_Empty,
            output=ToolOutput(schema=str),
            execute=lambda args, exec: slow(exec),
        )

    async def main() -> None:
        ctx = Context()
        await ctx.plugin(ToolRuntime)
        ctx.on("tools/result", lambda exec, result: order.append(f"published {result.to_json()}"))
        ctx.tools.register(definition)
        asyncio.get_running_loop().create_task(ctx.tools.execute(call("slow")))
        while not entered.is_set():
            await asyncio.sleep(0.01)
        # main returns with the call pending: asyncio.run cancels every task left

    asyncio.run(main())

    assert order == ["thread returned", f"published {ABORTED_JSON}"]


# -- 5. a cancelled awaiter is a caller abort, whatever fires while the body drains ---------------


async def test_a_deadline_firing_while_a_cancelled_awaiters_body_drains_is_aborted(
    ctx: Context,
) -> None:
    await ctx.plugin(timeout_policy)
    published = _published(ctx)
    started = asyncio.Event()
    release = asyncio.Event()
    reasons: list[object] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        started.set()
        await exec.signal.wait()
        reasons.append(exec.signal.reason)
        await release.wait()  # still draining when the 50 ms budget runs out
        return "late"

    ctx.tools.register(raw_tool("slow", body, timeout_ms=50))
    runner = asyncio.create_task(ctx.tools.execute(call("slow")))
    await started.wait()

    runner.cancel()
    await asyncio.sleep(0.2)  # the deadline fires during the drain
    release.set()

    with pytest.raises(asyncio.CancelledError):
        await runner
    assert [type(r) for r in reasons] == [AbortError]
    assert [r.to_json() for r in published] == [ABORTED_JSON]


# -- 6. an eager first step shares its caller's stack, as asyncio's eager tasks do ---------------


def _recurse(n: int) -> int:
    return 0 if n == 0 else 1 + _recurse(n - 1)


async def _from_depth(frames: int, make: Callable[[], Awaitable[Any]]) -> Any:
    """Await `make()` from a coroutine chain `frames` deep."""
    if frames == 0:
        return await make()
    return await _from_depth(frames - 1, make)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="3.11 starts every body on a fresh stack")
async def test_a_first_step_that_recurses_past_what_a_deep_caller_left_fails_with_its_own_error(
    ctx: Context,
) -> None:
    published = _published(ctx)
    limit = sys.getrecursionlimit()

    async def body(args: Any, exec: ToolRunContext) -> int:
        return _recurse(limit - 100)  # fits on a fresh stack, not on what a deep caller left

    ctx.tools.register(raw_tool("deep", body))

    result = await _from_depth(limit - 150, lambda: ctx.tools.execute(call("deep")))

    message = str(result.to_json()["error"]["message"])  # type: ignore[index]
    assert message.startswith("maximum recursion depth exceeded")
    assert [r.to_json() for r in published] == [result.to_json()]


async def test_after_its_first_suspension_a_body_has_a_fresh_stack(ctx: Context) -> None:
    limit = sys.getrecursionlimit()

    async def body(args: Any, exec: ToolRunContext) -> int:
        await asyncio.sleep(0)
        return _recurse(limit - 100)

    ctx.tools.register(raw_tool("deep", body))

    result = await _from_depth(limit - 150, lambda: ctx.tools.execute(call("deep")))

    assert result.to_json() == success_json(str(limit - 100))


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12+ starts a body eagerly")
async def test_on_3_11_a_body_always_starts_on_a_fresh_stack(ctx: Context) -> None:
    limit = sys.getrecursionlimit()

    async def body(args: Any, exec: ToolRunContext) -> int:
        return _recurse(limit - 100)

    ctx.tools.register(raw_tool("deep", body))

    result = await _from_depth(limit - 150, lambda: ctx.tools.execute(call("deep")))

    assert result.to_json() == success_json(str(limit - 100))


# -- 7. a fatal exception from an eager first step leaves nothing unretrieved ---------------------


@pytest.mark.parametrize("fatal", [KeyboardInterrupt, SystemExit])
def test_a_fatal_exception_in_a_first_step_is_published_then_raised_and_retrieved(
    fatal: type[BaseException], caplog: pytest.LogCaptureFixture
) -> None:
    published: list[ToolExecutionResult] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        raise fatal("stop")

    async def main() -> None:
        ctx = Context()
        await ctx.plugin(ToolRuntime)
        ctx.on("tools/result", lambda exec, result: published.append(result))
        ctx.tools.register(raw_tool("fatal", body))
        await ctx.tools.execute(call("fatal"))

    with caplog.at_level(logging.ERROR, logger="asyncio"), pytest.raises(fatal):
        asyncio.run(main())
    gc.collect()

    assert [r.to_json() for r in published] == [error_json("stop")]
    unretrieved = [r.getMessage() for r in caplog.records if "tool fatal" in r.getMessage()]
    assert (
        unretrieved == []
    )  # e.g. "Task exception was never retrieved ... <Task ... name='tool fatal ...'>"
