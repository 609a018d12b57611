"""Benchmark of the shell capability: termination latency, per-call overhead, and what the kernel's
containment and the sandbox add to a command.

Run: `python bench/shell.py`. Prints two tables.

1. Abort → every process gone. A `bash` tool call runs a tree (a bash leader and two `sleep`
   children, found on the host by their unique argv); once both sleeps run, the caller's signal
   is aborted. Measured: from `abort()` to the tool result, then every sleep is checked (a
   zombie counts as gone). Two trees — one that respects SIGTERM, one whose members ignore it
   (`trap '' TERM`, inherited), so SIGKILL follows after `grace_ms` (200 here) — in each of the
   three ways a command runs: sandboxed (`workspace-write`, the default), contained only
   (`danger-full-access`: a PID namespace under bwrap) and uncontained (the fallback where
   namespaces cannot be created: tether's subreaper and tags).
2. Per-call cost: the `bash` tool running `true` through `ctx.tools.execute` in the same three
   ways, against a raw `asyncio.create_subprocess_exec("bash", "-c", "true")` + `wait()`. Each
   way is measured in a process of its own (the fallback makes its process the child subreaper
   for good, which would tax the others), one per way and round, the ways interleaved round by
   round in the same run: median µs per call over CALLS calls, ROUNDS rounds; the ratio to the
   raw spawn, and what containment and the sandbox add over the uncontained call.

Targets: TERM-respecting tree gone within 100 ms of abort (TERM-ignoring: within grace + 100 ms);
the uncontained call ≤ 1.3× the raw spawn; the sandbox adds ≤ 15 ms per command.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psutil

from tether.core.signals import AbortController
from tether.kernel import Context
from tether.plugins.sandbox import KernelSupport, kernel_support
from tether.plugins.shell import LocalBashExecutor, ShellConfig, SubprocessService
from tether.plugins.shell import bash as bash_plugin
from tether.tools import ToolExecutionInput, ToolRuntime

GRACE_MS = 200
ABORT_RUNS = {"TERM-respecting": 10, "TERM-ignoring": 3}
ROUNDS = 7
CALLS = 30
TARGET_DEATH_MS = 100.0
TARGET_RATIO = 1.3
TARGET_SANDBOX_MS = 15.0
UNCONTAINED = KernelSupport(None, False, False, False, "the benchmark's uncontained baseline")
WAYS = ("sandboxed", "contained", "uncontained")


def sleeping(duration: str) -> int:
    """How many live (non-zombie) `sleep <duration>` processes there are."""
    count = 0
    for process in psutil.process_iter():
        try:
            if process.cmdline() == ["sleep", duration] and process.status() != "zombie":
                count += 1
        except psutil.Error:
            continue
    return count


async def mounted(way: str, workspace: Path) -> Context:
    """Tools and bash over a shell that runs commands `way`."""
    sandbox = "workspace-write" if way == "sandboxed" else "danger-full-access"
    config = ShellConfig(grace_ms=GRACE_MS, cwd=str(workspace), sandbox=sandbox)  # type: ignore[arg-type]
    support = UNCONTAINED if way == "uncontained" else None
    executor = LocalBashExecutor(config, subprocesses=SubprocessService(support=support))
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    ctx.provide("shell", executor)
    ctx.effect(executor.aclose)
    await ctx.plugin(bash_plugin)
    return ctx


async def abort_to_death(ctx: Context, ignore_term: bool, n: int) -> float:
    """ms from `abort()` to the tool result; raises if a process of the tree survived."""
    duration = f"60.{secrets.randbelow(10**9):09d}"
    trap = "trap '' TERM; " if ignore_term else ""
    command = f"{trap}sleep {duration} & sleep {duration} & wait"
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
    while sleeping(duration) < 2:
        await asyncio.sleep(0.001)
    started = time.perf_counter()
    controller.abort()
    result = await call
    elapsed = (time.perf_counter() - started) * 1000
    if sleeping(duration) or not result.is_error:
        raise SystemExit(f"the tree survived the abort ({result})")
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
    if result.is_error or "exit code" in str(result.to_json()):
        raise SystemExit(f"bash true failed: {result}")


async def raw_true(_n: int) -> None:
    process = await asyncio.create_subprocess_exec("bash", "-c", "true")
    await process.wait()


async def per_call_us(run: Callable[[int], Awaitable[None]], calls: int) -> float:
    samples = []
    for n in range(calls):
        started = time.perf_counter()
        await run(n)
        samples.append((time.perf_counter() - started) * 1e6)
    return statistics.median(samples)


async def child(way: str, calls: int, aborts: bool) -> dict[str, object]:
    """One process's measurements for one way (the uncontained fallback makes its process the
    child subreaper for good, so no way shares a process with another)."""
    with tempfile.TemporaryDirectory() as tmp:
        if way == "raw":
            run: Callable[[int], Awaitable[None]] = raw_true
            ctx = None
        else:
            ctx = await mounted(way, Path(tmp))
            run = lambda n: tool_true(ctx, n)  # noqa: E731
        out: dict[str, object] = {}
        if aborts and ctx is not None:
            out["aborts"] = {
                label: [await abort_to_death(ctx, label == "TERM-ignoring", n) for n in range(runs)]
                for label, runs in ABORT_RUNS.items()
            }
        for n in range(5):  # warm up
            await run(n)
        out["per_call_us"] = await per_call_us(run, calls)
        if ctx is not None:
            await ctx.dispose()
    return out


def measure(way: str, *, calls: int = CALLS, aborts: bool = False) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", way, str(calls), "1" if aborts else "0"],
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return found


def main() -> None:
    support = kernel_support()
    if not support.sandbox:
        raise SystemExit(f"this machine cannot sandbox: {support.problem}")
    print(
        f"# shell bench — {os.cpu_count()} CPUs, {platform.machine()}, "
        f"CPython {platform.python_version()}, grace_ms={GRACE_MS}, "
        f"load average {os.getloadavg()[0]:.1f} at the start, bwrap {support.bwrap}\n"
    )
    print(
        "| way         | tree (leader + 2 children) | runs | median ms | max ms "
        "| target (max)         | met |"
    )
    print(
        "|-------------|----------------------------|-----:|----------:|-------:"
        "|----------------------|:---:|"
    )
    for way in WAYS:
        aborts = measure(way, calls=1, aborts=True)["aborts"]
        for label, ms in aborts.items():
            ignoring = label == "TERM-ignoring"
            limit = GRACE_MS + TARGET_DEATH_MS if ignoring else TARGET_DEATH_MS
            target = f"≤ {limit:.0f} ms" + (" (grace+100)" if ignoring else "")
            met = "yes" if max(ms) <= limit else "NO"
            cells = (
                f"{way:<11} | {label:<26} | {len(ms):>4} | {statistics.median(ms):>9.1f} | "
                f"{max(ms):>6.1f} | {target:<20}"
            )
            print(f"| {cells} | {met:^3} |")

    names = ("raw", "uncontained", "contained", "sandboxed")
    medians: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(ROUNDS):  # interleaved: every way once per round
        for name in names:
            medians[name].append(float(measure(name)["per_call_us"]))
    us = {name: statistics.median(values) for name, values in medians.items()}
    ratio = {
        name: statistics.median(v / r for v, r in zip(values, medians["raw"], strict=True))
        for name, values in medians.items()
    }
    added = {
        name: statistics.median(
            (v - u) / 1000 for v, u in zip(values, medians["uncontained"], strict=True)
        )
        for name, values in medians.items()
    }
    print()
    print(
        "| per call (`true`)                               | µs/call |  × raw "
        "| + ms vs uncontained | target                 |"
    )
    print(
        "|-------------------------------------------------|--------:|-------:"
        "|--------------------:|------------------------|"
    )
    labels = {
        "raw": "raw create_subprocess_exec('bash','-c','true')",
        "uncontained": "bash tool, uncontained (the fallback)",
        "contained": "bash tool, contained (danger-full-access)",
        "sandboxed": "bash tool, sandboxed (workspace-write)",
    }
    for name in names:
        if name == "uncontained":
            target = f"≤ {TARGET_RATIO}× raw: {'yes' if ratio[name] <= TARGET_RATIO else 'NO'}"
        elif name == "sandboxed":
            met = "yes" if added[name] <= TARGET_SANDBOX_MS else "NO"
            target = f"≤ +{TARGET_SANDBOX_MS:.0f} ms: {met}"
        else:
            target = ""
        extra = "" if name in ("raw", "uncontained") else f"{added[name]:+.1f}"
        print(
            f"| {labels[name]:<47} | {us[name]:>7.0f} | {ratio[name]:>5.2f}× | {extra:>19} "
            f"| {target:<22} |"
        )
    print(
        f"\n(each cell: one process per way and round, {CALLS} calls after 5 warm-up calls, "
        f"median µs; {ROUNDS} rounds interleaved; ratios and differences are medians of "
        f"per-round values; load average {os.getloadavg()[0]:.1f} at the end)"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        way, calls, aborts = sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
        print(json.dumps(asyncio.run(child(way, calls, aborts))))
    else:
        main()
