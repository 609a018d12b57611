"""Code Mode's costs: sandbox start-up, and what one tool call from a program costs.

1. Start-up. `run_code` with `return 1` through `ctx.tools.execute`: a fresh one-worker Monty
   pool (process spawn), the prelude feed, the program feed, settlement and the worker's exit.
2. Inner call overhead. A program that awaits a no-op tool CALLS times in a loop, minus the same
   program with the loop body replaced by `pass` (start-up and loop cost cancel), per call,
   against the same no-op called CALLS times through `ctx.tools.execute` from the host.
3. The sandbox's own round trip. The same loop driven by Monty directly (`feed_start`, each
   awaited call answered by `resume_auto` awaiting a host coroutine — how tether answers a call
   the program awaits at once), without tether: what Monty itself costs per host call.

Each is the median of ROUNDS rounds, interleaved round by round. The target of issue 14: the
inner call overhead ≤ 2 × a top-level call + the sandbox's round trip.

Wall-clock time on the shared 2-core VM moves by 2–3× with the load. `--iterations` counts event
loop iterations per call instead (under cProfile, which counts calls of the loop's `_run_once`;
bench-only, never in src): a count does not move with the load.

    python bench/code_mode.py [--calls N] [--rounds N] [--iterations]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import time
from typing import Any

from pydantic import BaseModel

from tether import (
    AbortController,
    Context,
    ToolExecutionInput,
    ToolOutput,
    ToolRunContext,
    ToolRuntime,
    define_tool,
)
from tether.plugins.code_mode import plugin as code_mode


class NoArgs(BaseModel):
    text: str = ""


async def noop(args: NoArgs, exec: ToolRunContext) -> str:
    return "ok"


async def build() -> Context:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(code_mode, {"max_calls": 1_000_000})
    ctx.tools.register(
        define_tool(
            name="noop",
            description="Do nothing.",
            parameters=NoArgs,
            output=ToolOutput(schema=str),
            execute=noop,
            is_concurrency_safe=lambda _args: True,
        )
    )
    return ctx


async def run_code(ctx: Context, code: str) -> float:
    began = time.perf_counter()
    result = await ctx.tools.execute(
        ToolExecutionInput(
            call_id="rc",
            name="run_code",
            arguments={"code": code, "description": "Benchmark"},
            signal=AbortController().signal,
        )
    )
    elapsed = time.perf_counter() - began
    if result.is_error:
        raise RuntimeError(str(result.content))
    return elapsed


async def top_level(ctx: Context, calls: int) -> float:
    signal = AbortController().signal
    began = time.perf_counter()
    for i in range(calls):
        result = await ctx.tools.execute(
            ToolExecutionInput(call_id=f"t{i}", name="noop", arguments={}, signal=signal)
        )
        if result.is_error:
            raise RuntimeError(str(result.content))
    return time.perf_counter() - began


async def raw_monty(calls: int) -> float:
    """The same loop on Monty alone, each awaited call answered the way tether answers an
    eagerly awaited one (`resume_auto` awaiting a host coroutine): one round trip per call."""
    import pydantic_monty as m

    async def noop_host(args: object) -> str:
        return "ok"

    code = f"for i in range({calls}):\n    await noop({{}})\n"
    pool = m.AsyncMonty(min_processes=1, max_processes=1)
    limits = {"max_suspensions": 10 * calls + 100}
    async with pool, pool.checkout(limits=limits) as session:  # type: ignore[arg-type]
        began = time.perf_counter()
        snap: Any = await session.feed_start(code, external_lookup={"noop": noop_host})
        while not isinstance(snap, m.MontyComplete):
            snap = await snap.resume_auto()
        return time.perf_counter() - began


async def main(calls: int, rounds: int) -> None:
    ctx = await build()
    loop_code = f"for i in range({calls}):\n    await tools.noop({{}})"
    empty_code = f"for i in range({calls}):\n    pass"
    startup: list[float] = []
    inner: list[float] = []
    host: list[float] = []
    monty: list[float] = []
    try:
        await run_code(ctx, "return 1")  # warm-up: imports, first spawn
        for _ in range(rounds):
            startup.append(await run_code(ctx, "return 1"))
            with_calls = await run_code(ctx, loop_code)
            without = await run_code(ctx, empty_code)
            inner.append((with_calls - without) / calls)
            host.append(await top_level(ctx, calls) / calls)
            monty.append(await raw_monty(calls) / calls)
    finally:
        await ctx.dispose()
    us = 1e6
    s_startup = statistics.median(startup) * 1000
    s_inner = statistics.median(inner) * us
    s_host = statistics.median(host) * us
    s_monty = statistics.median(monty) * us
    target = 2 * s_host + s_monty
    print(
        f"{os.cpu_count()} CPUs, {platform.machine()}, CPython {platform.python_version()}; "
        f"median of {rounds} rounds, {calls} calls per round"
    )
    print("| measure                                         |      value |")
    print("|-------------------------------------------------|-----------:|")
    print(f"| sandbox start-up (`run_code` of `return 1`)     | {s_startup:7.1f} ms |")
    print(f"| top-level `ctx.tools.execute` of a no-op         | {s_host:7.1f} µs |")
    print(f"| Monty's own host round trip (no tether)          | {s_monty:7.1f} µs |")
    print(f"| inner call from a program (tether + Monty)       | {s_inner:7.1f} µs |")
    print(f"| target: 2 × top-level + Monty round trip         | {target:7.1f} µs |")
    print(f"inner call within target: {'yes' if s_inner <= target else 'no'}")


async def iterations(calls: int) -> None:
    import cProfile
    import io
    import pstats

    ctx = await build()
    await run_code(ctx, "return 1")
    loop_code = f"for i in range({calls}):\n    await tools.noop({{}})"
    empty_code = f"for i in range({calls}):\n    pass"
    measures = {
        "inner call from a program": lambda: run_code(ctx, loop_code),
        "(the same program without calls)": lambda: run_code(ctx, empty_code),
        "Monty's own host round trip": lambda: raw_monty(calls),
        "top-level `ctx.tools.execute`": lambda: top_level(ctx, calls),
    }
    counts: dict[str, float] = {}
    try:
        for label, measure in measures.items():
            profile = cProfile.Profile()
            profile.enable()
            await measure()
            profile.disable()
            stats = pstats.Stats(profile, stream=io.StringIO()).stats  # type: ignore[attr-defined]
            runs = sum(v[1] for k, v in stats.items() if k[2] == "_run_once")
            counts[label] = runs / calls
    finally:
        await ctx.dispose()
    print(f"event loop iterations per call ({calls} calls)")
    for label, count in counts.items():
        print(f"| {label:<40} | {count:5.2f} |")
    inner = counts["inner call from a program"] - counts["(the same program without calls)"]
    target = 2 * counts["top-level `ctx.tools.execute`"] + counts["Monty's own host round trip"]
    print(f"inner {inner:.2f} vs target {target:.2f}: within {'yes' if inner <= target else 'no'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", action="store_true")
    options = parser.parse_args()
    if options.iterations:
        asyncio.run(iterations(options.calls))
    else:
        asyncio.run(main(options.calls, options.rounds))
