"""`tether temporal run` as a real subprocess against the dev server and the shared worker: the
answer on stdout, the session projected so `tether sessions show/check` work, and Ctrl-C
(SIGINT) sends the abort signal and waits for the turn's balanced end."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
from pathlib import Path

import pytest

from tether.testing.scripted_model import text_reply, tool_calls_reply

from .conftest import TETHER, Cluster, WorkerProcess, eventually

pytestmark = pytest.mark.slow


def bash(call_id: str, command: str) -> tuple[str, str, str]:
    return (call_id, "bash", json.dumps({"command": command, "description": "test"}))


def tether(cluster: Cluster, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TETHER), *args],
        cwd=cwd,
        env=cluster.env(cwd),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def session_id(stderr: str) -> str:
    match = re.search(r"session (\S+) ·", stderr)
    assert match is not None, stderr
    return match.group(1)


def test_temporal_run_prints_the_answer_and_the_projected_session_checks_clean(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(tool_calls_reply(bash("c1", "echo cli")), text_reply("It said cli."))
    done = tether(
        cluster, tmp_path, "temporal", "run", cluster.address, "say cli", "--task-queue", "main"
    )
    assert (done.returncode, done.stdout) == (0, "It said cli.\n"), done.stderr
    sid = session_id(done.stderr)
    check = tether(cluster, tmp_path, "sessions", "check", sid)
    assert check.returncode == 0, check.stdout + check.stderr
    show = tether(cluster, tmp_path, "sessions", "show", sid)
    assert show.returncode == 0, show.stderr
    assert "It said cli." in show.stdout


async def test_ctrl_c_in_temporal_run_aborts_the_turn_and_exits_130_with_the_outcomes_projected(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(tool_calls_reply(bash("nap", "echo $$ > cli-nap.txt; sleep 30")))
    marker = main_worker.workspace / "cli-nap.txt"
    process = await asyncio.create_subprocess_exec(
        str(TETHER),
        "temporal",
        "run",
        cluster.address,
        "nap",
        "--task-queue",
        "main",
        cwd=tmp_path,
        env=cluster.env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    await eventually(
        lambda: marker.exists() and marker.read_text().strip(),
        timeout_s=30,
        what="the nap to start",
    )
    process.send_signal(signal.SIGINT)
    _, stderr = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 130, stderr.decode()
    sid = session_id(stderr.decode())
    show = tether(cluster, tmp_path, "sessions", "show", sid)
    assert "ABORTED" in show.stdout, show.stdout
    assert tether(cluster, tmp_path, "sessions", "check", sid).returncode == 0


def test_temporal_chat_runs_a_turn_per_line_and_quits_on_exit(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(text_reply("first answer"), text_reply("second answer"))
    done = subprocess.run(
        [str(TETHER), "temporal", "chat", cluster.address, "--task-queue", "main"],
        cwd=tmp_path,
        env=cluster.env(tmp_path),
        input="hello\nagain\n/exit\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "› first answer\n› second answer\n› "
    sid = re.search(r"session (\S+) ·", done.stderr)
    assert sid is not None
    assert tether(cluster, tmp_path, "sessions", "check", sid.group(1)).returncode == 0
