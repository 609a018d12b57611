"""Versioning on a live cluster: a `tether worker --hold-patches` (the first phase of a rolling
deploy) runs today's code but starts runs with no patch — their histories have no marker, their
activities no summary or schedule-to-start timeout, their model steps get the conversation
inline as before — and a session it started keeps that behaviour, and replays, when a worker
without the flag takes it over. Real dev server, real worker subprocesses."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from temporalio.api.enums.v1 import EventType

from tether.temporal import client as sessions
from tether.temporal.payloads import SessionSpec
from tether.testing.scripted_model import text_reply, tool_calls_reply

from . import corpus
from .conftest import Cluster, WorkerProcess
from .test_sessions import bash, results

pytestmark = pytest.mark.slow


@pytest.fixture
def holding(cluster: Cluster) -> Iterator[WorkerProcess]:
    worker = cluster.spawn_worker(
        "hold", cluster.root / "ws-hold", "hold", args=("--hold-patches",)
    )
    try:
        yield worker
    finally:
        worker.stop()


async def test_a_holding_worker_starts_runs_without_patches_and_they_keep_their_behaviour(
    cluster: Cluster, holding: WorkerProcess
) -> None:
    cluster.model.push(
        tool_calls_reply(bash("old", "echo held")),
        text_reply("Held."),
        text_reply("Still held."),
    )
    client = await cluster.connect()
    handle = await sessions.start_session(
        client, SessionSpec(f"hold-{uuid.uuid4().hex[:8]}"), task_queue="hold"
    )
    first = await sessions.run_turn(handle, "the old way")
    assert (first.reason, first.text) == ({"kind": "completed"}, "Held.")
    assert first.entries is not None
    assert results(first.entries) == {"old": None}

    holding.stop()  # the deploy's second phase: a worker without the flag takes the session
    takeover = cluster.spawn_worker("hold", cluster.root / "ws-hold", "hold-2")
    try:
        second = await sessions.run_turn(handle, "and now?")
    finally:
        takeover.stop()
    assert (second.reason, second.text) == ({"kind": "completed"}, "Still held.")

    history = await handle.fetch_history()
    assert corpus.patch_markers(history) == set()
    scheduled = [
        e.activity_task_scheduled_event_attributes
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    assert [a.schedule_to_start_timeout.ToSeconds() for a in scheduled] == [0, 0, 0, 0]
    assert not any(e.user_metadata.HasField("summary") for e in history.events)
    model_input = scheduled[-1].input.payloads[0].data
    assert b'"history":[' in model_input.replace(b" ", b"")
    assert b'"conversation":null' in model_input.replace(b" ", b"")
    await corpus.replay(history, payloads=cluster.root / "payloads")


async def test_old_and_new_workers_serving_one_queue_at_once_complete_every_turn_and_replay(
    cluster: Cluster,
) -> None:
    queue = f"mixed-{uuid.uuid4().hex[:8]}"
    old = cluster.spawn_worker(
        queue, cluster.root / "ws-mixed-old", "mixed-old", args=("--hold-patches",)
    )
    new = cluster.spawn_worker(queue, cluster.root / "ws-mixed-new", "mixed-new")
    try:
        client = await cluster.connect()
        handles = [
            await sessions.start_session(
                client, SessionSpec(f"mixed-{uuid.uuid4().hex[:8]}"), task_queue=queue
            )
            for _ in range(3)
        ]
        for turn in range(2):
            for index, handle in enumerate(handles):
                cluster.model.push(text_reply(f"s{index} t{turn}"))
                done = await sessions.run_turn(handle, f"turn {turn}")
                assert (done.reason, done.text) == ({"kind": "completed"}, f"s{index} t{turn}")
        for handle in handles:
            await corpus.replay(await handle.fetch_history(), payloads=cluster.root / "payloads")
    finally:
        old.stop()
        new.stop()
