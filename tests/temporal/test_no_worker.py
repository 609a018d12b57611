"""A turn that no worker takes never waits silently: the client asks the server who polls the
workflow task queue, names a queue nobody polls within seconds (with the command that starts a
worker for it), and at `--worker-wait-s` ends the run with exit code 75 and one line — the
session's workflow left for a worker started later, or terminated with
`--terminate-if-no-worker`. `tether temporal dev` fails with its server's reason when its own
server did not start, whatever else listens on the port."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import uuid
from pathlib import Path

import pytest

pytest.importorskip("temporalio")

from temporalio.client import WorkflowExecutionStatus

from tether.temporal.client import workflow_id
from tether.temporal.devserver import free_port

from ..patience import PATIENCE_S
from .conftest import TETHER, Cluster

pytestmark = pytest.mark.slow


def queue() -> str:
    return f"nobody-{uuid.uuid4().hex[:8]}"


def test_a_turn_on_a_queue_nobody_polls_names_the_queue_and_ends_with_exit_75(
    cluster: Cluster, tmp_path: Path
) -> None:
    empty = queue()
    process = cluster.start_tether(
        tmp_path,
        "run",
        "--temporal",
        cluster.address,
        "--task-queue",
        empty,
        "--worker-wait-s",
        "6",
        "hello",
    )
    assert process.stderr is not None
    seen: list[str] = []
    for line in process.stderr:  # the notice comes while the turn still waits
        seen.append(line)
        if "no worker polls the task queue" in line:
            break
    notice = seen[-1]
    assert f"no worker polls the task queue {empty!r} on {cluster.address}" in notice
    assert f"tether worker --address {cluster.address} --task-queue {empty}" in notice
    assert process.poll() is None, "".join(seen)
    rest = process.communicate(timeout=PATIENCE_S)[1]
    assert process.returncode == 75, rest
    assert f"no worker took the turn in 6 s on the task queue {empty!r}" in rest
    assert "tether temporal attach" in rest


async def test_a_workflow_left_without_a_worker_is_still_there_and_one_terminated_is_not(
    cluster: Cluster, tmp_path: Path
) -> None:
    client = await cluster.connect()
    for terminate, status in (
        (False, WorkflowExecutionStatus.RUNNING),
        (True, WorkflowExecutionStatus.TERMINATED),
    ):
        flags = ("--terminate-if-no-worker",) if terminate else ()
        done = await asyncio.to_thread(
            cluster.tether,
            tmp_path,
            "run",
            "--temporal",
            cluster.address,
            "--task-queue",
            queue(),
            "--worker-wait-s",
            "1",
            *flags,
            "hello",
        )
        assert done.returncode == 75, done.stderr
        match = re.search(r"session (\S+) ·", done.stderr)
        assert match is not None, done.stderr
        described = await client.get_workflow_handle(workflow_id(match.group(1))).describe()
        assert described.status == status
        if not terminate:
            await client.get_workflow_handle(workflow_id(match.group(1))).terminate("test over")


def test_no_worker_gives_a_json_script_its_result_record(cluster: Cluster, tmp_path: Path) -> None:
    done = cluster.tether(
        tmp_path,
        "run",
        "--temporal",
        cluster.address,
        "--task-queue",
        queue(),
        "--worker-wait-s",
        "1",
        "--terminate-if-no-worker",
        "--output-format",
        "json",
        "hello",
    )
    assert done.returncode == 75, done.stderr
    record = json.loads(done.stdout)
    assert (record["type"], record["is_error"]) == ("result", True)
    assert record["tether"]["outcome"]["error"]["code"] == "NO_WORKER"
    assert record["tether"]["exit_code"] == 75


def test_temporal_dev_on_a_port_another_program_listens_on_fails_with_the_reason(
    cluster: Cluster, tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [
                str(TETHER),
                "temporal",
                "dev",
                "--port",
                str(port),
                "--ui-port",
                str(free_port()),
                "--db-filename",
                str(tmp_path / "dev.sqlite"),
            ],
            cwd=tmp_path,
            env=cluster.env(tmp_path),
            capture_output=True,
            text=True,
            timeout=PATIENCE_S,
            check=False,
        )
    assert done.returncode == 1
    assert done.stderr == (
        f"tether: the Temporal dev server did not start on 127.0.0.1:{port} (exit code 1): "
        "the port is taken (address already in use)\n"
    )
