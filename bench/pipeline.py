"""Per-call cost of the tool pipeline, against a bare `await body(args)` in the same run.

Prints µs per call (median of ROUNDS rounds × CALLS calls) for: a bare await of the body;
`create_task(body) + await` (what one task per call costs on this machine, right now);
`tools.execute` of a no-op tool with no plugins; the same with the timeout policy (the tool
declares a budget) plus one pre- and one post-execute listener and a `tools/result` observer; and
that full pipeline for a body that suspends once (`await asyncio.sleep(0)`), which cannot finish
in an eager first step. Ratios are to the bare await and to `create_task` of the same run. Then
the listeners left on the long-lived caller signal after 100,000 calls (must be 0) and the
tracemalloc growth over them.

    python bench/pipeline.py [--calls N] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import platform
import statistics
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

    rows = [
        ("bare await body(args)", await measure(bare, opts.calls, opts.rounds)),
        (
            "create_task(body(args)) + await (the floor)",
            await measure(tasked, opts.calls, opts.rounds),
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
    base = rows[0][1]
    floor = rows[1][1]
    print(f"python {platform.python_version()}, {opts.rounds} rounds x {opts.calls} calls")
    print(f"{'path':<50} {'µs/call':>9} {'× bare':>8} {'× task':>8}")
    for name, us in rows:
        print(f"{name:<50} {us:>9.2f} {us / base:>8.1f} {us / floor:>8.2f}")

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
