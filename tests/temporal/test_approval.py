"""Approval on Temporal: a call whose policy asks (on a `--approvals` worker) ends its `tool_call`
activity before dispatch and waits in the session workflow — no activity runs, no worker is
held — until a human answers from any client with the `approve` Update; then `tool_dispatch`
runs it with the answer. A rejection is the tool pipeline's own denial; an abort while it waits
is `ABORTED_BEFORE_DISPATCH`. The workers are real `tether worker` subprocesses, the answers come
from `tether temporal approve` / `tether chat --temporal` subprocesses."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle

from tether.temporal import client as sessions
from tether.temporal.payloads import ApprovalAsk, LogEntry, SessionSpec
from tether.testing.scripted_model import text_reply, tool_calls_reply

from .conftest import Cluster, WorkerProcess
from .test_sessions import replays

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def approvals_worker(cluster: Cluster) -> Iterator[WorkerProcess]:
    worker = cluster.spawn_worker("ask", cluster.root / "ws-ask", "ask", approvals=True)
    try:
        yield worker
    finally:
        worker.stop()


async def waiting(handle: WorkflowHandle[Any, Any]) -> list[ApprovalAsk]:
    for _ in range(1500):
        asks = await sessions.pending_approvals(handle)
        if asks:
            return asks
        await asyncio.sleep(0.02)
    raise AssertionError("no call asked for approval within 30 s")


def touch(call_id: str, name: str) -> tuple[str, str, str]:
    return (call_id, "bash", json.dumps({"command": f"touch {name}", "description": "touch"}))


async def start(
    cluster: Cluster, queue: str = "ask"
) -> tuple[Client, WorkflowHandle[Any, Any], str]:
    client = await cluster.connect()
    session_id = f"ask-{uuid.uuid4().hex[:8]}"
    handle = await sessions.start_session(client, SessionSpec(session_id), task_queue=queue)
    return client, handle, session_id


def approval_events(entries: list[LogEntry]) -> list[tuple[str, str, str | None]]:
    return [
        (e.type, e.data["call_id"], e.data.get("outcome"))
        for e in entries
        if e.type.startswith("approval/")
    ]


def result_of(entries: list[LogEntry], call_id: str) -> tuple[str | None, str]:
    """(error code or None, text) of the call's `tool/result`."""
    for entry in entries:
        block = entry.data.get("message", {}).get("content", [{}])[0]
        if entry.type == "tool/result" and block.get("call_id") == call_id:
            text = "".join(b.get("text", "") for b in block["content"])
            return entry.data.get("error", {}).get("code"), text
    raise AssertionError(f"no result for {call_id}")


