"""Scale in one process and on disk (issue 27 §4).

Run: `python bench/scale.py [--agents N] [--turns N] [--sessions N] [--records N] [--dir PATH]
[--only agents|disk]`. Session files go to a temporary directory under `--dir` (default: the
system's; its filesystem is printed).

1. Agents in one process. AGENTS `tether.Agent`s (`builtins=False`, one no-op tool, each its own
   session under one shared home) against one scripted model server on 127.0.0.1 in the same
   event loop, whose every turn is model → one tool call → model → text. Reported: the RSS the
   idle agents add (after `start()`, `gc.collect()`), per agent; then every agent runs TURNS
   turns (the agents concurrently, each its turns in order): turns per second, and turn latency
   p50/p99 — beside the floor measured the same way in the same run: AGENTS concurrent bare
   `httpx2` clients making the same two streamed requests per turn (the 1 tool function awaited
   directly). The overhead is tether's percentile minus the floor's, and the CPU time per turn
   of each (this process's user + system time over the phase, divided by the turns).
2. Sessions on disk. SESSIONS sessions (one real session written through `SessionLog`, its file
   copied under new ids), then `tether sessions list` and `tether sessions check` over them as
   subprocesses: wall time, CPU time and peak RSS (`os.wait4`), median of ROUNDS. Then one
   session of RECORDS records (written through `SessionLog`: turns of a user message, streamed
   chunks, a tool call and its result, an answer), and `tether sessions show`,
   `tether sessions check <id>` and `tether run --resume <id>` against a model server (exec →
   first request, and → exit) on it: the same three measures.

Targets: `sessions list` ≤ 1 s for 10,000 sessions. The rest are recorded, not judged.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from loop import filesystem
from startup import ServerState, start_model_server
from tether.agent.session import SessionLog

LIST_TARGET_S = 1.0


class NoArgs(BaseModel):
    pass


async def noop(args: NoArgs) -> str:
    """Does nothing."""
    return "ok"


def _rss_mb() -> float:
    with open("/proc/self/statm") as file:
        pages = int(file.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _raise_fd_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# -- 1. agents in one process --------------------------------------------------------------------


@dataclass
class Phase:
    latencies: list[float]
    wall_s: float
    cpu_s: float

    @property
    def turns(self) -> int:
        return len(self.latencies)


async def agents_part(root: Path, agents: int, turns: int) -> None:
    import httpx2

    from tether import AbortController, Agent, LlmConfig, tool
    from tether.agent.llm import RetryPolicy
    from tether.testing.scripted_model import (
        RecordedRequest,
        ScriptedModelServer,
        ScriptedResponse,
        text_reply,
        tool_calls_reply,
    )

    def answer(record: RecordedRequest) -> ScriptedResponse:
        messages = record.body.get("messages") if isinstance(record.body, dict) else None
        last = messages[-1] if isinstance(messages, list) and messages else {}
        if isinstance(last, dict) and last.get("role") == "tool":
            return text_reply("done")
        return tool_calls_reply((f"call_{record.index}", "noop", "{}"))

    limit = _raise_fd_limit()
    home = root / "home"
    work = root / "work"
    work.mkdir()
    async with ScriptedModelServer(fallback=answer) as server:
        model = LlmConfig(
            provider="openai",
            base_url=server.base_url,
            model="bench",
            retry=RetryPolicy(mode="off"),
        )
        gc.collect()
        before = _rss_mb()
        started = time.perf_counter()
        fleet = [
            Agent(
                model=model,
                tools=[tool(noop)],
                builtins=False,
                instruction_files=False,
                cwd=work,
                home=home,
            )
            for _ in range(agents)
        ]
        for agent in fleet:
            await agent.start()
        boot_s = time.perf_counter() - started
        gc.collect()
        idle = (_rss_mb() - before) / agents

        async def tether_turns(agent: Agent) -> list[float]:
            out = []
            for _ in range(turns):
                began = time.perf_counter()
                result = await agent.run("go", signal=AbortController().signal)
                out.append((time.perf_counter() - began) * 1000)
                if result.outcome.kind != "completed" or len(result.tool_calls) != 1:
                    raise RuntimeError(f"a turn ended {result.outcome.kind}")
            return out

        url = server.base_url + "/chat/completions"
        schema = {"type": "function", "function": {"name": "noop", "parameters": {}}}

        async def floor_turns(client: httpx2.AsyncClient) -> list[float]:
            out = []
            for _ in range(turns):
                began = time.perf_counter()
                messages: list[object] = [{"role": "user", "content": "go"}]
                for _step in range(2):
                    body = {"model": "b", "messages": messages, "tools": [schema], "stream": True}
                    calls = []
                    async with client.stream("POST", url, json=body) as response:
                        async for line in response.aiter_lines():
                            if line == "data: [DONE]":
                                break  # as tether does: the stream's end, not the connection's
                            if line.startswith("data: "):
                                chunk = json.loads(line[6:])
                                delta = chunk["choices"][0]["delta"] if chunk["choices"] else {}
                                calls += delta.get("tool_calls") or []
                    for call in calls:
                        if call.get("id"):
                            value = await noop(NoArgs())
                            messages.append(
                                {"role": "tool", "tool_call_id": call["id"], "content": value}
                            )
                out.append((time.perf_counter() - began) * 1000)
            return out

        # One client per agent, built like tether's for a plain-HTTP route (no certificate
        # store), before the clock starts; one untimed turn of each warms both paths.
        import ssl

        clients = [
            httpx2.AsyncClient(timeout=None, verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
            for _ in range(agents)
        ]
        wanted = turns
        turns = 1
        await asyncio.gather(*(floor_turns(c) for c in clients))
        await asyncio.gather(*(tether_turns(a) for a in fleet))
        turns = wanted
        gc.collect()
        cpu, began = _cpu_s(), time.perf_counter()
        floor_lists = await asyncio.gather(*(floor_turns(c) for c in clients))
        floor = Phase(
            [x for xs in floor_lists for x in xs], time.perf_counter() - began, _cpu_s() - cpu
        )
        for client in clients:
            await client.aclose()
        gc.collect()
        cpu, began = _cpu_s(), time.perf_counter()
        tether_lists = await asyncio.gather(*(tether_turns(a) for a in fleet))
        ours = Phase(
            [x for xs in tether_lists for x in xs], time.perf_counter() - began, _cpu_s() - cpu
        )
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        closing = time.perf_counter()
        for agent in fleet:
            await agent.aclose()
        close_s = time.perf_counter() - closing

    print(
        f"\n{agents} agents in one process (builtins=False, one tool; fd limit {limit}); each"
        f" runs {turns} turns of model → 1 tool call → model → text, all agents at once"
    )
    print(
        f"boot: {boot_s:.1f} s for {agents} (`start()` one after another); close: {close_s:.1f} s"
    )
    print(f"RSS per idle agent: {idle * 1024:.0f} KiB; peak RSS of the process {peak:.0f} MiB\n")
    print("| path                         | turns/s | p50 ms | p99 ms | CPU ms/turn |")
    print("|------------------------------|--------:|-------:|-------:|------------:|")
    for label, run in (("floor: bare httpx2 clients", floor), ("tether: Agent.run", ours)):
        print(
            f"| {label:<28} | {run.turns / run.wall_s:7.0f} | {_pct(run.latencies, 0.5):6.1f} |"
            f" {_pct(run.latencies, 0.99):6.1f} | {run.cpu_s * 1000 / run.turns:11.2f} |"
        )
    print(
        f"\nturn overhead over the floor: p50 "
        f"{_pct(ours.latencies, 0.5) - _pct(floor.latencies, 0.5):.1f} ms, p99 "
        f"{_pct(ours.latencies, 0.99) - _pct(floor.latencies, 0.99):.1f} ms; CPU "
        f"{(ours.cpu_s / ours.turns - floor.cpu_s / floor.turns) * 1000:.2f} ms per turn"
    )


# -- 2. sessions on disk -------------------------------------------------------------------------


def write_sessions(root: Path, count: int) -> None:
    """`count` sessions under `root`: one written through `SessionLog`, copied under new ids."""
    from tether.agent.session import SessionStore
    from tether.agent.session.files import LOG_NAME, encode_session_id

    store = SessionStore(root)
    log = store.create(session_id="20261201-000000-template", cwd=root)
    one_turn(log, 1, "list the files and summarise them")
    log.close()
    header_line, rest = log.path.read_bytes().split(b"\n", 1)
    header = json.loads(header_line)
    for i in range(count - 1):
        session_id = f"20261201-{i // 3600 % 24:02d}{i // 60 % 60:02d}{i % 60:02d}-{i:08x}"
        header["id"] = session_id
        directory = root / encode_session_id(session_id)
        directory.mkdir()
        (directory / LOG_NAME).write_bytes(json.dumps(header).encode() + b"\n" + rest)


def one_turn(log: SessionLog, turn: int, prompt: str) -> None:
    """A turn of ~100 records: a prompt, 40 streamed chunks, a tool call and its result, 40
    more chunks and the answer."""
    from tether.agent.messages import TextBlock, TextDelta, ToolCallBlock, assistant_message
    from tether.tools.results import ToolSuccess, text_content, user_message

    log.turn_start(turn)
    log.step_start(turn, 1)
    log.user_message(user_message(prompt))
    call_id = f"call_{turn}"
    seqs = [log.assistant_chunk(turn, 1, TextDelta(0, "Let me look. ")).seq for _ in range(40)]
    asks = [TextBlock("Let me look."), ToolCallBlock(call_id, "bash", '{"command": "ls"}')]
    message = assistant_message(asks, provider="openai", model="bench")
    log.assistant_message(turn, 1, message, source_event_seqs=seqs)
    call = log.tool_call(turn, 1, call_id, "bash", '{"command": "ls"}')
    result = ToolSuccess(value="a\nb", content=text_content("a\nb"))
    log.tool_outcome(turn, 1, call_id, result, call_seq=call.seq)
    log.step_end(turn, 1)
    log.step_start(turn, 2)
    seqs = [log.assistant_chunk(turn, 2, TextDelta(0, "Two files. ")).seq for _ in range(40)]
    answer = assistant_message([TextBlock("Two files: a and b.")], provider="openai", model="bench")
    log.assistant_message(turn, 2, answer, source_event_seqs=seqs)
    log.step_end(turn, 2)
    log.turn_end(turn, {"kind": "completed"})


def write_big_session(root: Path, records: int) -> str:
    from tether.agent.session import SessionStore

    store = SessionStore(root)
    log = store.create(cwd=root)
    turn = 0
    while log.next_seq < records:
        turn += 1
        one_turn(log, turn, f"turn {turn}: look again")
    log.close()
    return log.id


@dataclass
class Measured:
    wall_s: float
    cpu_s: float
    rss_mb: float
    first_s: float | None = None


_LAUNCHER = """
import json, os, sys, time
out, args = sys.argv[1], sys.argv[2:]
began = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(args[0], args)
_, status, usage = os.wait4(pid, 0)
with open(out, "w") as file:
    json.dump([began, os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime,
               usage.ru_maxrss], file)
