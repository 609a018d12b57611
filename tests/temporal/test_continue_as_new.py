"""Long sessions: between turns, after `turns_per_run` turns (or when Temporal suggests it), the
session workflow continues as new under the same workflow id, carrying the turn count, the
conversation the model sees and the log index it starts at. The session stays one session: the
next turn's model request holds the earlier turns, the log entries over all runs read as one
log (the earlier runs answer from their histories), and a projector that lagged behind the
continue-as-new catches up into one balanced JSONL log."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle

from tether.agent.session import SessionStore
from tether.temporal import client as sessions
from tether.temporal.payloads import SessionSpec
from tether.temporal.projector import catch_up
from tether.testing.scripted_model import text_reply

from .conftest import Cluster, WorkerProcess
from .test_sessions import replays

pytestmark = pytest.mark.slow


async def short_runs(
    cluster: Cluster, turns_per_run: int
) -> tuple[Client, WorkflowHandle[Any, Any]]:
    client = await cluster.connect()
    spec = SessionSpec(f"can-{uuid.uuid4().hex[:8]}", turns_per_run=turns_per_run)
    return client, await sessions.start_session(client, spec, task_queue="main")


async def current_run(handle: WorkflowHandle[Any, Any], other_than: str) -> str:
    """The workflow's current run id, once it is not `other_than`."""
    for _ in range(1500):
        run_id = (await handle.describe()).run_id
        if run_id != other_than:
            return run_id
        await asyncio.sleep(0.02)
    raise AssertionError(f"the workflow did not continue as new from {other_than} within 30 s")


async def test_after_n_turns_the_workflow_continues_as_new_and_the_model_still_sees_every_turn(
    cluster: Cluster, main_worker: WorkerProcess
) -> None:
    cluster.model.push(text_reply("one"), text_reply("two"), text_reply("three"))
    client, handle = await short_runs(cluster, 2)
    first_run = handle.first_execution_run_id
    assert first_run is not None
    for prompt in ("first prompt", "second prompt"):
        await sessions.run_turn(handle, prompt)
    second_run = await current_run(handle, first_run)
    first_history = await client.get_workflow_handle(handle.id, run_id=first_run).fetch_history()
    assert first_history.events[-1].event_type == (
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
    )
    third = await sessions.run_turn(handle, "third prompt")
    assert (third.turn, third.reason, third.text) == (3, {"kind": "completed"}, "three")

    async def last_request() -> Any:
        return cluster.model.server.requests[-1].body

    request = cluster.model.call(last_request())
    said = [(m["role"], m["content"]) for m in request["messages"] if m["role"] != "system"]
    assert said == [
        ("user", "first prompt"),
        ("assistant", "one"),
        ("user", "second prompt"),
        ("assistant", "two"),
        ("user", "third prompt"),
    ]
    assert (await handle.describe()).run_id == second_run
    await replays(
        cluster, client.get_workflow_handle(handle.id, run_id=first_run), "continued-as-new"
    )


async def test_the_log_over_all_runs_projects_into_one_balanced_session_after_a_lagging_start(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(*(text_reply(f"answer {n}") for n in range(1, 6)))
    client, handle = await short_runs(cluster, 2)
    store = SessionStore(tmp_path / "sessions")
    with store.create(session_id="projected", cwd=tmp_path) as log:
        first = await sessions.run_turn(handle, "turn 1")
        await catch_up(client, cluster.blobs(), handle.id, log, through=first.log_size)
        for n in range(2, 6):  # the projector lags across two continue-as-new
            last = await sessions.run_turn(handle, f"turn {n}")
        appended = await catch_up(client, cluster.blobs(), handle.id, log)
        assert appended == last.log_size - first.log_size
    assert store.check("projected") == []
    events = store.load("projected").events
    assert [e.data["turn"] for e in events if e.type == "turn/end"] == [1, 2, 3, 4, 5]
    entries = [
        e
        for turn in await sessions.recorded_turns(client, handle.id, 0)
        for e in turn.entries or ()
    ]
    blobs = cluster.blobs()
    recorded = [(e.type, await blobs.resolve(e)) for e in entries]
    assert recorded == [(e.type, e.data) for e in events]