async def test_a_call_that_needs_approval_waits_in_the_workflow_with_no_activity_running(
    cluster: Cluster, approvals_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(tool_calls_reply(touch("w1", "waited.txt")))
    _, handle, session_id = await start(cluster)
    turn = asyncio.create_task(sessions.run_turn(handle, "touch it"))
    (ask,) = await waiting(handle)
    arguments = json.loads(ask.arguments)
    assert (ask.call_id, ask.tool_name, arguments["command"]) == ("w1", "bash", "touch waited.txt")
    assert ask.reason == 'permission mode "default" asks before "bash" runs'
    assert ask.fingerprint.startswith("sha256:")
    description = await handle.describe()
    assert list(description.raw_description.pending_activities) == []
    listed = cluster.tether(tmp_path, "temporal", "approve", cluster.address, session_id)
    assert (listed.returncode, listed.stdout) == (0, f"w1  bash {ask.arguments} ({ask.reason})\n")
    assert not (approvals_worker.workspace / "waited.txt").exists()
    await sessions.abort_turn(handle)
    await asyncio.wait_for(turn, 30)


async def test_approving_from_another_client_process_dispatches_the_call(
    cluster: Cluster, approvals_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(tool_calls_reply(touch("t1", "approved.txt")), text_reply("touched"))
    client, handle, session_id = await start(cluster)
    turn = asyncio.create_task(sessions.run_turn(handle, "touch it"))
    await waiting(handle)
    answered = cluster.tether(tmp_path, "temporal", "approve", cluster.address, session_id, "t1")
    assert answered.returncode == 0, answered.stderr
    result = await asyncio.wait_for(turn, 30)
    assert (result.reason, result.text) == ({"kind": "completed"}, "touched")
    assert (approvals_worker.workspace / "approved.txt").exists()
    entries = await sessions.log_entries(client, handle.id)
    assert approval_events(entries) == [
        ("approval/asked", "t1", None),
        ("approval/decided", "t1", "allowed-once"),
    ]
    assert result_of(entries, "t1") == (None, "(no output)")
    await replays(cluster, handle, "approval-allowed")


async def test_a_rejected_call_gets_the_pipelines_denial_with_the_reason_and_never_runs(
    cluster: Cluster, approvals_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(tool_calls_reply(touch("r1", "rejected.txt")), text_reply("ok, not"))
    client, handle, session_id = await start(cluster)
    turn = asyncio.create_task(sessions.run_turn(handle, "touch it"))
    await waiting(handle)
    args = ("temporal", "approve", cluster.address, session_id, "r1", "--reject")
    answered = cluster.tether(tmp_path, *args, "--reason", "not on a Friday")
    assert answered.returncode == 0, answered.stderr
    result = await asyncio.wait_for(turn, 30)
    assert result.reason == {"kind": "completed"}
    entries = await sessions.log_entries(client, handle.id)
    assert result_of(entries, "r1") == (
        None,
        'Error: the user rejected tool "bash": not on a Friday',
    )
    decided = [e.data for e in entries if e.type == "approval/decided"]
    assert [(d["outcome"], d["reason"]) for d in decided] == [("rejected", "not on a Friday")]
    assert not (approvals_worker.workspace / "rejected.txt").exists()


async def test_an_abort_while_a_call_waits_for_approval_is_aborted_before_dispatch(
    cluster: Cluster, approvals_worker: WorkerProcess
) -> None:
    cluster.model.push(tool_calls_reply(touch("t2", "never.txt")))
    client, handle, _ = await start(cluster)
    turn = asyncio.create_task(sessions.run_turn(handle, "touch it"))
    await waiting(handle)
    await sessions.abort_turn(handle)
    result = await asyncio.wait_for(turn, 30)
    assert result.reason == {"kind": "aborted", "reason": {"kind": "user"}}
    entries = await sessions.log_entries(client, handle.id)
    assert result_of(entries, "t2")[0] == "ABORTED_BEFORE_DISPATCH"
    assert approval_events(entries) == [
        ("approval/asked", "t2", None),
        ("approval/decided", "t2", "cancelled"),
    ]
    assert await sessions.pending_approvals(handle) == []
    assert not (approvals_worker.workspace / "never.txt").exists()
    await replays(cluster, handle, "approval-aborted")


async def test_an_answer_for_a_call_that_does_not_wait_is_refused(
    cluster: Cluster, approvals_worker: WorkerProcess, tmp_path: Path
) -> None:
    _, _, session_id = await start(cluster)
    answered = cluster.tether(tmp_path, "temporal", "approve", cluster.address, session_id, "zz")
    assert answered.returncode == 1
    assert answered.stderr == 'tether: no tool call "zz" is waiting for approval\n'


def test_tether_chat_on_temporal_asks_on_the_terminal_and_runs_the_allowed_call(
    cluster: Cluster, approvals_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(tool_calls_reply(touch("c1", "chat-allowed.txt")), text_reply("done"))
    args = ("chat", "--temporal", cluster.address, "--task-queue", "ask")
    done = cluster.tether(tmp_path, *args, stdin="touch it\ny\n/exit\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "› done\n› "
    assert 'tether: bash {"command": "touch chat-allowed.txt"' in done.stderr
    assert (approvals_worker.workspace / "chat-allowed.txt").exists()


# -- the wait outlives the worker that asked ------------------------------------------------------


@pytest.fixture
def lone_worker(cluster: Cluster) -> Iterator[list[WorkerProcess]]:
    """Workers on their own queue; the test kills the first and starts a second."""
    workers: list[WorkerProcess] = []
    workers.append(
        cluster.spawn_worker("ask-lone", cluster.root / "ws-lone-1", "lone-1", approvals=True)
    )
    try:
        yield workers
    finally:
        for worker in workers:
            worker.stop()


async def test_a_call_waiting_for_approval_survives_the_death_of_the_worker_that_asked(
    cluster: Cluster, lone_worker: list[WorkerProcess]
) -> None:
    cluster.model.push(tool_calls_reply(touch("s1", "survived.txt")), text_reply("survived"))
    client, handle, _ = await start(cluster, "ask-lone")
    turn = asyncio.create_task(sessions.run_turn(handle, "touch it"))
    await waiting(handle)
    first = lone_worker[0]
    first.process.kill()
    first.process.wait()
    second = cluster.spawn_worker("ask-lone", cluster.root / "ws-lone-2", "lone-2", approvals=True)
    lone_worker.append(second)
    await sessions.answer_approval(handle, "s1", "allow-once")
    result = await asyncio.wait_for(turn, 60)
    assert (result.reason, result.text) == ({"kind": "completed"}, "survived")
    assert result_of(await sessions.log_entries(client, handle.id), "s1") == (None, "(no output)")
    assert (second.workspace / "survived.txt").exists()
    assert not (first.workspace / "survived.txt").exists()
