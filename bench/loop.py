"""The agent loop's own costs: the step scheduler per tool call, and durable session appends.

1. Scheduler overhead. One step of CALLS parallel-safe no-op calls through `execute_tool_calls`
   (pool cap 10, the default, and cap = CALLS) with an in-memory recorder, against the same calls
   through `tools.execute` alone, awaited one after another. The three are interleaved round by
   round (rotating which goes first, GC paused within a round); µs per call is the median over
   ROUNDS rounds, and the overhead is the median of the per-round differences.
2. Durable appends. `tool/call` + `tool/result` pairs appended to a `SessionLog` in a temporary
   directory (each of the two is fsynced before `append` returns): appends per second, median of
   ROUNDS rounds of PAIRS pairs each (a fresh session per round).

    python bench/loop.py [--calls N] [--rounds N] [--pairs N] [--dir PATH]

Targets: scheduler overhead ≤ 50 µs per call; ≥ 2,000 durable appends/s.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

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
from tether.agent.scheduler import ToolCallRequest, execute_tool_calls
from tether.agent.session import SessionStore
from tether.tools.results import ToolExecutionResult, UserMessage

SCHEDULER_TARGET_US = 50.0
APPENDS_TARGET = 2_000.0


class NoArgs(BaseModel):
    text: str = ""


async def noop(args: NoArgs, exec: ToolRunContext) -> str:
    return "ok"


class CountingRecorder:
    """The cheapest `StepRecorder`: a counter for seqs, nothing stored."""

    def __init__(self) -> None:
        self.seq = 0
        self.results = 0

    async def tool_call(self, call: ToolCallRequest) -> int:
        self.seq += 1
        return self.seq

    async def durable(self) -> None:
        pass

    async def tool_result(
        self, call: ToolCallRequest, call_seq: int, result: ToolExecutionResult
    ) -> None:
        if result.is_error:
            raise RuntimeError(f"{call.id}: {result}")
        self.results += 1


def _discard(message: UserMessage) -> None:
    raise RuntimeError("no contexts expected")


async def build() -> Context:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    ctx.tools.register(
        define_tool(
            name="noop",
            description="does nothing",
            parameters=NoArgs,
            output=ToolOutput(schema=str),
            execute=noop,
            is_concurrency_safe=lambda args: True,
        )
    )
    return ctx


async def scheduler_rows(calls: int, rounds: int) -> tuple[list[tuple[str, float]], float, float]:
    ctx = await build()
    runtime = ctx.tools.runtime
    requests = [ToolCallRequest(f"c{i}", "noop", '{"text": "hi"}') for i in range(calls)]
    turn = AbortController().signal

    async def sequential() -> None:
        execute = runtime.execute
        for request in requests:
            result = await execute(
                ToolExecutionInput(
                    call_id=request.id, name="noop", arguments={"text": "hi"}, signal=turn
                )
            )
            if result.is_error:
                raise RuntimeError(result)

    def step(cap: int) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            recorder = CountingRecorder()
            outcome = await execute_tool_calls(
                runtime,
                requests,
                signal=turn,
                agent=None,
                recorder=recorder,
                accept_context=_discard,
                max_parallel=cap,
            )
            if recorder.results != calls or outcome.aborted:
                raise RuntimeError("the step did not commit every call")

        return run

    cases: list[tuple[str, Callable[[], Awaitable[None]]]] = [
        (f"tools.execute x {calls}, sequential awaits", sequential),
        (f"execute_tool_calls, {calls} calls, cap 10", step(10)),
        (f"execute_tool_calls, {calls} calls, cap {calls}", step(calls)),
    ]
    for _, run in cases:  # warm up
        await run()
    samples: dict[str, list[float]] = {name: [] for name, _ in cases}
    for r in range(rounds):
        order = cases[r % len(cases) :] + cases[: r % len(cases)]
        gc.collect()
        gc.disable()
        try:
            for name, run in order:
                start = time.perf_counter()
                await run()
                samples[name].append((time.perf_counter() - start) / calls * 1e6)
        finally:
            gc.enable()
    await ctx.dispose()
    base_name = cases[0][0]
    rows = [(name, statistics.median(samples[name])) for name, _ in cases]
    overheads = [
        statistics.median(s - b for s, b in zip(samples[name], samples[base_name], strict=True))
        for name, _ in cases[1:]
    ]
    return rows, overheads[0], overheads[1]


def appends_per_second(root: Path, pairs: int, rounds: int) -> tuple[float, float]:
    """Median durable appends/s and median µs per append."""
    from tether.tools.results import ToolSuccess, text_content

    store = SessionStore(root)
    success = ToolSuccess(value="ok", content=text_content("ok"))
    rates = []
    for _ in range(rounds):
        log = store.create(cwd=root)
        log.turn_start(1)  # materialises the file; not counted
        log.step_start(1, 1)
        start = time.perf_counter()
        for i in range(pairs):
            call = log.tool_call(1, 1, f"c{i}", "bash", '{"command": "true"}')
            log.tool_outcome(1, 1, f"c{i}", success, call_seq=call.seq)
        elapsed = time.perf_counter() - start
        log.close()
        rates.append(2 * pairs / elapsed)
    rate = statistics.median(rates)
    return rate, 1e6 / rate


def filesystem(path: Path) -> str:
    """The type of the filesystem holding `path` (from /proc/mounts; longest mount prefix)."""
    best, kind = "", "unknown"
    resolved = str(path.resolve())
    try:
        with open("/proc/mounts") as mounts:
            for line in mounts:
                _dev, point, fstype, *_ = line.split()
                inside = resolved == point or resolved.startswith(point.rstrip("/") + "/")
                if inside and len(point) > len(best):
                    best, kind = point, fstype
    except OSError:
        pass
    return kind


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} CPUs, {model}, {platform.machine()}, "
        f"{platform.python_implementation()} {platform.python_version()}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--pairs", type=int, default=1_000)
    parser.add_argument("--dir", type=Path, default=None, help="where the session files go")
    opts = parser.parse_args()

    print(f"{machine()}; {opts.rounds} rounds")
    rows, overhead_10, overhead_all = await scheduler_rows(opts.calls, opts.rounds)
    base = rows[0][1]
    print()
    print(f"| {'path':<44} | {'µs/call':>8} | {'overhead µs/call':>16} | {'≤ 50 µs':^7} |")
    print(f"|{'-' * 46}|{'-' * 9}:|{'-' * 17}:|:{'-' * 7}:|")
    print(f"| {rows[0][0]:<44} | {base:>8.1f} | {'(baseline)':>16} | {'':^7} |")
    for (name, us), overhead in zip(rows[1:], (overhead_10, overhead_all), strict=True):
        met = "yes" if overhead <= SCHEDULER_TARGET_US else "NO"
        print(f"| {name:<44} | {us:>8.1f} | {overhead:>16.1f} | {met:^7} |")

    with tempfile.TemporaryDirectory(dir=opts.dir) as tmp:
        rate, us = appends_per_second(Path(tmp), opts.pairs, opts.rounds)
        where = f"{tmp} ({filesystem(Path(tmp))})"
    print()
    print(f"durable appends under {where}, {opts.pairs} tool/call + tool/result pairs per round")
    print(f"| {'appends':<30} | {'appends/s':>9} | {'µs/append':>9} | {'≥ 2,000/s':^9} |")
    print(f"|{'-' * 32}|{'-' * 10}:|{'-' * 10}:|:{'-' * 9}:|")
    met = "yes" if rate >= APPENDS_TARGET else "NO"
    print(f"| {'tool/call + tool/result, fsync':<30} | {rate:>9,.0f} | {us:>9.1f} | {met:^9} |")


if __name__ == "__main__":
    asyncio.run(main())
