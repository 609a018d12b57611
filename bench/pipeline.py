"""Per-call cost of the tool pipeline, against a bare `await body(args)` in the same run.

Prints µs per call (median of ROUNDS rounds × CALLS calls) for: a bare await of the body; the
task floors — `create_task(body) + await` (a plain task: the awaiter waits one event-loop
iteration), on 3.12+ `create_task(body, eager_start=True) + await` (a body that never suspends
finishes inside `create_task`, no loop iteration), and 100 plain tasks created, then awaited
(the loop iteration shared by 100); `tools.execute` of a no-op tool with no plugins; the same with
the timeout policy (the tool declares a budget) plus one pre- and one post-execute listener and a
`tools/result` observer; that full pipeline for a body that suspends once (`await
asyncio.sleep(0)`), which cannot finish in an eager first step; and pydantic-ai's
`ToolManager.handle_call` for the same no-op tool (a `FunctionToolset`, no capabilities: the
cheapest form of its agent's tool path; the `bench` dependency group installs pydantic-ai-slim).

Ratios: to the bare await, and `× task` to the task floor that matches what the pipeline itself
does to run a body — a plain task on 3.11, an eager one on 3.12+ (tether's body task starts
eagerly there) — so the ratio is the pipeline's own work, not a loop iteration one side pays
and the other does not. Then the listeners left on the long-lived caller signal after 100,000
calls (must be 0) and the tracemalloc growth over them.

    python bench/pipeline.py [--calls N] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable

from pydantic import BaseModel

from tether import (
    AbortController,
    Accept,
    Allow,
    Context,
    ToolExecutionInput,
    ToolOutput,
    ToolRunContext,
    ToolRuntime,
    define_tool,
)
from tether.plugins import timeout_policy


class NoArgs(BaseModel):
    text: str = ""


async def noop(args: NoArgs, exec: ToolRunContext) -> str:
    return "ok"


async def yields_once(args: NoArgs, exec: ToolRunContext) -> str:
    await asyncio.sleep(0)
    return "ok"


async def bare_body(args: dict[str, str], exec: object) -> str:
    return "ok"


async def measure(run: Callable[[int], Awaitable[None]], calls: int, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        gc.collect()
        start = time.perf_counter()
        await run(calls)
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


async def build(with_policy: bool) -> Context:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    if with_policy:
        await ctx.plugin(timeout_policy)

        async def pre(exec: object, next: Callable[[], Awaitable[object]]) -> object:
            return await next()

        async def post(
            exec: object, result: object, next: Callable[[], Awaitable[object]]
        ) -> object:
            return await next()

        def observe(exec: object, result: object) -> None:
            return None

        ctx.on("tools/pre-execute", pre)
        ctx.on("tools/post-execute", post)
        ctx.on("tools/result", observe)
    for name, body in (("noop", noop), ("yields", yields_once)):
        ctx.tools.register(
            define_tool(
                name=name,
                description="does nothing",
                parameters=NoArgs,
                output=ToolOutput(schema=str),
                execute=body,
                timeout_ms=60_000 if with_policy else None,
            )
        )
    return ctx


async def pydantic_ai_manager() -> Callable[[int], Awaitable[None]] | None:
    """pydantic-ai's `ToolManager.handle_call` for a no-op tool, or None when not installed."""
    try:
        from pydantic_ai import RunContext
        from pydantic_ai.messages import ToolCallPart
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.tool_manager import ToolManager
        from pydantic_ai.toolsets import FunctionToolset
        from pydantic_ai.usage import RunUsage
    except ImportError:
        return None
    toolset: FunctionToolset[None] = FunctionToolset()

    @toolset.tool_plain
    async def noop(text: str = "") -> str:
        """Does nothing."""
        return "ok"

    context = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    await toolset.__aenter__()
    manager = await ToolManager(toolset).for_run_step(context)

    async def run(n: int) -> None:
        handle = manager.handle_call
        for i in range(n):
            if await handle(ToolCallPart("noop", {"text": "hi"}, tool_call_id=f"c{i}")) != "ok":
                raise RuntimeError("pydantic-ai's call did not return ok")

    return run


AGENT_CALLS = 100
"""Tool calls in the one model response of each pydantic-ai agent run (`pydantic_ai_agent`)."""


