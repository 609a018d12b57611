"""Work never runs unseen (issue 25): a tool call no worker takes ends `TOOL_NOT_STARTED` within
the session's schedule-to-start bound, a model step no worker takes ends the turn
`LLM_STEP_NOT_STARTED`, and Temporal's UI can tell which tool or model step runs (activity
summaries). Real dev server, real worker subprocess."""

from __future__ import annotations

import uuid

import pytest
from temporalio.api.enums.v1 import EventType

from tether.temporal import client as sessions
from tether.temporal.payloads import SessionSpec
from tether.testing.scripted_model import text_reply, tool_calls_reply

from .conftest import Cluster, WorkerProcess
from .test_sessions import bash, replays, results

pytestmark = pytest.mark.slow


async def test_a_call_routed_to_a_queue_nobody_serves_is_tool_not_started_within_the_bound(
    cluster: Cluster, main_worker: WorkerProcess
) -> None:
    nobody = f"nobody-{uuid.uuid4().hex[:8]}"
    cluster.model.push(tool_calls_reply(bash("lost", "echo never")), text_reply("Nobody took it."))
    client = await cluster.connect()
    spec = SessionSpec(
        f"unseen-{uuid.uuid4().hex[:8]}", tool_task_queue=nobody, tool_schedule_to_start_s=2.0
    )
    handle = await sessions.start_session(client, spec, task_queue="main")
    result = await sessions.run_turn(handle, "run it")
    assert (result.reason, result.text) == ({"kind": "completed"}, "Nobody took it.")
    assert result.entries is not None
    assert results(result.entries) == {"lost": "TOOL_NOT_STARTED"}
    (record,) = [e.data for e in result.entries if e.type == "tool/result"]
    assert record["meta"] == {
        "temporal": f"not-started: no worker of task queue {nobody!r} took the call within 2 s"
    }
    history = await handle.fetch_history()
    (scheduled,) = [
        e
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.task_queue.name == nobody
    ]
    (timed_out,) = [
        e for e in history.events if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT
    ]
    waited = (timed_out.event_time.ToMilliseconds() - scheduled.event_time.ToMilliseconds()) / 1000
    assert 2.0 <= waited <= 5.0  # the server's timer: the bound, plus its own scheduling
    await replays(cluster, handle, "tool-not-started")


async def test_a_model_step_nobody_takes_ends_the_turn_llm_step_not_started(
    cluster: Cluster, main_worker: WorkerProcess
) -> None:
    nobody = f"nobody-{uuid.uuid4().hex[:8]}"
    client = await cluster.connect()
    spec = SessionSpec(
        f"no-model-{uuid.uuid4().hex[:8]}", llm_task_queue=nobody, llm_schedule_to_start_s=1.0
    )
    handle = await sessions.start_session(client, spec, task_queue="main")
    result = await sessions.run_turn(handle, "anyone?")
    assert result.reason == {
        "kind": "error",
        "error": {
            "message": f"no worker of task queue {nobody!r} took the model step within 1 s; "
            f"start one: tether worker --task-queue {nobody}",
            "code": "LLM_STEP_NOT_STARTED",
        },
    }


async def test_every_activity_says_in_its_summary_which_tool_or_model_step_runs(
    cluster: Cluster, main_worker: WorkerProcess
) -> None:
    cluster.model.push(tool_calls_reply(bash("seen", "echo summarised")), text_reply("Summaries."))
    client = await cluster.connect()
    handle = await sessions.start_session(
        client, SessionSpec(f"summary-{uuid.uuid4().hex[:8]}"), task_queue="main"
    )
    await sessions.run_turn(handle, "say it")
    history = await handle.fetch_history()
    converter = client.data_converter.payload_converter
    summaries = [
        converter.from_payload(e.user_metadata.summary, str)
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    assert summaries == [
        "model step 1 of turn 1",
        'bash {"command": "echo summarised", "description": "test"}',
        "model step 2 of turn 1",
    ]
