"""Durable sessions on a real Temporal dev server, with workers as real subprocesses (issue 17).

Each test starts its own session workflow and scripts the model for exactly its turns. Bounds
are generous and waits are on events (a file a command wrote, a log line, an Update's result).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType, TimeoutType
from temporalio.client import Client, WorkflowHandle

from tether.agent.llm import LlmConfig
from tether.agent.llm.plugin import build_llm
from tether.agent.loop import AgentLoop, AgentSettings
from tether.agent.session import SessionStore
from tether.agent.unattended import apply_flags
from tether.cli.boot import start
from tether.core.signals import AbortController
from tether.temporal import client as sessions
from tether.temporal.payloads import LogEntry, SessionSpec, TurnResult
from tether.temporal.projector import project_turn
from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ..patience import PATIENCE_S
from ..plugins.shell._support import sleeping
from . import corpus
from .conftest import Cluster, WorkerProcess, eventually

pytestmark = pytest.mark.slow


def bash(call_id: str, command: str) -> tuple[str, str, str]:
    return (call_id, "bash", json.dumps({"command": command, "description": "test"}))


async def open_session(
    cluster: Cluster, queue: str = "main", **spec: Any
) -> tuple[Client, WorkflowHandle[Any, Any]]:
    client = await cluster.connect()
    session_id = f"t-{uuid.uuid4().hex[:12]}"
    handle = await sessions.start_session(client, SessionSpec(session_id, **spec), task_queue=queue)
    return client, handle


async def replays(cluster: Cluster, handle: WorkflowHandle[Any, Any], name: str) -> None:
    """The workflow's history replays through today's code without nondeterminism and derives
    the turns it recorded (and, with TETHER_RECORD_HISTORIES=1, joins the replay corpus)."""
    history = await handle.fetch_history()
    await corpus.replay(history, payloads=cluster.root / "payloads")
    corpus.record(history, name, cluster.root / "payloads")


def results(entries: list[LogEntry]) -> dict[str, str | None]:
    """call id -> error code (None for a success), from the `tool/result` entries."""
    out: dict[str, str | None] = {}
    for entry in entries:
        if entry.type == "tool/result":
            block = entry.data["message"]["content"][0]
            error = entry.data.get("error")
            out[block["call_id"]] = None if error is None else error["code"]
    return out


def text_of(entries: list[LogEntry], call_id: str) -> str:
    for entry in entries:
        if entry.type == "tool/result":
            block = entry.data["message"]["content"][0]
            if block["call_id"] == call_id:
                return "".join(b.get("text", "") for b in block["content"])
    raise AssertionError(f"no result for {call_id}")


def shape(events: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, Any]]:
    """What a projection and a local log must agree on: event types in order, and for messages
    and tool events their content without ids (chunks and the request header are the local
    loop's own detail)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("id", "usage")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    skipped = {"assistant/chunk", "request/header", "request/context"}
    return [(kind, strip(data)) for kind, data in events if kind not in skipped]


# -- a completed turn -----------------------------------------------------------------------------

TURN_SCRIPT = (
    tool_calls_reply(
        ("r1", "read", '{"file_path": "a.txt"}'),
        ("r2", "read", '{"file_path": "b.txt"}'),
        bash("b1", "echo from-bash"),
        content="Reading both, then a command.",
    ),
    text_reply("Both read; bash said from-bash."),
)


async def test_a_turn_with_parallel_reads_and_a_bash_call_projects_like_a_local_run(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    (main_worker.workspace / "a.txt").write_text("alpha\n")
    (main_worker.workspace / "b.txt").write_text("beta\n")
    cluster.model.push(*TURN_SCRIPT)
    _, handle = await open_session(cluster)
    result = await sessions.run_turn(handle, "read a and b, then run bash")
    assert (result.reason, result.text) == (
        {"kind": "completed"},
        "Both read; bash said from-bash.",
    )

    store = SessionStore(tmp_path / "sessions")
    with store.create(session_id="projected", cwd=main_worker.workspace) as log:
        await project_turn(log, result, cluster.blobs())
    assert store.check("projected") == []
    projected = [(e.type, dict(e.data)) for e in store.load("projected").events]

    async with ScriptedModelServer(*TURN_SCRIPT) as local_model:
        ctx = await start(cwd=main_worker.workspace, agent=True)
        apply_flags(ctx, yolo=True, allow=())
        llm = build_llm(
            LlmConfig(provider="openai", base_url=local_model.base_url, model="scripted")
        )
        try:
            with store.create(session_id="local", cwd=main_worker.workspace) as local_log:
                agent = AgentLoop(
                    tools=ctx.tools.runtime,
                    llm=llm,
                    session=local_log,
                    settings=AgentSettings(cwd=main_worker.workspace),
                )
                outcome = await agent.run_turn(
                    "read a and b, then run bash", signal=AbortController().signal
                )
        finally:
            await llm.aclose()
            await ctx.dispose()
    assert outcome.completed
    local = [(e.type, dict(e.data)) for e in store.load("local").events]
    assert shape(projected) == shape(local)
    await replays(cluster, handle, "completed-turn")


# -- abort ---------------------------------------------------------------------------------------


async def test_an_abort_mid_bash_sleep_is_aborted_with_the_group_gone_and_the_sibling_never_ran(
    cluster: Cluster, main_worker: WorkerProcess
) -> None:
    ws = main_worker.workspace
    duration = f"60.{secrets.randbelow(10**9):09d}"  # the command's sleep, by its argv
    cluster.model.push(
        tool_calls_reply(
            bash("long", f"touch abort-started.txt; sleep {duration}; touch abort-finished.txt"),
            bash("queued", "touch abort-sibling-ran.txt"),
        )
    )
    client, handle = await open_session(cluster)
    turn = asyncio.create_task(sessions.run_turn(handle, "run the long job"))
    await eventually(
        (ws / "abort-started.txt").exists, timeout_s=PATIENCE_S, what="the bash command to start"
    )
    await eventually(lambda: sleeping(duration), timeout_s=PATIENCE_S, what="its sleep")
    await sessions.abort_turn(handle, "user")
    result: TurnResult = await asyncio.wait_for(turn, PATIENCE_S)
    # the workflow recorded the result, and returned the Update, only after the group was gone
    assert sleeping(duration) == []
    entries = await sessions.log_entries(client, handle.id)
    assert result.reason == {"kind": "aborted", "reason": {"kind": "user"}}
    assert results(entries) == {"long": "ABORTED", "queued": "ABORTED_BEFORE_DISPATCH"}
    assert not (ws / "abort-sibling-ran.txt").exists()
    assert not (ws / "abort-finished.txt").exists()
    calls = [e.data["call_id"] for e in entries if e.type == "tool/call"]
    assert calls == ["long", "queued"]
    await replays(cluster, handle, "aborted-turn")


async def test_an_abort_before_the_model_answers_ends_the_turn_aborted_with_no_tool_calls(
    cluster: Cluster, main_worker: WorkerProcess
) -> None:
    from tether.testing.scripted_model import hang, reply, text

    cluster.model.push(reply(text("thinking"), hang()))
    client, handle = await open_session(cluster)
    turn = asyncio.create_task(sessions.run_turn(handle, "think"))
    await eventually(
        lambda: cluster.model.remaining == 0, timeout_s=PATIENCE_S, what="the model call"
    )
    await asyncio.sleep(0.2)
    await sessions.abort_turn(handle, "user")
    result = await asyncio.wait_for(turn, PATIENCE_S)
    entries = await sessions.log_entries(client, handle.id)
    assert result.reason == {"kind": "aborted", "reason": {"kind": "user"}}
    assert [e.type for e in entries if e.type.startswith("tool/")] == []


# -- a worker killed mid-tool -------------------------------------------------------------------


@pytest.fixture
def kill_workers(cluster: Cluster) -> Iterator[list[WorkerProcess]]:
    workers = [
        cluster.spawn_worker("kill", cluster.root / f"ws-kill-{n}", f"kill-{n}") for n in (1, 2)
    ]
    try:
        yield workers
    finally:
        for worker in workers:
            worker.stop()


async def test_a_worker_killed_mid_tool_is_one_outcome_unknown_and_the_next_turn_runs_elsewhere(
    cluster: Cluster, kill_workers: list[WorkerProcess]
) -> None:
    heartbeat_timeout_s = 2.0
    duration = f"60.{secrets.randbelow(10**9):09d}"  # the command's sleep, by its argv
    cluster.model.push(
        tool_calls_reply(
            bash("doomed", f'echo "$TETHER_TEST_WORKER" > kill-marker.txt; sleep {duration}')
        ),
        text_reply("The job's outcome is unknown."),
        text_reply("Second turn, still here."),
    )
    markers = [worker.workspace / "kill-marker.txt" for worker in kill_workers]
    client, handle = await open_session(cluster, "kill", heartbeat_timeout_s=heartbeat_timeout_s)
    turn = asyncio.create_task(sessions.run_turn(handle, "run the doomed job"))
    await eventually(
        lambda: any(m.exists() and m.read_text().strip() for m in markers),
        timeout_s=PATIENCE_S,
        what="the doomed command to start",
    )
    (name,) = [m.read_text().strip() for m in markers if m.exists() and m.read_text().strip()]
    victim = next(w for w in kill_workers if w.log.name == f"worker-{name}.log")
    await eventually(lambda: sleeping(duration), timeout_s=PATIENCE_S, what="its sleep")
    try:
        victim.process.kill()
        # contained: the killed worker's command ends with it (`tether worker`, issue 24), long
        # before its 60 s sleep would have
        await eventually(lambda: not sleeping(duration), timeout_s=30, what="the command gone")
        first = await asyncio.wait_for(turn, PATIENCE_S)
        entries = await sessions.log_entries(client, handle.id)
        assert results(entries) == {"doomed": "TOOL_OUTCOME_UNKNOWN"}
        assert first.reason == {"kind": "completed"}
        history = await handle.fetch_history()
        (timed_out,) = [
            e
            for e in history.events
            if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT
        ]
        # Noticed by its missing heartbeats (2 s), not by the 6 h start-to-close backstop: the
        # server says which timeout it was (how fast is the server's business on a loaded machine).
        failure = timed_out.activity_task_timed_out_event_attributes.failure
        assert failure.timeout_failure_info.timeout_type == TimeoutType.TIMEOUT_TYPE_HEARTBEAT
        second = await asyncio.wait_for(sessions.run_turn(handle, "and now?"), PATIENCE_S)
        assert (second.reason, second.text) == ({"kind": "completed"}, "Second turn, still here.")
        await replays(cluster, handle, "worker-killed")
    finally:
        for process in sleeping(duration):
            process.kill()


# -- routing ------------------------------------------------------------------------------------


@pytest.fixture
def repo_a(cluster: Cluster) -> Iterator[WorkerProcess]:
    worker = cluster.spawn_worker("repo-a", cluster.root / "ws-repo-a", "repo-a")
    try:
        yield worker
    finally:
        worker.stop()


async def test_a_tool_routed_to_queue_repo_a_runs_on_that_workers_workspace_only(
    cluster: Cluster, main_worker: WorkerProcess, repo_a: WorkerProcess
) -> None:
    cluster.model.push(
        tool_calls_reply(bash("where", "pwd; touch routed.txt")),
        text_reply("done"),
    )
    client, handle = await open_session(cluster, "main", tool_task_queue="repo-a")
    result = await sessions.run_turn(handle, "where are you?")
    assert result.reason == {"kind": "completed"}
    entries = await sessions.log_entries(client, handle.id)
    assert text_of(entries, "where").strip() == str(repo_a.workspace.resolve())
    assert (repo_a.workspace / "routed.txt").exists()
    assert not (main_worker.workspace / "routed.txt").exists()


# -- the timeout policy inside the activity -----------------------------------------------------


@pytest.fixture
def silent_http() -> Iterator[int]:
    """An HTTP server on 127.0.0.1 that accepts and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            accepted.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for conn in accepted:
            conn.close()
        listener.close()


async def test_a_slow_web_fetch_ends_tool_timeout_through_the_activity(
    cluster: Cluster, main_worker: WorkerProcess, silent_http: int
) -> None:
    url = f"http://127.0.0.1:{silent_http}/slow"
    cluster.model.push(
        tool_calls_reply(("fetch", "web_fetch", json.dumps({"url": url}))),
        text_reply("It timed out."),
    )
    client, handle = await open_session(cluster)
    result = await sessions.run_turn(handle, "fetch it")
    assert result.reason == {"kind": "completed"}
    assert results(await sessions.log_entries(client, handle.id)) == {"fetch": "TOOL_TIMEOUT"}
