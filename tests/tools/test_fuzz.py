"""Random-timing fuzz of the pipeline's cancellation (issue 23): every call gets exactly one result
and every cancel scope catches exactly its own cancellation, whatever happens when.

Each round builds one call at random — a body (returns at once, suspends first, cooperative,
uncooperative, failing, forwarding with `cancels()`, synchronous in a thread), any of four wrappers
(the timeout policy with a tiny budget, one with its own `asyncio.timeout`, one with its own
`signal.cancels()` scope that a driver aborts, one with an `anyio.move_on_after`), and a caller
that may cancel the awaiting task, abort its signal and/or bound the call with its own
`asyncio.timeout` — and fires the driver's actions at random loop iterations. Then it checks:

- exactly one `tools/result`, published before `execute()` returned or raised;
- `ABORTED_BEFORE_DISPATCH` only if the body never started, `ABORTED` only if it did, a success
  only if it did; a started body had finished when `execute()` ended (never abandoned);
- each wrapper scope caught its cancellation iff it fired (`expired()` for `asyncio.timeout`, its
  own abort for `cancels()`), and never anyone else's;
- the caller: `execute()` raises `TimeoutError` iff its own timeout expired, `CancelledError` iff
  its task was cancelled while the call ran, and its task's `cancelling()` is back where it was.

Seeds are fixed, so a failure names a reproducible round; `TETHER_FUZZ_ROUNDS` runs more.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from tether import (
    AbortController,
    AbortError,
    ErrorDetail,
    ToolDispatchExecution,
    ToolExecution,
    ToolExecutionResult,
    ToolFailure,
    ToolRunContext,
)
from tether.kernel import Context
from tether.plugins import timeout_policy
from tether.tools import ToolRuntime

from .conftest import call, raw_tool

Next = Callable[[], Awaitable[ToolExecutionResult]]
ROUNDS = int(os.environ.get("TETHER_FUZZ_ROUNDS", "1000"))
BODIES = ("returns", "suspends", "cooperative", "uncooperative", "fails", "forwards", "sync")
WRAPPERS = ("policy", "own_timeout", "own_cancels", "anyio")


@dataclass
class Round:
    """One round's random choices and what happened in it."""

    body: str
    wrappers: tuple[str, ...]
    budget_ms: float | None
    own_timeout_s: float
    anyio_s: float
    actions: dict[str, int]
    outer_timeout_s: float | None
    started: bool = False
    finished: bool = False
    published: list[ToolExecutionResult] = field(default_factory=list)
    own_timeout_expired: bool | None = None
    own_timeout_caught: bool = False
    own_cancels_fired: bool = False
    own_cancels_caught: bool = False
    anyio_caught: bool = False
    anyio_called: bool = False
    foreign_caught: list[str] = field(default_factory=list)


def _choose(rng: random.Random) -> Round:
    wrappers = tuple(w for w in WRAPPERS if rng.random() < 0.4)
    actions = {
        name: rng.randrange(0, 12)
        for name in ("cancel_task", "abort_signal", "abort_own_cancels")
        if rng.random() < 0.45
    }
    return Round(
        body=rng.choice(BODIES),
        wrappers=wrappers,
        budget_ms=rng.choice([1, 2, 5, 20]) if "policy" in wrappers else None,
        own_timeout_s=rng.choice([0, 0.0005, 0.002, 0.01, 1]),
        anyio_s=rng.choice([0, 0.0005, 0.002, 0.01, 1]),
        actions=actions,
        outer_timeout_s=rng.choice([None, None, 0, 0.001, 0.005, 1]),
    )


def _own(message: str) -> ToolFailure:
    return ToolFailure(error=ErrorDetail(message), content=[{"type": "text", "text": message}])


