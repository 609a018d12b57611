"""What a subagent costs, against a bare agent loop turn measured in the same run.

1. Spawn + dispose. A `task` call whose child answers with one text block (no tools): the call
   through `ctx.tools.execute` — the child's session log created, its loop and restricted scope
   built, the `subagent/spawned` link written, one model request, `turn/end`, the scope disposed,
   the log closed — against the same one-request turn of a fresh top-level `AgentLoop` over a
   fresh session (what a child does, minus being a child). Both talk to the scripted model
   server on 127.0.0.1 over real HTTP. The two are interleaved round by round; the overhead is
   the median of the per-round differences.
2. Abort → quiescent. A child running `bash sleep 30`: from `abort()` on the caller's turn signal
   until the caller's turn returns — the child's bash killed (TERM, its group gone), its result
   recorded, its log closed, its scope disposed, the `task` result `ABORTED` recorded — against
   the same abort of a top-level turn running the same `bash sleep 30` itself. Median and p95
   over ROUNDS rounds of each (interleaved), and the ratio of the medians.

    python bench/subagent.py [--rounds N] [--spawns N] [--dir PATH]

Targets: spawn + dispose overhead ≤ 10 ms per child; abort → quiescent ≤ 2× the bare turn's.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psutil

from loop import machine  # bench/loop.py: a script's own folder is on sys.path
from tether import AbortController, ToolExecutionInput
from tether.agent.llm import LlmConfig, RetryPolicy
from tether.agent.llm.plugin import build_llm
from tether.agent.llm.service import Llm
from tether.agent.loop import AgentLoop, AgentSettings
from tether.agent.session import SessionStore
from tether.agent.subagents import plugin as subagents_plugin
from tether.kernel import Context
from tether.plugins import timeout_policy
from tether.plugins.jobs import plugin as jobs_plugin
from tether.plugins.shell import bash as bash_plugin
from tether.plugins.shell import plugin as shell_plugin
from tether.testing.scripted_model import (
    RecordedRequest,
    ScriptedModelServer,
    ScriptedResponse,
    text_reply,
    tool_calls_reply,
)
from tether.tools import ToolRuntime

SPAWN_TARGET_MS = 10.0
ABORT_RATIO_TARGET = 2.0
SLEEP = ["sleep", "30"]
BASH_SLEEP = ("b1", "bash", json.dumps({"command": "sleep 30", "description": "wait"}))


def first_user_text(request: RecordedRequest) -> str:
    for message in request.messages:
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def answer(request: RecordedRequest) -> ScriptedResponse:
    """Every conversation: `sleep …` prompts run bash sleep 30, `delegate sleep` delegates one,
    anything else is answered with one text block."""
    prompt = first_user_text(request)
    if prompt.startswith("delegate sleep"):
        args = {
            "description": "wait",
            "prompt": "sleep " + prompt,
            "subagent_type": "general-purpose",
        }
        return tool_calls_reply(("t1", "task", json.dumps(args)))
    if prompt.startswith("sleep"):
        return tool_calls_reply(BASH_SLEEP)
    return text_reply("done")


class Bench:
    def __init__(self, ctx: Context, llm: Llm, store: SessionStore, cwd: Path) -> None:
        self.ctx, self.llm, self.store, self.cwd = ctx, llm, store, cwd
        self.counter = 0

    def loop(self) -> Any:
        log = self.store.create(cwd=self.cwd)
        return AgentLoop(
            tools=self.ctx.tools.runtime,
            llm=self.llm,
            session=log,
            settings=AgentSettings(cwd=self.cwd),
            ctx=self.ctx,
        )

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix} {self.counter}"


async def build(root: Path, server: ScriptedModelServer) -> Bench:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(timeout_policy)
    await ctx.plugin(shell_plugin)
    await ctx.plugin(jobs_plugin)
    await ctx.plugin(bash_plugin)
    await ctx.plugin(
        subagents_plugin, {"project_dir": str(root), "user_agents_dir": str(root / "none")}
    )
    llm = build_llm(
        LlmConfig(
            provider="openai",
            base_url=server.base_url,
            model="scripted",
            retry=RetryPolicy(mode="off"),
        ),
        environ={},
    )
    return Bench(ctx, llm, SessionStore(root / "sessions"), root)


async def spawn_rows(bench: Bench, parent: Any, rounds: int) -> tuple[float, float, float]:
    """Median ms of a bare fresh turn, of a `task` call, and the median per-round overhead."""
    signal = AbortController().signal

    async def bare() -> None:
        loop = bench.loop()
        try:
            outcome = await loop.run_turn(bench.name("bare"), signal=signal)
        finally:
            loop.session.close()
        if not outcome.completed:
            raise RuntimeError(outcome)

    async def task() -> None:
        result = await bench.ctx.tools.execute(
            ToolExecutionInput(
                call_id=bench.name("t"),
                name="task",
                arguments={
                    "description": "answer",
                    "prompt": bench.name("child"),
                    "subagent_type": "general-purpose",
                },
                signal=signal,
                agent=parent,
            )
        )
        if result.is_error:
            raise RuntimeError(result)

    cases: list[tuple[str, Callable[[], Awaitable[None]]]] = [("bare", bare), ("task", task)]
    for _, run in cases:
        await run()
    samples: dict[str, list[float]] = {"bare": [], "task": []}
    for r in range(rounds):
        gc.collect()
        for name, run in cases if r % 2 == 0 else cases[::-1]:
            start = time.perf_counter()
            await run()
            samples[name].append((time.perf_counter() - start) * 1000)
    overhead = statistics.median(
        t - b for t, b in zip(samples["task"], samples["bare"], strict=True)
    )
    return statistics.median(samples["bare"]), statistics.median(samples["task"]), overhead


async def sleeping(timeout_s: float = 30.0) -> psutil.Process:
    me = psutil.Process()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for child in me.children(recursive=True):
            try:
                if child.cmdline() == SLEEP:
                    return child
            except psutil.Error:
                continue
        await asyncio.sleep(0.005)
    raise RuntimeError("the sleep never started")


async def abort_latency(bench: Bench, prompt: str) -> float:
    """ms from abort() to the turn returning, for a turn whose bash (or child's bash) sleeps."""
    loop = bench.loop()
    controller = AbortController()
    try:
        turn = asyncio.ensure_future(loop.run_turn(bench.name(prompt), signal=controller.signal))
        sleeper = await sleeping()
        start = time.perf_counter()
        controller.abort()
        outcome = await turn
        elapsed = (time.perf_counter() - start) * 1000
    finally:
        loop.session.close()
    if outcome.kind != "aborted" or (sleeper.is_running() and sleeper.status() != "zombie"):
        raise RuntimeError(f"not quiescent: {outcome} {sleeper}")
    return elapsed


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20, help="abort rounds of each kind")
    parser.add_argument("--spawns", type=int, default=200, help="spawn rounds of each kind")
    parser.add_argument("--dir", type=Path, default=None, help="where the session files go")
    opts = parser.parse_args()

    print(f"{machine()}")
    with tempfile.TemporaryDirectory(dir=opts.dir) as tmp:
        async with ScriptedModelServer(fallback=answer) as server:
            bench = await build(Path(tmp), server)
            parent = bench.loop()
            try:
                bare, task, overhead = await spawn_rows(bench, parent, opts.spawns)
                bare_aborts: list[float] = []
                child_aborts: list[float] = []
                for r in range(opts.rounds):
                    kinds = [("sleep", bare_aborts), ("delegate sleep", child_aborts)]
                    for prompt, into in kinds if r % 2 == 0 else kinds[::-1]:
                        into.append(await abort_latency(bench, prompt))
            finally:
                parent.session.close()
                await bench.ctx.dispose()
                await bench.llm.aclose()

    print()
    print(f"spawn + dispose, {opts.spawns} rounds (scripted model over HTTP, no tools)")
    table(
        ["path", "ms", "overhead ms", "≤ 10 ms"],
        [
            ["fresh AgentLoop + session, one turn (baseline)", f"{bare:.2f}", "", ""],
            [
                "task call: child spawned, one turn, disposed",
                f"{task:.2f}",
                f"{overhead:.2f}",
                "yes" if overhead <= SPAWN_TARGET_MS else "NO",
            ],
        ],
    )
    bare_median, child_median = statistics.median(bare_aborts), statistics.median(child_aborts)
    ratio = child_median / bare_median
    print()
    print(f"abort → quiescent (bash sleep 30 killed, results recorded), {opts.rounds} rounds each")
    table(
        ["turn aborted while", "median ms", "p95 ms", "× bare", "≤ 2×"],
        [
            [
                "its own bash runs (baseline)",
                f"{bare_median:.2f}",
                f"{p95(bare_aborts):.2f}",
                "1.00×",
                "",
            ],
            [
                "its child agent's bash runs",
                f"{child_median:.2f}",
                f"{p95(child_aborts):.2f}",
                f"{ratio:.2f}×",
                "yes" if ratio <= ABORT_RATIO_TARGET else "NO",
            ],
        ],
    )


def table(header: list[str], rows: list[list[str]]) -> None:
    """A Markdown table: the first column left-aligned, numbers right, the verdict centred."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        out = [cells[0].ljust(widths[0])]
        out += [c.rjust(w) for c, w in zip(cells[1:-1], widths[1:-1], strict=True)]
        out.append(cells[-1].center(widths[-1]))
        return "| " + " | ".join(out) + " |"

    print(line(header))
    rules = ["-" * (widths[0] + 2)] + ["-" * (w + 1) + ":" for w in widths[1:-1]]
    rules.append(":" + "-" * widths[-1] + ":")
    print("|" + "|".join(rules) + "|")
    for row in rows:
        print(line(row))


if __name__ == "__main__":
    asyncio.run(main())
