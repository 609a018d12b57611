"""1,000 concurrent calls with every kind of body and every kind of interruption, in debug mode.

Contract: under any mix of cooperative, uncooperative-but-finite, sync (worker thread) and
raising bodies, random caller aborts, random declared budgets and random cancellation of the
tasks awaiting `execute()`, every call publishes exactly one result whose code its timing allows,
no call hangs, the loop's exception handler is never called, no body task is left, and no
listener is left on any caller signal.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from tether import AbortController, ToolExecutionInput, ToolExecutionResult, ToolRunContext
from tether.kernel import Context
from tether.plugins import timeout_policy
from tether.tools import ToolRuntime
from tether.tools.body import is_body_task

from .conftest import raw_tool

CALLS = 1_000
KINDS = ("cooperative", "uncooperative", "sync", "raising")
BUDGETS: tuple[int | None, ...] = (None, 5, 20, 60)


async def _cooperative(args: Any, exec: ToolRunContext) -> str:
    async with exec.signal.cancels():
        await asyncio.sleep(float(args["s"]))
    return "ok"


async def _uncooperative(args: Any, exec: ToolRunContext) -> str:
    await asyncio.sleep(float(args["s"]))  # ignores its signal, but finishes
    return "ok"


def _sync(args: Any, exec: ToolRunContext) -> str:
    time.sleep(float(args["s"]) / 4)
    return "ok"


async def _raising(args: Any, exec: ToolRunContext) -> str:
    await asyncio.sleep(float(args["s"]))
    raise ValueError("boom")


BODIES = {
    "cooperative": _cooperative,
    "uncooperative": _uncooperative,
    "sync": _sync,
    "raising": _raising,
}


@dataclass
class Plan:
    """One call and what is done to it."""

    call_id: str
    kind: str
    budget: int | None
    abort_after: float | None
    cancel_after: float | None
    controller: AbortController = field(default_factory=AbortController)


def _allowed(plan: Plan, cancelled_awaiter: bool) -> set[str]:
    """The result codes this call's timing allows (`ok`/`boom` for the body's own outcomes)."""
    interrupted = plan.abort_after is not None or cancelled_awaiter
    codes = {"boom"} if plan.kind == "raising" else {"ok"}
    if plan.budget is not None:
        codes.add("TOOL_TIMEOUT")
    if interrupted:
        codes.add("ABORTED_BEFORE_DISPATCH")
        if plan.kind != "raising":
            codes.add("ABORTED")
    return codes


def _code(result: ToolExecutionResult) -> str:
    if not result.is_error:
        return "ok"
    info = result.error.info
    return "boom" if info is None else info.code


async def _load(seed: int) -> None:
    rng = random.Random(seed)
    loop = asyncio.get_running_loop()
    handler_calls: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _, context: handler_calls.append(context))
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(timeout_policy)
    for kind in KINDS:
        for budget in BUDGETS:
            ctx.tools.register(raw_tool(f"{kind}-{budget}", BODIES[kind], timeout_ms=budget))
    published: dict[str, list[ToolExecutionResult]] = {}
    ctx.on(
        "tools/result",
        lambda exec, result: published.setdefault(exec.call_id, []).append(result),
    )
    plans = [
        Plan(
            call_id=f"c{i}",
            kind=rng.choice(KINDS),
            budget=rng.choice(BUDGETS),
            abort_after=rng.choice([None, rng.uniform(0, 0.05)]),
            cancel_after=rng.choice([None, None, rng.uniform(0, 0.05)]),
        )
        for i in range(CALLS)
    ]
    before = asyncio.all_tasks()
    tasks: dict[str, asyncio.Task[ToolExecutionResult]] = {}
    for plan in plans:
        arguments = {"s": rng.uniform(0, 0.04)}
        task = asyncio.create_task(ctx.tools.execute(_input(plan, arguments)))
        tasks[plan.call_id] = task
        if plan.abort_after is not None:
            loop.call_later(plan.abort_after, plan.controller.abort)
        if plan.cancel_after is not None:
            loop.call_later(plan.cancel_after, task.cancel)

    _, pending = await asyncio.wait(tasks.values(), timeout=120)

    assert pending == set(), f"{len(pending)} calls hung"
    for plan in plans:
        task = tasks[plan.call_id]
        results = published.get(plan.call_id, [])
        assert len(results) == 1, f"{plan}: {len(results)} results"
        cancelled = task.cancelled()
        if not cancelled:
            assert task.result() is results[0]
        assert _code(results[0]) in _allowed(plan, cancelled), (plan, results[0].to_json())
        assert plan.controller.signal.listener_count == 0, plan
    assert handler_calls == []
    assert not [t for t in asyncio.all_tasks() - before if is_body_task(t)]


def _input(plan: Plan, arguments: dict[str, float]) -> ToolExecutionInput:
    return ToolExecutionInput(
        call_id=plan.call_id,
        name=f"{plan.kind}-{plan.budget}",
        arguments=arguments,
        signal=plan.controller.signal,
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_thousand_concurrent_calls_each_publish_one_result_their_timing_allows(
    seed: int,
) -> None:
    with asyncio.Runner(debug=True) as runner:
        runner.run(_load(seed))
