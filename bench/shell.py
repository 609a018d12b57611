"""Benchmark of the shell capability: termination latency and per-call overhead.

Run: `python bench/shell.py`. Prints two tables.

1. Abort → process-group death. A `bash` tool call runs a tree (a bash leader with two `sleep`
   children); once every pid is up, the caller's signal is aborted. Measured: from `abort()` to
   the tool result (the shell settles only after the group is confirmed gone), then every pid
   is checked with psutil (a zombie counts as dead). Two trees: one that respects SIGTERM, one
   whose members ignore it (`trap '' TERM`, inherited), so SIGKILL follows after `grace_ms`
   (200 here).
2. Per-call overhead: the `bash` tool running `true` through `ctx.tools.execute` (validation,
   pipeline, deadline, pipes, collection, rendering) against a raw
   `asyncio.create_subprocess_exec("bash", "-c", "true")` + `wait()`, interleaved in the same
   run; median µs per call over ROUNDS × CALLS, and the ratio.

Targets: TERM-respecting tree dead within 100 ms of abort (TERM-ignoring: within grace + 100 ms);
overhead ≤ 1.3× the raw spawn.
"""

from __future__ import annotations

import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

from tether.core.signals import AbortController
from tether.kernel import Context
from tether.plugins.shell import bash as bash_plugin
from tether.plugins.shell import plugin as shell_plugin
from tether.tools import ToolExecutionInput, ToolRuntime

GRACE_MS = 200
ABORT_RUNS = {"TERM-respecting": 20, "TERM-ignoring": 5}
ROUNDS = 7
CALLS = 40
TARGET_DEATH_MS = 100.0
TARGET_RATIO = 1.3


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def read_pids(path: Path) -> list[int]:
    try:
        return [int(x) for x in path.read_text().split()]
    except FileNotFoundError:
        return []


async def mounted() -> Context:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(shell_plugin, {"grace_ms": GRACE_MS})
    await ctx.plugin(bash_plugin)
    return ctx


async def abort_to_death(ctx: Context, ignore_term: bool, workdir: Path, n: int) -> float:
    """ms from `abort()` to the tool result; raises if any pid of the tree survived."""
    pidfile = workdir / f"pids-{'ignoring' if ignore_term else 'respecting'}-{n}"
    trap = "trap '' TERM; " if ignore_term else ""
    command = (
        f"{trap}echo $$ > {pidfile}; sleep 60 & echo $! >> {pidfile}; "
        f"sleep 60 & echo $! >> {pidfile}; wait"
    )
    controller = AbortController()
    call = asyncio.ensure_future(
        ctx.tools.execute(
            ToolExecutionInput(
                call_id=f"abort-{n}",
                name="bash",
                arguments={"command": command, "description": "tree"},
                signal=controller.signal,
            )
        )
    )
    while len(read_pids(pidfile)) < 3:
        await asyncio.sleep(0.001)
    started = time.perf_counter()
    controller.abort()
    result = await call
    elapsed = (time.perf_counter() - started) * 1000
    survivors = [pid for pid in read_pids(pidfile) if alive(pid)]
    if survivors or not result.is_error:
        raise SystemExit(f"tree survived the abort: {survivors} ({result})")
    return elapsed


async def tool_true(ctx: Context, n: int) -> None:
    result = await ctx.tools.execute(
        ToolExecutionInput(
            call_id=f"true-{n}",
            name="bash",
            arguments={"command": "true", "description": "nothing"},
            signal=AbortController().signal,
        )
    )
    if result.is_error:
        raise SystemExit(f"bash true failed: {result}")


async def raw_true() -> None:
    process = await asyncio.create_subprocess_exec("bash", "-c", "true")
    await process.wait()


async def per_call_us(run: object, calls: int) -> float:
    samples = []
    for n in range(calls):
        started = time.perf_counter()
        await run(n)  # type: ignore[operator]
        samples.append((time.perf_counter() - started) * 1e6)
    return statistics.median(samples)


async def main() -> None:
    ctx = await mounted()
    print(
        f"# shell bench — {os.cpu_count()} CPUs, {platform.machine()}, "
        f"CPython {platform.python_version()}, grace_ms={GRACE_MS}\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for label, runs in ABORT_RUNS.items():
            ms = [
                await abort_to_death(ctx, label == "TERM-ignoring", Path(tmp), n)
                for n in range(runs)
            ]
            rows.append((label, runs, statistics.median(ms), max(ms)))
    print("| tree (leader + 2 children) | runs | median ms | max ms | target (max)         | met |")
    print("|----------------------------|-----:|----------:|-------:|----------------------|:---:|")
    for label, runs, median, worst in rows:
        limit = TARGET_DEATH_MS if label == "TERM-respecting" else GRACE_MS + TARGET_DEATH_MS
        target = f"≤ {limit:.0f} ms" + (" (grace+100)" if label != "TERM-respecting" else "")
        met = "yes" if worst <= limit else "NO"
        cells = f"{label:<26} | {runs:>4} | {median:>9.1f} | {worst:>6.1f} | {target:<20}"
        print(f"| {cells} | {met:^3} |")

    for n in range(10):  # warm up both paths
        await tool_true(ctx, n)
        await raw_true()
    tool_medians, raw_medians, ratios = [], [], []
    for _ in range(ROUNDS):
        raw = await per_call_us(lambda _n: raw_true(), CALLS)
        tool = await per_call_us(lambda n: tool_true(ctx, n), CALLS)
        raw_medians.append(raw)
        tool_medians.append(tool)
        ratios.append(tool / raw)
    raw_us, tool_us, ratio = (
        statistics.median(raw_medians),
        statistics.median(tool_medians),
        statistics.median(ratios),
    )
    print()
    print("| per call (`true`)                                   | µs/call | × raw  | ≤ 1.3× |")
    print("|-----------------------------------------------------|--------:|-------:|:------:|")
    raw_label = "raw create_subprocess_exec('bash','-c','true')+wait"
    print(f"| {raw_label} | {raw_us:>7.0f} |  1.00× |        |")
    print(
        f"| bash tool via ctx.tools.execute                     | {tool_us:>7.0f} | "
        f"{ratio:>5.2f}× | {'yes' if ratio <= TARGET_RATIO else 'NO':^6} |"
    )
    print(f"\n(median of {ROUNDS} rounds × {CALLS} calls; ratio = median of per-round ratios)")
    await ctx.dispose()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
