"""`tether run --temporal` and `tether chat --temporal` as real subprocesses against the dev
server and the shared worker: the answer on stdout, the session projected so `tether sessions
show/check` work, Ctrl-C (SIGINT) sends the abort signal and waits for the turn's balanced end,
`--resume` attaches to a running session workflow — across a continue-as-new too — and refuses
one that has none. `tether temporal run|chat ADDRESS` are the same commands."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
from pathlib import Path

import pytest

from tether.agent.session import SessionStore
from tether.testing.scripted_model import text_reply, tool_calls_reply

from ..patience import PATIENCE_S
from .conftest import TETHER, Cluster, WorkerProcess, eventually

pytestmark = pytest.mark.slow


def bash(call_id: str, command: str) -> tuple[str, str, str]:
    return (call_id, "bash", json.dumps({"command": command, "description": "test"}))


def tether(
    cluster: Cluster, cwd: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TETHER), *args],
        cwd=cwd,
        env=cluster.env(cwd),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def session_id(stderr: str) -> str:
    match = re.search(r"session (\S+) ·", stderr)
    assert match is not None, stderr
    return match.group(1)


def test_run_on_temporal_prints_the_answer_and_the_projected_session_checks_clean(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(tool_calls_reply(bash("c1", "echo cli")), text_reply("It said cli."))
    args = ("run", "--temporal", cluster.address, "say cli", "--task-queue", "main")
    done = tether(cluster, tmp_path, *args)
    assert (done.returncode, done.stdout) == (0, "It said cli.\n"), done.stderr
    sid = session_id(done.stderr)
    check = tether(cluster, tmp_path, "sessions", "check", sid)
    assert check.returncode == 0, check.stdout + check.stderr
    show = tether(cluster, tmp_path, "sessions", "show", sid)
    assert show.returncode == 0, show.stderr
    assert "It said cli." in show.stdout


def test_tether_temporal_run_address_is_the_same_command(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(text_reply("Same command."))
    args = ("temporal", "run", cluster.address, "hello", "--task-queue", "main")
    done = tether(cluster, tmp_path, *args)
    assert (done.returncode, done.stdout) == (0, "Same command.\n"), done.stderr


async def test_ctrl_c_in_run_on_temporal_aborts_the_turn_and_exits_130_with_the_outcomes_projected(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(tool_calls_reply(bash("nap", "echo $$ > cli-nap.txt; sleep 30")))
    marker = main_worker.workspace / "cli-nap.txt"
    process = await asyncio.create_subprocess_exec(
        str(TETHER),
        "run",
        "--temporal",
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
        timeout_s=PATIENCE_S,
        what="the nap to start",
    )
    process.send_signal(signal.SIGINT)
    _, stderr = await asyncio.wait_for(process.communicate(), PATIENCE_S)
    assert process.returncode == 130, stderr.decode()
    sid = session_id(stderr.decode())
    show = tether(cluster, tmp_path, "sessions", "show", sid)
    assert "ABORTED" in show.stdout, show.stdout
    assert tether(cluster, tmp_path, "sessions", "check", sid).returncode == 0


def test_chat_on_temporal_runs_a_turn_per_line_and_quits_on_exit(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(text_reply("first answer"), text_reply("second answer"))
    args = ("chat", "--temporal", cluster.address, "--task-queue", "main")
    done = tether(cluster, tmp_path, *args, stdin="hello\nagain\n/exit\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "› first answer\n› second answer\n› "
    assert tether(cluster, tmp_path, "sessions", "check", session_id(done.stderr)).returncode == 0


def test_resume_attaches_to_the_session_across_a_continue_as_new_and_keeps_one_log(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(text_reply("one"), text_reply("two"), text_reply("three"))
    base = ("run", "--temporal", cluster.address, "--task-queue", "main")
    first = tether(cluster, tmp_path, *base, "turn one", "--turns-per-run", "1")
    assert (first.returncode, first.stdout) == (0, "one\n"), first.stderr
    sid = session_id(first.stderr)
    for prompt, answer in (("turn two", "two\n"), ("turn three", "three\n")):
        done = tether(cluster, tmp_path, *base, prompt, "--resume", sid)
        assert (done.returncode, done.stdout) == (0, answer), done.stderr
    assert tether(cluster, tmp_path, "sessions", "check", sid).returncode == 0
    events = SessionStore(cluster.root / "home" / "sessions").load(sid).events
    ends = [e.data["turn"] for e in events if e.type == "turn/end"]
    prompts = [
        e.data["content"][0]["text"]
        for e in events
        if e.type == "user/message" and e.data["source"] == {"kind": "user"}
    ]
    assert (ends, prompts) == ([1, 2, 3], ["turn one", "turn two", "turn three"])
    assert [e.seq for e in events] == list(range(len(events)))


def test_resume_of_a_session_without_a_running_workflow_is_refused(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    args = ("run", "--temporal", cluster.address, "hi", "--resume", "no-such-session")
    done = tether(cluster, tmp_path, *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"tether: session no-such-session cannot be resumed on {cluster.address}: no workflow; "
        "start a new session (without --resume)\n"
    )
