"""The agent loop's own costs: the step scheduler, durable appends, and a whole turn.

1. Scheduler overhead. One step of CALLS parallel-safe no-op calls through `execute_tool_calls`
   (pool cap 10, the default, and cap = CALLS) with an in-memory recorder, against the same calls
   through `tools.execute` alone, awaited one after another. The three are interleaved round by
   round (rotating which goes first, GC paused within a round); µs per call is the median over
   ROUNDS rounds, and the overhead is the median of the per-round differences.
2. Durable appends. `tool/call` + `tool/result` pairs appended to a `SessionLog` in a temporary
   directory, `sync()` after each pair (a one-call step's durability points: group commit pays
   one fsync for both): appends per second, median of ROUNDS rounds of PAIRS pairs each.
3. A whole turn over the raw client. A fresh conversation (a new session each turn) whose model
   asks for 10 parallel no-op calls, then answers with text: `AgentLoop.run_turn` against the
   scripted model server over real HTTP, against the floor any harness pays — the same two
   streamed requests with a bare `httpx2.AsyncClient` (every SSE payload parsed) and the 10 tool
   functions awaited directly. Interleaved, TURNS rounds; the overhead is the median of the
   per-round differences. The fsyncs are counted for real: `os.fsync` is wrapped in this process
   (the session log calls it through `os`), per turn and per model step.

    python bench/loop.py [--calls N] [--rounds N] [--pairs N] [--turns N] [--dir PATH]

Targets: scheduler overhead ≤ 50 µs per call; ≥ 2,000 durable appends/s; a fresh-conversation
10-call turn ≤ 2 ms over the raw client, ≤ 3 fsyncs per model step (issue 27 §2). Session files
go to a temporary directory under `--dir` (default: the system's; the filesystem is printed —
on tmpfs an fsync costs nothing).
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
            log.sync()
        elapsed = time.perf_counter() - start
        log.close()
        rates.append(2 * pairs / elapsed)
    rate = statistics.median(rates)
    return rate, 1e6 / rate


FSYNCS = [0]


def count_fsyncs() -> None:
    """Wrap `os.fsync` in this process: every fsync the session log makes is counted."""
    real = os.fsync

    def counted(fd: int) -> None:
        FSYNCS[0] += 1
        real(fd)

    os.fsync = counted


TOOL_CALLS = 10
TURN_TARGET_MS = 2.0
FSYNC_TARGET = 3.0


async def turn_rows(root: Path, rounds: int) -> tuple[float, float, float, float]:
    """Median floor ms, median tether ms, median overhead ms, fsyncs per tether turn."""
    import json

    import httpx2

    from tether.agent.llm import LlmConfig, RetryPolicy
    from tether.agent.llm.plugin import build_llm
    from tether.agent.loop import AgentLoop, AgentSettings
    from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

    ctx = await build()
    calls = [(f"call_{i}", "noop", '{"text": "hi"}') for i in range(TOOL_CALLS)]
    store = SessionStore(root / "sessions")
    async with ScriptedModelServer() as server, httpx2.AsyncClient() as client:
        llm = build_llm(
            LlmConfig(
                provider="openai",
                base_url=server.base_url,
                model="bench",
                retry=RetryPolicy(mode="off"),
            ),
            environ={},
        )
        tools = ctx.tools.runtime
        settings = AgentSettings(cwd=root)
        schemas = tools.schemas()
        url = server.base_url + "/chat/completions"

        async def request(messages: list[object]) -> list[object]:
            body = {"model": "bench", "messages": messages, "tools": schemas, "stream": True}
            parsed: list[object] = []
            async with client.stream("POST", url, json=body) as response:
                async for line in response.aiter_lines():
                    if line == "data: [DONE]":
                        break  # as tether does: the stream's end, not the connection's
                    if line.startswith("data: "):
                        parsed.append(json.loads(line[6:]))
            return parsed

        async def floor() -> None:
            server.push(tool_calls_reply(*calls), text_reply("done"))
            messages: list[object] = [{"role": "user", "content": "go"}]
            await request(messages)
            for call_id, _, _ in calls:
                value = await noop(NoArgs(text="hi"), None)  # type: ignore[arg-type]
                messages.append({"role": "tool", "tool_call_id": call_id, "content": value})
            await request(messages)

        fsyncs: list[int] = []

        async def tether() -> None:
            server.push(tool_calls_reply(*calls), text_reply("done"))
            log = store.create(cwd=root)
            before = FSYNCS[0]
            agent = AgentLoop(tools=tools, llm=llm, session=log, settings=settings)
            outcome = await agent.run_turn("go", signal=AbortController().signal)
            fsyncs.append(FSYNCS[0] - before)
            log.close()
            if not outcome.completed:
                raise RuntimeError(f"the turn ended {dict(outcome.reason)}")

        cases = [("floor", floor), ("tether", tether)]
        for _, run in cases:  # warm up
            await run()
        fsyncs.clear()
        samples: dict[str, list[float]] = {"floor": [], "tether": []}
        for r in range(rounds):
            for name, run in cases if r % 2 == 0 else cases[::-1]:
                gc.collect()
                start = time.perf_counter()
                await run()
                samples[name].append((time.perf_counter() - start) * 1000)
        await llm.aclose()
    await ctx.dispose()
    overhead = statistics.median(
        t - f for t, f in zip(samples["tether"], samples["floor"], strict=True)
    )
    return (
        statistics.median(samples["floor"]),
        statistics.median(samples["tether"]),
        overhead,
        statistics.median(fsyncs),
    )


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
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--dir", type=Path, default=None, help="where the session files go")
    opts = parser.parse_args()

    count_fsyncs()
    load = os.getloadavg()
    print(f"{machine()}; {opts.rounds} rounds; load average {load[0]:.2f}, {load[1]:.2f}")
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
        floor, tether, overhead, fsyncs = await turn_rows(Path(tmp), opts.turns)
    print()
    print(f"durable appends under {where}, {opts.pairs} tool/call + tool/result pairs per round")
    print(f"| {'appends':<34} | {'appends/s':>9} | {'µs/append':>9} | {'≥ 2,000/s':^9} |")
    print(f"|{'-' * 36}|{'-' * 10}:|{'-' * 10}:|:{'-' * 9}:|")
    met = "yes" if rate >= APPENDS_TARGET else "NO"
    label = "tool/call + tool/result, one fsync"
    print(f"| {label:<34} | {rate:>9,.0f} | {us:>9.1f} | {met:^9} |")
    print()
    print(
        f"a fresh-conversation turn (model → {TOOL_CALLS} parallel no-op calls → model → text),"
        f" {opts.turns} rounds, interleaved"
    )
    print(f"| {'path':<44} | {'ms/turn':>8} | {'over floor':>10} | {'≤ 2 ms':^6} |")
    print(f"|{'-' * 46}|{'-' * 9}:|{'-' * 11}:|:{'-' * 6}:|")
    print(
        f"| {'floor: bare httpx2, 2 streamed requests':<44} | {floor:>8.2f} | {'':>10} | {'':^6} |"
    )
    met = "yes" if overhead <= TURN_TARGET_MS else "NO"
    label = "tether: AgentLoop.run_turn, new session"
    print(f"| {label:<44} | {tether:>8.2f} | {overhead:>10.2f} | {met:^6} |")
    per_step = fsyncs / 2
    met = "yes" if per_step <= FSYNC_TARGET else "NO"
    print(
        f"fsyncs per turn: {fsyncs:g} ({per_step:g} per model step; ≤ {FSYNC_TARGET:g}: {met});"
        " a new session's publication (file + directory) included"
    )


if __name__ == "__main__":
    asyncio.run(main())
