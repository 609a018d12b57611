"""A call that needs approval, on a `--approvals` worker, waits — heartbeating, cancellable —
until a human answers from any client through the session workflow's `approve` Update."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from temporalio.client import WorkflowHandle

from tether.temporal import client as sessions
from tether.temporal.payloads import ApprovalAsk, SessionSpec
from tether.temporal.worker import connect
from tether.testing.scripted_model import text_reply, tool_calls_reply

from .conftest import Cluster, WorkerProcess

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


async def start(cluster: Cluster) -> WorkflowHandle[Any, Any]:
    client = await connect(cluster.address)
    spec = SessionSpec(f"ask-{uuid.uuid4().hex[:8]}")
    return await sessions.start_session(client, spec, task_queue="ask")


async def test_a_call_approved_from_another_client_runs_and_the_decision_is_logged(
    cluster: Cluster, approvals_worker: WorkerProcess
) -> None:
    cluster.model.push(tool_calls_reply(touch("t1", "approved.txt")), text_reply("touched"))
    handle = await start(cluster)
    turn = asyncio.create_task(sessions.run_turn(handle, "touch it"))
    (ask,) = await waiting(handle)
    assert (ask.call_id, ask.tool_name) == ("t1", "bash")
    assert not (approvals_worker.workspace / "approved.txt").exists()
    other = await connect(cluster.address)
    await sessions.answer_approval(other.get_workflow_handle(handle.id), "t1", "allow-once")
    result = await asyncio.wait_for(turn, 30)
    assert result.reason == {"kind": "completed"}
    assert (approvals_worker.workspace / "approved.txt").exists()
    entries = await sessions.log_entries(handle)
    decided = [e.data for e in entries if e.type == "approval/decided"]
    assert [(d["call_id"], d["outcome"]) for d in decided] == [("t1", "allowed-once")]


async def test_an_abort_while_a_call_waits_for_approval_is_aborted_before_dispatch(
    cluster: Cluster, approvals_worker: WorkerProcess
) -> None:
    cluster.model.push(tool_calls_reply(touch("t2", "never.txt")))
    handle = await start(cluster)
    turn = asyncio.create_task(sessions.run_turn(handle, "touch it"))
    await waiting(handle)
    await sessions.abort_turn(handle)
    result = await asyncio.wait_for(turn, 30)
    assert result.reason == {"kind": "aborted", "reason": {"kind": "user"}}
    entries = await sessions.log_entries(handle)
    codes = [e.data.get("error", {}).get("code") for e in entries if e.type == "tool/result"]
    assert codes == ["ABORTED_BEFORE_DISPATCH"]
    assert not (approvals_worker.workspace / "never.txt").exists()