class Harness:
    """One context for every round: wrappers and bodies read their round by call id."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.rounds: dict[str, Round] = {}
        self.own_controllers: dict[str, AbortController] = {}
        ctx.on("tools/result", self._observe)
        ctx.on("tools/execute", self._anyio)
        ctx.on("tools/execute", self._own_cancels)
        ctx.on("tools/execute", self._own_timeout)

    def _observe(self, exec: ToolExecution, result: ToolExecutionResult) -> None:
        self.rounds[exec.call_id].published.append(result)

    async def _own_timeout(self, exec: ToolDispatchExecution, next: Next) -> Any:
        r = self.rounds[exec.call_id]
        if "own_timeout" not in r.wrappers:
            return await next()
        scope = asyncio.timeout(r.own_timeout_s)
        try:
            async with scope:
                return await next()
        except TimeoutError:
            r.own_timeout_caught = True
            return _own("own timeout")
        finally:
            r.own_timeout_expired = scope.expired()

    async def _own_cancels(self, exec: ToolDispatchExecution, next: Next) -> Any:
        r = self.rounds[exec.call_id]
        if "own_cancels" not in r.wrappers:
            return await next()
        controller = self.own_controllers[exec.call_id]
        try:
            async with controller.signal.cancels():
                return await next()
        except AbortError as exc:
            if exc.reason != "own":
                r.foreign_caught.append(f"own_cancels caught {exc.reason!r}")
            r.own_cancels_caught = True
            return _own("own cancels")

    async def _anyio(self, exec: ToolDispatchExecution, next: Next) -> Any:
        r = self.rounds[exec.call_id]
        if "anyio" not in r.wrappers:
            return await next()
        with anyio.move_on_after(r.anyio_s) as scope:
            return await next()
        r.anyio_called = scope.cancel_called
        r.anyio_caught = scope.cancelled_caught
        return _own("anyio moved on")

    def body(self, kind: str) -> Any:
        rounds = self.rounds

        async def async_body(args: Any, exec: ToolRunContext) -> str:
            r = rounds[exec.call_id]
            r.started = True
            try:
                if kind == "returns":
                    return "ok"
                if kind == "suspends":
                    for _ in range(3):
                        await asyncio.sleep(0)
                    return "ok"
                if kind == "cooperative":
                    for _ in range(8):
                        if exec.signal.aborted:
                            break
                        await asyncio.sleep(0)
                    return "ok"
                if kind == "uncooperative":
                    for _ in range(8):
                        await asyncio.sleep(0)
                    return "ok"
                if kind == "fails":
                    await asyncio.sleep(0)
                    raise ValueError("tool failed")
                async with exec.signal.cancels():  # forwards
                    for _ in range(8):
                        await asyncio.sleep(0)
                return "ok"
            finally:
                r.finished = True

        def sync_body(args: Any, exec: ToolRunContext) -> str:
            r = rounds[exec.call_id]
            r.started = True
            try:
                for _ in range(5):
                    if exec.signal.aborted:
                        break
                    threading.Event().wait(0.0005)
                return "ok"
            finally:
                r.finished = True

        return sync_body if kind == "sync" else async_body

    async def run(self, index: int, r: Round) -> None:
        call_id = f"r{index}"
        self.rounds[call_id] = r
        self.own_controllers[call_id] = own = AbortController()
        caller = AbortController()
        definition = raw_tool(
            f"t{index}", self.body(r.body), **({"timeout_ms": r.budget_ms} if r.budget_ms else {})
        )
        unregister = self.ctx.tools.register(definition)
        outcome: list[str] = []

        async def awaiting() -> None:
            task = asyncio.current_task()
            assert task is not None
            before = task.cancelling()
            outer = None if r.outer_timeout_s is None else asyncio.timeout(r.outer_timeout_s)
            try:
                if outer is None:
                    await self.ctx.tools.execute(
                        call(f"t{index}", signal=caller.signal, call_id=call_id)
                    )
                else:
                    async with outer:
                        await self.ctx.tools.execute(
                            call(f"t{index}", signal=caller.signal, call_id=call_id)
                        )
                outcome.append("returned")
            except TimeoutError:
                outcome.append("TimeoutError")
            except asyncio.CancelledError:
                outcome.append("CancelledError")
                outcome.append(f"published={len(r.published)} finished={r.finished}")
                raise
            finally:
                if outer is not None:
                    outcome.append(f"outer_expired={outer.expired()}")
                outcome.append(f"published={len(r.published)} finished={r.finished}")
                if "CancelledError" not in outcome:
                    outcome.append(f"cancelling={task.cancelling() - before}")

        runner = asyncio.create_task(awaiting())
        cancelled_while_running = False
        for tick in range(14):
            if runner.done():
                break
            if r.actions.get("cancel_task") == tick:
                cancelled_while_running = runner.cancel()
            if r.actions.get("abort_signal") == tick:
                caller.abort()
            if r.actions.get("abort_own_cancels") == tick:
                r.own_cancels_fired = "own_cancels" in r.wrappers
                own.abort("own")
            await asyncio.sleep(0)
        try:
            await runner
        except asyncio.CancelledError:
            pass
        unregister()
        self._check(call_id, r, outcome, cancelled_while_running)

    def _check(self, call_id: str, r: Round, outcome: list[str], cancelled: bool) -> None:
        where = f"{call_id}: {r} → {outcome}"
        if not outcome:  # the caller was cancelled before it ever called execute()
            assert (r.published, r.started) == ([], False), where
            return
        assert len(r.published) == 1, where
        (result,) = r.published
        code = None if not result.is_error or result.error.info is None else result.error.info.code
        if code == "ABORTED_BEFORE_DISPATCH":
            assert not r.started, where
        if code == "ABORTED" or not result.is_error:
            assert r.started, where
        if r.started:
            assert r.finished, where  # never abandoned: done before execute() ended
        assert "published=1 finished=" + str(r.finished) in outcome, where
        assert r.foreign_caught == [], where
        outer_expired = "outer_expired=True" in outcome
        if r.own_timeout_caught:
            assert r.own_timeout_expired, where
        further_out = cancelled or outer_expired or r.anyio_called or r.own_cancels_fired
        if r.own_timeout_expired and not further_out:
            assert r.own_timeout_caught, where  # nothing further out was cancelling the task
        if r.own_cancels_caught:
            assert r.own_cancels_fired, where
        if r.anyio_caught:
            assert r.anyio_called, where
        assert ("TimeoutError" in outcome) == (outer_expired and not cancelled), where
        assert ("CancelledError" in outcome) == cancelled, where
        if not cancelled:
            assert "cancelling=0" in outcome, where


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
async def test_every_call_has_exactly_one_result_and_every_scope_catches_its_own(seed: int) -> None:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(timeout_policy)
    harness = Harness(ctx)
    rng = random.Random(seed)
    try:
        for index in range(ROUNDS // 4):
            await harness.run(seed * 100_000 + index, _choose(rng))
    finally:
        await ctx.dispose()
