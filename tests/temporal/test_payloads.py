"""Bounded payloads (issue 25): whatever a session's size, no payload in its histories is over
256 KiB. Big tool results and the request header go to the payload store by reference, the model
steps read the conversation as sealed segments, anything else over the threshold (a huge
prompt) is moved out by Temporal's external storage — against a real S3 API (moto's server on
127.0.0.1) and the file store. Workers are real `tether worker` subprocesses on the dev server.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle, WorkflowHistory

from tether.agent.session import SessionStore
from tether.temporal import client as sessions
from tether.temporal.connection import Connection, connected
from tether.temporal.payloads import SessionSpec, TurnResult
from tether.temporal.projector import catch_up
from tether.temporal.storage import DEFAULT_THRESHOLD, PayloadStore
from tether.testing.scripted_model import text_reply, tool_calls_reply

from . import corpus
from .conftest import Cluster, WorkerProcess
from .test_sessions import bash, replays

pytestmark = pytest.mark.slow

BUCKET = "tether-test-payloads"


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    """A real S3 HTTP API (moto) on 127.0.0.1 with one bucket; the AWS environment that
    reaches it (also set in this process while the module runs)."""
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {
        "AWS_ACCESS_KEY_ID": "tether-test",
        "AWS_SECRET_ACCESS_KEY": "tether-test",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL_S3": f"http://{host}:{port}",
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        boto3.client("s3").create_bucket(Bucket=BUCKET)
        yield env
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()


@pytest.fixture(scope="module")
def s3_workers(cluster: Cluster, s3: dict[str, str]) -> Iterator[dict[str, WorkerProcess]]:
    """Two workers whose payload store is the S3 bucket: `s3-big` with the defaults, and
    `s3-long`, with the `megabyte` tool (`tests.temporal.megabyte`), whose model sees a
    4,000-character preview of any result over 16 KB (the worker's spill) and which stores any
    result over 2 KB by reference."""
    store = ("--payload-store", f"s3://{BUCKET}")
    long = cluster.root / "ws-s3-long"
    long.mkdir()
    (long / "tether.yml").write_text(
        "plugins:\n  - id: megabyte\n    name: tests.temporal.megabyte\n"
    )
    repository = str(Path(__file__).parents[2])
    workers = {
        "s3-big": cluster.spawn_worker(
            "s3-big", cluster.root / "ws-s3-big", "s3-big", wait=False, args=store, env=s3
        ),
        "s3-long": cluster.spawn_worker(
            "s3-long",
            cluster.root / "ws-s3-long",
            "s3-long",
            wait=False,
            args=(*store, "--spill-bytes", "16384", "--inline-bytes", "2048"),
            env={**s3, "PYTHONPATH": repository},
        ),
    }
    try:
        for worker in workers.values():
            worker.wait_ready()
        yield workers
    finally:
        for worker in workers.values():
            worker.stop()


@contextlib.asynccontextmanager
async def on_s3(cluster: Cluster) -> AsyncIterator[Connection]:
    async with connected(cluster.address, "default", PayloadStore.parse(f"s3://{BUCKET}")) as c:
        yield c


async def all_runs(client: Client, handle: WorkflowHandle[Any, Any]) -> list[WorkflowHistory]:
    """The histories of every run of the workflow, the first one first."""
    runs: list[WorkflowHistory] = []
    run_id: str | None = None
    while True:
        history = await client.get_workflow_handle(handle.id, run_id=run_id).fetch_history()
        runs.insert(0, history)
        started = history.events[0].workflow_execution_started_event_attributes
        if not started.continued_execution_run_id:
            return runs
        run_id = started.continued_execution_run_id


def result_texts(entries: list[tuple[str, dict[str, Any]]]) -> dict[str, str]:
    out = {}
    for kind, data in entries:
        if kind == "tool/result":
            block = data["message"]["content"][0]
            out[block["call_id"]] = "".join(b.get("text", "") for b in block["content"])
    return out


def printing(call_id: str, size: int) -> tuple[str, str, str]:
    return bash(call_id, f"head -c {size} /dev/zero | tr '\\0' x; echo")


async def test_a_turn_with_4_mb_of_tool_output_completes_and_the_next_turn_runs(
    cluster: Cluster, s3_workers: dict[str, WorkerProcess], tmp_path: Path
) -> None:
    steps = [
        tool_calls_reply(*(printing(f"s{step}c{n}", 100_000) for n in range(10)))
        for step in range(4)
    ]
    cluster.model.push(*steps, text_reply("Forty outputs read."), text_reply("Still here."))
    async with on_s3(cluster) as connection:
        spec = SessionSpec(f"big-{uuid.uuid4().hex[:8]}")
        handle = await sessions.start_session(connection.client, spec, task_queue="s3-big")
        first = await sessions.run_turn(handle, "print a lot, four times")
        second = await sessions.run_turn(handle, "and now?")
        assert (first.reason, first.text) == ({"kind": "completed"}, "Forty outputs read.")
        assert (second.reason, second.text) == ({"kind": "completed"}, "Still here.")
        (history,) = await all_runs(connection.client, handle)
        assert max(corpus.payload_sizes(history)) <= DEFAULT_THRESHOLD
        assert first.entries is not None
        by_reference = [e for e in first.entries if e.type == "tool/result" and e.refs]
        assert len(by_reference) == 40
        store = SessionStore(tmp_path / "sessions")
        with store.create(session_id="big", cwd=tmp_path) as log:
            await catch_up(connection.client, connection.blobs, handle.id, log)
        assert store.check("big") == []
        texts = result_texts([(e.type, dict(e.data)) for e in store.load("big").events])
        assert len(texts) == 40
        assert sum(len(t) for t in texts.values()) > 2_500_000
        assert all("x" * 60_000 in t for t in texts.values())


async def test_a_prompt_over_the_threshold_leaves_the_history_and_the_model_reads_it_whole(
    cluster: Cluster, main_worker: WorkerProcess
) -> None:
    prompt = "p" * 300_000
    cluster.model.push(text_reply("A long prompt."))
    client = await cluster.connect()
    spec = SessionSpec(f"prompt-{uuid.uuid4().hex[:8]}")
    handle = await sessions.start_session(client, spec, task_queue="main")
    result = await sessions.run_turn(handle, prompt)
    assert (result.reason, result.text) == ({"kind": "completed"}, "A long prompt.")

    async def last_prompt() -> str:
        body = cluster.model.server.requests[-1].body
        assert isinstance(body, dict)
        return str(body["messages"][-1]["content"])

    assert cluster.model.call(last_prompt()) == prompt
    history = await handle.fetch_history()
    assert max(corpus.payload_sizes(history)) <= DEFAULT_THRESHOLD
    assert corpus.external_keys(history)  # the Update's argument and result went to the store
    await replays(cluster, handle, "big-prompt")


TURNS = 200


@pytest.mark.timeout(900)
@pytest.mark.skipif(
    sys.version_info[:2] == (3, 11),
    reason="runs on 3.13 only: the suite's slowest test (minutes of CPU); what it proves "
    "(history growth, continue-as-new, payload bounds) is the same code on every Python, and "
    "every other payload test runs on both (docs/development.md)",
)
async def test_a_200_turn_session_with_1_mb_results_keeps_every_payload_under_256_kib(
    cluster: Cluster, s3_workers: dict[str, WorkerProcess], tmp_path: Path
) -> None:
    async with on_s3(cluster) as connection:
        spec = SessionSpec(
            f"long-{uuid.uuid4().hex[:8]}", history_bytes_per_run=256 * 1024, turns_per_run=80
        )
        handle = await sessions.start_session(connection.client, spec, task_queue="s3-long")
        results: list[TurnResult] = []
        for turn in range(1, TURNS + 1):
            cluster.model.push(
                tool_calls_reply((f"t{turn}", "megabyte", "{}")), text_reply(f"turn {turn} done")
            )
            results.append(await sessions.run_turn(handle, f"turn {turn}: a megabyte, please"))
            cluster.model.forget()
        assert [(r.turn, r.reason, r.text) for r in results] == [
            (n, {"kind": "completed"}, f"turn {n} done") for n in range(1, TURNS + 1)
        ]
        recorded = [e for r in results for e in r.entries or () if e.type == "tool/result"]
        assert len(recorded) == TURNS
        assert all(e.refs for e in recorded)  # each result went to the store by reference
        runs = await all_runs(connection.client, handle)
        assert len(runs) >= 4  # continued as new: every 80 turns, and by history size
        assert max(size for run in runs for size in corpus.payload_sizes(run)) <= DEFAULT_THRESHOLD
        store = SessionStore(tmp_path / "sessions")
        with store.create(session_id="long", cwd=tmp_path) as log:
            await catch_up(connection.client, connection.blobs, handle.id, log)
        assert store.check("long") == []
        events = store.load("long").events
        assert [e.data["turn"] for e in events if e.type == "turn/end"] == list(range(1, TURNS + 1))
        texts = result_texts([(e.type, dict(e.data)) for e in events])
        assert len(texts) == TURNS
        assert all("stored on worker" in text for text in texts.values())
