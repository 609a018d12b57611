"""Benchmark: what the sandbox's bounds (issue 32 item 7) add to one sandboxed command.

Run: `python bench/sandbox_bounds.py`. The `bash` tool runs `true` through `ctx.tools.execute`
(with `bench/shell.py`'s helpers), each way in a process of its own,
the ways interleaved round by round in the same run, against the bare baselines of that run (a
raw `create_subprocess_exec` and the uncontained bash tool):

    sandboxed, no bounds    the layout before issue 32 (no `--size`, no /dev/shm tmpfs, no
                            `--remount-ro /dev`, no process bound)
    + tmpfs sizes           `--size` on /tmp and /dev/shm, /dev read-only
    + RLIMIT_NPROC          and the process bound set on the namespace's init (bwrap's
                            `--block-fd`: tether waits for `--info-fd`, calls prlimit, releases)
    + pids cgroup           and a `pids` cgroup per command (made, joined, removed), where this
                            process can make one (the default where it can)

Reported: median µs per call over CALLS calls (after 5 warm-up calls), ROUNDS rounds, in wall
time and in CPU time (this process and its reaped children: steadier than wall time on a loaded
machine); what each way adds over "sandboxed, no bounds", as the median of per-round
differences.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from shell import per_call_us, raw_true, tool_true  # bench/shell.py: the same calls
from tether.kernel import Context
from tether.plugins.sandbox import KernelSupport, kernel_support
from tether.plugins.sandbox.cgroups import pids_base
from tether.plugins.shell import LocalBashExecutor, ShellConfig, SubprocessService
from tether.plugins.shell import bash as bash_plugin
from tether.tools import ToolRuntime

UNCONTAINED = KernelSupport(None, False, False, False, "the benchmark's uncontained baseline")
ROUNDS = 9
CALLS = 30
WAYS = ("raw", "uncontained", "unbounded", "tmpfs", "rlimit", "cgroup")
LABELS = {
    "raw": "raw create_subprocess_exec('bash','-c','true')",
    "uncontained": "bash tool, uncontained (bare baseline)",
    "unbounded": "sandboxed, no bounds (before issue 32)",
    "tmpfs": "sandboxed + tmpfs sizes, /dev read-only",
    "rlimit": "sandboxed + tmpfs + RLIMIT_NPROC",
    "cgroup": "sandboxed + tmpfs + RLIMIT_NPROC + pids cgroup",
}


def _patch(way: str) -> None:
    """Turn the bounds a way does not have off, in this (child) process only."""
    if way == "unbounded":
        from tether.plugins.sandbox import bwrap, plan

        def layout(**fields: Any) -> bwrap.Layout:
            return bwrap.Layout(**{**fields, "tmp_size": None})

        setattr(plan, "Layout", layout)  # noqa: B010
    if way in ("unbounded", "tmpfs", "rlimit"):
        from tether.plugins.shell import _process

        setattr(_process, "command_group", lambda _limit: None)  # noqa: B010


async def mounted(way: str, workspace: Path) -> Context:
    if way == "uncontained":
        sandbox: dict[str, object] = {"mode": "danger-full-access"}
    else:
        bounded = way in ("rlimit", "cgroup")
        sandbox = {"mode": "workspace-write", "max_processes": 1024 if bounded else None}
    config = ShellConfig(cwd=str(workspace), sandbox=sandbox)  # type: ignore[arg-type]
    support = UNCONTAINED if way == "uncontained" else None
    executor = LocalBashExecutor(config, subprocesses=SubprocessService(support=support))
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    ctx.provide("shell", executor)
    ctx.effect(executor.aclose)
    await ctx.plugin(bash_plugin)
    return ctx


def _cpu_s() -> float:
    """CPU seconds of this process and its reaped children (user + system)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def child(way: str, calls: int) -> tuple[float, float]:
    _patch(way)
    with tempfile.TemporaryDirectory() as tmp:
        ctx: Context | None = None
        if way == "raw":
            run: Callable[[int], Awaitable[None]] = raw_true
        else:
            ctx = await mounted(way, Path(tmp))
            run = lambda n: tool_true(ctx, n)  # noqa: E731
        for n in range(5):
            await run(n)
        cpu = _cpu_s()
        us: float = await per_call_us(run, calls)
        cpu_us = (_cpu_s() - cpu) / calls * 1e6
        if ctx is not None:
            await ctx.dispose()
    return us, cpu_us


def measure(way: str) -> tuple[float, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", way, str(CALLS)],
        capture_output=True,
        text=True,
        check=True,
    )
    found: Any = json.loads(done.stdout.splitlines()[-1])
    return float(found[0]), float(found[1])


def main() -> None:
    support = kernel_support()
    if not support.sandbox:
        raise SystemExit(f"this machine cannot sandbox: {support.problem}")
    cgroups = pids_base()
    ways = WAYS if cgroups is not None else WAYS[:-1]
    print(
        f"# sandbox bounds bench — {os.cpu_count()} CPUs, {platform.machine()}, CPython "
        f"{platform.python_version()}, euid {os.geteuid()}, user namespace "
        f"{support.user_namespace}, pids cgroups under {cgroups}, load average "
        f"{os.getloadavg()[0]:.1f} at the start\n"
    )
    wall: dict[str, list[float]] = {way: [] for way in ways}
    cpu: dict[str, list[float]] = {way: [] for way in ways}
    for _ in range(ROUNDS):
        for way in ways:
            us, cpu_us = measure(way)
            wall[way].append(us)
            cpu[way].append(cpu_us)

    def added(samples: dict[str, list[float]], way: str) -> str:
        if way in ("raw", "uncontained", "unbounded"):
            return ""
        diffs = (v - u for v, u in zip(samples[way], samples["unbounded"], strict=True))
        return f"{statistics.median(d / 1000 for d in diffs):+.2f}"

    print(
        "| per call (`true`)                                | wall µs | + ms vs no bounds "
        "| CPU µs | + ms CPU vs no bounds |"
    )
    print(
        "|--------------------------------------------------|--------:|------------------:"
        "|-------:|----------------------:|"
    )
    for way in ways:
        print(
            f"| {LABELS[way]:<48} | {statistics.median(wall[way]):>7.0f} | "
            f"{added(wall, way):>17} | {statistics.median(cpu[way]):>6.0f} | "
            f"{added(cpu, way):>21} |"
        )
    print(
        f"\n(one process per way and round, {CALLS} calls after 5 warm-up calls, median µs; "
        f"{ROUNDS} rounds interleaved; differences are medians of per-round differences; load "
        f"average {os.getloadavg()[0]:.1f} at the end)"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(asyncio.run(child(sys.argv[2], int(sys.argv[3])))))
    else:
        main()
