"""Saying why a call is slow to stop (issue 24 §4, tether.tools.slow_stop).

Contract: when a running body has not settled `slow_stop_after_s` seconds (`ctx.tools` config,
default 5) after its signal aborted, the registry logs one WARNING naming the tool, the call id
and where the body waits, and emits `tools/slow-stop` `(exec, SlowStop(waited_s, where))` once;
the call still waits for the body. A body that stops in time, or was never aborted, says nothing.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tether import AbortController, SlowStop, ToolExecution, ToolRunContext
from tether.kernel import Context
from tether.tools import ToolRuntime

from .conftest import ABORTED_JSON, call, raw_tool

AFTER_S = 0.2


@pytest.fixture
async def ctx() -> AsyncIterator[Context]:
    root = Context()
    await root.plugin(ToolRuntime, {"slow_stop_after_s": AFTER_S})
    yield root
    await root.dispose()


def _stops(ctx: Context) -> list[tuple[str, SlowStop]]:
    seen: list[tuple[str, SlowStop]] = []
    ctx.on("tools/slow-stop", lambda exec, stop: seen.append((exec.call_id, stop)))
    return seen


async def stubborn_wait(release: asyncio.Event) -> None:
    await release.wait()


async def test_a_body_still_running_after_its_abort_is_named_once_with_where_it_waits(
    ctx: Context, caplog: pytest.LogCaptureFixture
) -> None:
    stops = _stops(ctx)
    release = asyncio.Event()
    entered = asyncio.Event()
    results: list[Any] = []
    ctx.on("tools/result", lambda exec, result: results.append(result.to_json()))

    async def body(args: Any, exec: ToolRunContext) -> str:
        entered.set()
        await stubborn_wait(release)  # ignores its signal
        return "late"

    ctx.tools.register(raw_tool("stubborn", body))
    caller = AbortController()
    runner = asyncio.create_task(ctx.tools.execute(call("stubborn", signal=caller.signal)))
    await entered.wait()

    with caplog.at_level(logging.WARNING, logger="tether.tools"):
        caller.abort()
        while not stops:
            await asyncio.sleep(0.01)
        await asyncio.sleep(AFTER_S * 2)  # long enough to fire again, were it to
        assert not runner.done()  # never abandoned
        release.set()
        result = await runner

    ((call_id, stop),) = stops
    assert (call_id, stop.waited_s) == ("c1", AFTER_S)
    assert " in body → " in stop.where
    assert " in stubborn_wait → " in stop.where
    assert stop.where.endswith(" in wait → awaiting a future")  # asyncio.Event.wait
    (line,) = [r.getMessage() for r in caplog.records if "has not stopped" in r.getMessage()]
    assert line.startswith('tool "stubborn" (c1) has not stopped 0.2 s after its signal aborted;')
    assert line.endswith(stop.where)
    assert result.to_json() == ABORTED_JSON
    assert results == [ABORTED_JSON]


async def test_a_cancelled_awaiters_slow_body_is_named_too(ctx: Context) -> None:
    stops = _stops(ctx)
    release = asyncio.Event()
    entered = asyncio.Event()

    async def body(args: Any, exec: ToolRunContext) -> str:
        entered.set()
        await stubborn_wait(release)
        return "late"

    ctx.tools.register(raw_tool("stubborn", body))
    runner = asyncio.create_task(ctx.tools.execute(call("stubborn")))
    await entered.wait()

    runner.cancel()
    while not stops:
        await asyncio.sleep(0.01)
    release.set()

    with pytest.raises(asyncio.CancelledError):
        await runner
    assert [c for c, _ in stops] == ["c1"]


async def test_a_sync_body_is_named_as_running_in_its_worker_thread(ctx: Context) -> None:
    stops = _stops(ctx)
    release = threading.Event()
    entered = threading.Event()

    def body(args: Any, exec: ToolRunContext) -> str:
        entered.set()
        release.wait(30)  # a blocking call that ignores the signal
        return "late"

    ctx.tools.register(raw_tool("blocking", body))
    caller = AbortController()
    runner = asyncio.create_task(ctx.tools.execute(call("blocking", signal=caller.signal)))
    while not entered.is_set():
        await asyncio.sleep(0.01)

    caller.abort()
    while not stops:
        await asyncio.sleep(0.01)
    release.set()
    await runner

    ((_, stop),) = stops
    assert stop.where == "a synchronous body in its worker thread (it cannot be interrupted)"


async def test_a_body_that_stops_in_time_says_nothing(ctx: Context) -> None:
    stops = _stops(ctx)
    entered = asyncio.Event()

    async def body(args: Any, exec: ToolRunContext) -> str:
        entered.set()
        await exec.signal.wait()
        return "stopped"

    ctx.tools.register(raw_tool("prompt", body))
    caller = AbortController()
    runner = asyncio.create_task(ctx.tools.execute(call("prompt", signal=caller.signal)))
    await entered.wait()

    caller.abort()
    await runner
    await asyncio.sleep(AFTER_S * 2)

    assert stops == []


async def test_a_failing_observer_is_logged_and_the_call_goes_on(
    ctx: Context, caplog: pytest.LogCaptureFixture
) -> None:
    release = asyncio.Event()
    entered = asyncio.Event()
    seen: list[str] = []

    def broken(exec: ToolExecution, stop: SlowStop) -> None:
        raise RuntimeError("observer broke")

    ctx.on("tools/slow-stop", broken)
    ctx.on("tools/slow-stop", lambda exec, stop: seen.append(exec.call_id))

    async def body(args: Any, exec: ToolRunContext) -> str:
        entered.set()
        await release.wait()
        return "late"

    ctx.tools.register(raw_tool("stubborn", body))
    caller = AbortController()
    runner = asyncio.create_task(ctx.tools.execute(call("stubborn", signal=caller.signal)))
    await entered.wait()
    with caplog.at_level(logging.WARNING, logger="tether.tools"):
        caller.abort()
        while not seen:
            await asyncio.sleep(0.01)
        release.set()
        await runner

    assert seen == ["c1"]
    assert any(
        r.getMessage() == 'tool "stubborn" (c1): tools/slow-stop observer failed: observer broke'
        for r in caplog.records
    )
