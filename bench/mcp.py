"""Benchmark of the `mcp` client plugin: per-call overhead and abort → server-observed latency.

Run: `python bench/mcp.py`. Prints two tables. The server is the tests' toolbox
(`tests/plugins/mcp/servers/toolbox.py`, the SDK's `MCPServer` over stdio, a subprocess).

1. Per-call overhead: `mcp__box__echo` through `ctx.tools.execute` (pipeline, the plugin's
   send task, our request id, result mapping) against the bare SDK's
   `ClientSession.call_tool("echo", ...)` on a second instance of the same server, one call of
   each in turn; the median of ROUNDS per-round medians of CALLS calls, and the ratio.
   Target: ≤ 1.2×.
2. Abort → server-observed: `mcp__box__slow` runs until the server has recorded the call, then
   the caller's signal is aborted. Measured on the server's own clock: from the client's
   `cancel_sent_at` (wall clock, in the result's `meta.mcp`) to the moment the tool's handler saw
   its cancellation (recorded by the server); and from `abort()` to the tool result (the cancel
   confirmation included). Target: server-observed within 100 ms.
"""

from __future__ import annotations

import asyncio
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

# This file is named like the SDK: without its own directory on the path, `mcp` is the SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from tether.core.signals import AbortController  # noqa: E402
from tether.kernel import Context  # noqa: E402
from tether.plugins import mcp as mcp_plugin  # noqa: E402
from tether.tools import ToolExecutionInput, ToolFailure, ToolRuntime  # noqa: E402

TOOLBOX = str(Path(__file__).resolve().parents[1] / "tests/plugins/mcp/servers/toolbox.py")
ROUNDS = 7
CALLS = 200
ABORTS = 20
TARGET_RATIO = 1.2
TARGET_OBSERVED_MS = 100.0


def _events(record: Path, kind: str) -> list[dict[str, Any]]:
    if not record.exists():
        return []
    lines = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    return [line for line in lines if line["event"] == kind]


async def _until(predicate: Any) -> None:
    while not predicate():
        await asyncio.sleep(0.002)


async def overhead(workdir: Path) -> tuple[float, float]:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    entry = {"command": sys.executable, "args": [TOOLBOX, str(workdir / "tether.jsonl")]}
    await ctx.plugin(mcp_plugin, {"servers": {"box": entry}})
    params = StdioServerParameters(command=sys.executable, args=[TOOLBOX, str(workdir / "b.jsonl")])
    signal = AbortController().signal
    tether_us: list[float] = []
    bare_us: list[float] = []
    try:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            for round_ in range(ROUNDS + 1):  # round 0 warms up both
                tether_round: list[float] = []
                bare_round: list[float] = []
                for i in range(CALLS):  # one of each in turn: load drift hits both alike
                    started = time.perf_counter()
                    await ctx.tools.execute(
                        ToolExecutionInput(
                            call_id=f"c{i}",
                            name="mcp__box__echo",
                            arguments={"text": "x"},
                            signal=signal,
                        )
                    )
                    middle = time.perf_counter()
                    await session.call_tool("echo", {"text": "x"})
                    tether_round.append((middle - started) * 1e6)
                    bare_round.append((time.perf_counter() - middle) * 1e6)
                if round_:
                    tether_us.append(statistics.median(tether_round))
                    bare_us.append(statistics.median(bare_round))
    finally:
        await ctx.dispose()
    return statistics.median(tether_us), statistics.median(bare_us)


async def abort_latency(workdir: Path) -> tuple[list[float], list[float]]:
    record = workdir / "abort.jsonl"
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    entry = {"command": sys.executable, "args": [TOOLBOX, str(record)]}
    await ctx.plugin(mcp_plugin, {"servers": {"box": entry}})
    observed_ms: list[float] = []
    result_ms: list[float] = []
    try:
        for n in range(1, ABORTS + 1):
            controller = AbortController()
            running = asyncio.ensure_future(
                ctx.tools.execute(
                    ToolExecutionInput(
                        call_id=f"a{n}",
                        name="mcp__box__slow",
                        arguments={"seconds": 30},
                        signal=controller.signal,
                    )
                )
            )
            await _until(lambda n=n: len(_events(record, "call")) == n)  # type: ignore[misc]
            aborted = time.perf_counter()
            controller.abort()
            result = await running
            result_ms.append((time.perf_counter() - aborted) * 1000)
            assert isinstance(result, ToolFailure)
            assert result.code == "ABORTED"
            meta = cast(dict[str, Any], result.meta)["mcp"]
            await _until(lambda n=n: len(_events(record, "cancelled")) == n)  # type: ignore[misc]
            seen = _events(record, "cancelled")[-1]["at"]
            observed_ms.append((seen - meta["cancel_sent_at"]) * 1000)
    finally:
        await ctx.dispose()
    return observed_ms, result_ms


def _row(label: str, values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    return f"| {label} | {statistics.median(values):.1f} | {p95:.1f} | {max(values):.1f} |"


async def main() -> None:
    print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        tether_us, bare_us = await overhead(workdir)
        ratio = tether_us / bare_us
        print()
        print(f"per call over stdio, median of {ROUNDS} rounds x {CALLS} calls")
        print("| path | µs/call |")
        print("|---|---|")
        print(f"| bare SDK `ClientSession.call_tool` | {bare_us:.0f} |")
        print(f"| tether `ctx.tools.execute` (mcp plugin) | {tether_us:.0f} |")
        verdict = "ok" if ratio <= TARGET_RATIO else "OVER TARGET"
        print(f"ratio {ratio:.2f}x (target <= {TARGET_RATIO}x): {verdict}")
        observed, results = await abort_latency(workdir)
        print()
        print(f"abort of an in-flight call, {ABORTS} runs (ms)")
        print("| interval | median | p95 | max |")
        print("|---|---|---|---|")
        print(_row("cancel sent → server handler saw it (server clock)", observed))
        print(_row("abort() → ABORTED result (confirmation included)", results))
        worst = max(observed)
        verdict = "ok" if worst <= TARGET_OBSERVED_MS else "OVER TARGET"
        target = f"target <= {TARGET_OBSERVED_MS:.0f} ms"
        print(f"server-observed max {worst:.1f} ms ({target}): {verdict}")


if __name__ == "__main__":
    asyncio.run(main())