async def pydantic_ai_agent() -> Callable[[int], Awaitable[float]] | None:
    """pydantic-ai's agent path per tool call, or None when not installed: `Agent.run` whose
    scripted model (a `FunctionModel`) asks for AGENT_CALLS parallel no-op calls, then answers,
    less a run whose model answers at once, divided by AGENT_CALLS. What the agent does around
    each call (its parts, validation, the tool manager, its hooks, the returned parts) is in; the
    one extra model step of the run with calls is spread over its calls. The callable runs about
    `calls` calls and returns µs per call."""
    try:
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.models.function import AgentInfo, FunctionModel
    except ImportError:
        return None

    def script(calls: int) -> FunctionModel:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            if calls and len(messages) == 1:
                parts = [
                    ToolCallPart("noop", {"text": "hi"}, tool_call_id=f"c{i}") for i in range(calls)
                ]
                return ModelResponse(parts=parts)
            return ModelResponse(parts=[TextPart("done")])

        return FunctionModel(respond)

    agent: Agent[None, str] = Agent()

    @agent.tool_plain
    async def noop(text: str = "") -> str:
        """Does nothing."""
        return "ok"

    with_calls, without = script(AGENT_CALLS), script(0)

    async def per_call(calls: int) -> float:
        runs = max(1, calls // AGENT_CALLS)
        gc.collect()
        started = time.perf_counter()
        for _ in range(runs):
            if (await agent.run("go", model=with_calls)).output != "done":
                raise RuntimeError("pydantic-ai's agent run did not end with its answer")
        middle = time.perf_counter()
        for _ in range(runs):
            await agent.run("go", model=without)
        ended = time.perf_counter()
        return ((middle - started) - (ended - middle)) / (runs * AGENT_CALLS) * 1e6

    return per_call


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args()
    caller = AbortController().signal
    args = {"text": "hi"}

    async def bare(n: int) -> None:
        for _ in range(n):
            await bare_body(args, None)

    async def tasked(n: int) -> None:
        loop = asyncio.get_running_loop()
        for _ in range(n):
            await loop.create_task(bare_body(args, None))

    async def eager(n: int) -> None:
        loop = asyncio.get_running_loop()
        for _ in range(n):
            await asyncio.Task(bare_body(args, None), loop=loop, eager_start=True)  # type: ignore[call-arg]

    async def batched(n: int) -> None:
        loop = asyncio.get_running_loop()
        for _ in range(n // 100):
            tasks = [loop.create_task(bare_body(args, None)) for _ in range(100)]
            for task in tasks:
                await task

    plain_ctx = await build(with_policy=False)
    full_ctx = await build(with_policy=True)

    def pipeline(ctx: Context, tool: str = "noop") -> Callable[[int], Awaitable[None]]:
        execute = ctx.tools.execute

        async def run(n: int) -> None:
            for i in range(n):
                result = await execute(
                    ToolExecutionInput(call_id=f"c{i}", name=tool, arguments=args, signal=caller)
                )
                if result.is_error:
                    raise RuntimeError(result)

        return run

    eager_python = sys.version_info >= (3, 12)
    plain_task = await measure(tasked, opts.calls, opts.rounds)
    rows = [
        ("bare await body(args)", await measure(bare, opts.calls, opts.rounds)),
        ("create_task(body) + await (plain task)", plain_task),
    ]
    if eager_python:
        rows.append(
            (
                "create_task(body, eager_start=True) + await",
                await measure(eager, opts.calls, opts.rounds),
            )
        )
    rows += [
        (
            "100 plain tasks created, then awaited (each)",
            await measure(batched, opts.calls, opts.rounds),
        ),
        ("tools.execute, no plugins", await measure(pipeline(plain_ctx), opts.calls, opts.rounds)),
        (
            "tools.execute + timeout policy + pre + post + obs",
            await measure(pipeline(full_ctx), opts.calls, opts.rounds),
        ),
        (
            "  the same, body suspends once",
            await measure(pipeline(full_ctx, "yields"), opts.calls, opts.rounds),
        ),
    ]
    peer = await pydantic_ai_manager()
    if peer is not None:
        rows.append(
            ("pydantic-ai ToolManager.handle_call", await measure(peer, opts.calls, opts.rounds))
        )
    agent = await pydantic_ai_agent()
    if agent is not None:
        samples = [await agent(opts.calls) for _ in range(opts.rounds)]
        rows.append(("pydantic-ai Agent.run, per tool call", statistics.median(samples)))
    base = rows[0][1]
    floor = rows[2][1] if eager_python else plain_task
    gauge = "eager task" if eager_python else "plain task"
    load = os.getloadavg()
    print(
        f"python {platform.python_version()}, {opts.rounds} rounds x {opts.calls} calls; load"
        f" average {load[0]:.2f}, {load[1]:.2f}; × task: to the {gauge} floor"
    )
    print(f"{'path':<50} {'µs/call':>9} {'× bare':>8} {'× task':>8}")
    for name, us in rows:
        print(f"{name:<50} {us:>9.2f} {us / base:>8.1f} {us / floor:>8.2f}")
    full = dict(rows)["tools.execute + timeout policy + pre + post + obs"]
    print(
        f"full pipeline against the other floors: {full / plain_task:.2f}× a plain task,"
        f" {full / dict(rows)['100 plain tasks created, then awaited (each)']:.2f}× a batched one"
    )
    if peer is None:
        print("pydantic-ai: not installed (the `bench` dependency group: pydantic-ai-slim)")
    else:
        ratio = dict(rows)["pydantic-ai ToolManager.handle_call"] / full
        agent_ratio = dict(rows)["pydantic-ai Agent.run, per tool call"] / full
        print(
            f"pydantic-ai's ToolManager.handle_call / tether's full pipeline: {ratio:.2f}×;"
            f" its agent path per call / tether's full pipeline: {agent_ratio:.2f}× (target ≥ 3×)"
        )

    run_full = pipeline(full_ctx)
    await run_full(5_000)  # warm caches before measuring growth
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(10):
        await run_full(10_000)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    print(f"listeners left on the caller signal after 100,000 calls: {caller.listener_count}")
    print(f"tracemalloc growth over 100,000 calls: {(after - before) / 1024:.1f} KiB")
    _ = (Allow, Accept)
    await plain_ctx.dispose()
    await full_ctx.dispose()


if __name__ == "__main__":
    asyncio.run(main())