"""
"""Forks the command from a small interpreter: a child's peak RSS (`ru_maxrss`) counts what it
had before `exec`, so forked from this process it would start at this process's size."""


def measure(args: list[str], env: dict[str, str], cwd: Path, arrivals: list[float]) -> Measured:
    arrivals.clear()
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(
            [sys.executable, "-S", "-c", _LAUNCHER, out.name, *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
        ended = time.perf_counter()
        began, code, cpu, maxrss_kb = json.loads(Path(out.name).read_text())
    if code not in (0, 1):  # `check` exits 1 when a session has a defect
        raise SystemExit(f"{args[1:]} exited {code}")
    first = arrivals[0] - began if arrivals else None
    return Measured(ended - began, cpu, maxrss_kb / 1024, first)


def disk_part(root: Path, sessions: int, records: int, rounds: int) -> None:
    tether = str(Path(sys.executable).with_name("tether"))
    home = root / "home"
    sessions_dir = home / "sessions"
    work = root / "work"
    work.mkdir(exist_ok=True)
    state = ServerState()
    arrivals = state.arrivals
    server, base_url = start_model_server(state)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "OPENAI_"))}
    env.update(
        TETHER_HOME=str(home),
        HOME=str(root / "user"),
        OPENAI_BASE_URL=base_url,
        OPENAI_MODEL="bench",
    )
    began = time.perf_counter()
    write_sessions(sessions_dir, sessions)
    made = time.perf_counter() - began
    rows: list[tuple[str, Measured]] = []

    def run(label: str, args: list[str]) -> None:
        samples = [measure([tether, *args], env, work, arrivals) for _ in range(rounds)]
        rows.append(
            (
                label,
                Measured(
                    statistics.median(m.wall_s for m in samples),
                    statistics.median(m.cpu_s for m in samples),
                    max(m.rss_mb for m in samples),
                    statistics.median(m.first_s for m in samples)
                    if all(m.first_s is not None for m in samples)
                    else None,
                ),
            )
        )

    run(f"sessions list ({sessions:,} sessions)", ["sessions", "list"])
    run(f"sessions check ({sessions:,} sessions)", ["sessions", "check"])
    shutil.rmtree(sessions_dir)
    began = time.perf_counter()
    big = write_big_session(sessions_dir, records)
    big_made = time.perf_counter() - began
    size = sum(p.stat().st_size for p in sessions_dir.rglob("session.jsonl")) / 2**20
    run(f"sessions show ({records:,} records)", ["sessions", "show", big])
    run(f"sessions check ID ({records:,} records)", ["sessions", "check", big])
    run(f"run --resume ({records:,} records)", ["run", "--resume", big, "hi"])
    server.shutdown()
    print(
        f"\nsessions on disk: {sessions:,} sessions written in {made:.1f} s; one session of"
        f" {records:,} records ({size:.1f} MiB) in {big_made:.1f} s; median of {rounds} runs"
    )
    print("| command                                   | wall s | CPU s | peak RSS MiB | target |")
    print("|-------------------------------------------|-------:|------:|-------------:|--------|")
    for label, m in rows:
        goal = ""
        if label.startswith("sessions list"):
            goal = f"≤ {LIST_TARGET_S:g} s: {'yes' if m.wall_s <= LIST_TARGET_S else 'no'}"
        print(f"| {label:<41} | {m.wall_s:6.2f} | {m.cpu_s:5.2f} | {m.rss_mb:12.0f} | {goal} |")
        if m.first_s is not None:
            print(
                f"| {'  … exec → first model request':<41} | {m.first_s:6.2f} |       |       "
                f"       |        |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--only", choices=("agents", "disk"), default=None)
    opts = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(dir=opts.dir) as tmp:
        root = Path(tmp)
        print(
            f"{os.cpu_count()} CPUs, {platform.machine()}, {platform.python_implementation()} "
            f"{platform.python_version()}; files under {tmp} ({filesystem(root)}); load average "
            f"{load[0]:.2f}, {load[1]:.2f}"
        )
        if opts.only in (None, "agents"):
            (root / "agents").mkdir()
            asyncio.run(agents_part(root / "agents", opts.agents, opts.turns))
        if opts.only in (None, "disk"):
            (root / "disk").mkdir()
            disk_part(root / "disk", opts.sessions, opts.records, opts.rounds)
    load = os.getloadavg()
    print(f"\nload average after: {load[0]:.2f}, {load[1]:.2f}")


if __name__ == "__main__":
    main()
