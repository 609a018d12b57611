"""`tether run --temporal` and `tether chat --temporal` as real subprocesses against the dev
server and the shared worker: the answer on stdout, the session projected so `tether sessions
show/check` work, Ctrl-C (SIGINT) sends the abort signal and waits for the turn's balanced end,
`--resume` attaches to a running session workflow — across a continue-as-new too — and refuses
one that has none. `tether temporal run|chat ADDRESS` are the same commands."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import signal
import subprocess
import threading
from pathlib import Path

import psutil
import pytest

from tether.agent.session import SessionStore
from tether.temporal.devserver import DevServer, free_port
from tether.testing.scripted_model import text_reply, tool_calls_reply

from ..patience import PATIENCE_S
from .conftest import TETHER, Cluster, WorkerProcess, eventually, wait_for

pytestmark = pytest.mark.slow


def bash(call_id: str, command: str) -> tuple[str, str, str]:
    return (call_id, "bash", json.dumps({"command": command, "description": "test"}))


def session_id(stderr: str) -> str:
    match = re.search(r"session (\S+) ·", stderr)
    assert match is not None, stderr
    return match.group(1)


def test_run_on_temporal_prints_the_answer_and_the_projected_session_checks_clean(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(tool_calls_reply(bash("c1", "echo cli")), text_reply("It said cli."))
    args = ("run", "--temporal", cluster.address, "say cli", "--task-queue", "main")
    done = cluster.tether(tmp_path, *args)
    assert (done.returncode, done.stdout) == (0, "It said cli.\n"), done.stderr
    sid = session_id(done.stderr)
    check = cluster.tether(tmp_path, "sessions", "check", sid)
    assert check.returncode == 0, check.stdout + check.stderr
    show = cluster.tether(tmp_path, "sessions", "show", sid)
    assert show.returncode == 0, show.stderr
    assert "It said cli." in show.stdout


def test_tether_temporal_run_address_is_the_same_command(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(text_reply("Same command."))
    args = ("temporal", "run", cluster.address, "hello", "--task-queue", "main")
    done = cluster.tether(tmp_path, *args)
    assert (done.returncode, done.stdout) == (0, "Same command.\n"), done.stderr


@pytest.mark.parametrize(
    ("ending", "status"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)],
    ids=["SIGINT", "SIGTERM", "SIGHUP"],
)
async def test_an_ending_signal_to_run_on_temporal_aborts_the_turn_and_exits_128_plus_n(
    cluster: Cluster,
    main_worker: WorkerProcess,
    tmp_path: Path,
    ending: signal.Signals,
    status: int,
) -> None:
    name = f"cli-nap-{ending.name}.txt"
    cluster.model.push(tool_calls_reply(bash("nap", f"echo $$ > {name}; sleep 30")))
    marker = main_worker.workspace / name
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
    process.send_signal(ending)
    _, stderr = await asyncio.wait_for(process.communicate(), PATIENCE_S)
    assert process.returncode == status, stderr.decode()
    assert f"aborting the turn ({ending.name})" in stderr.decode()
    sid = session_id(stderr.decode())
    show = cluster.tether(tmp_path, "sessions", "show", sid)
    assert "ABORTED" in show.stdout, show.stdout
    assert cluster.tether(tmp_path, "sessions", "check", sid).returncode == 0


def test_chat_on_temporal_runs_a_turn_per_line_and_quits_on_exit(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(text_reply("first answer"), text_reply("second answer"))
    args = ("chat", "--temporal", cluster.address, "--task-queue", "main")
    done = cluster.tether(tmp_path, *args, stdin="hello\nagain\n/exit\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "› first answer\n› second answer\n› "
    assert cluster.tether(tmp_path, "sessions", "check", session_id(done.stderr)).returncode == 0


def test_resume_attaches_to_the_session_across_a_continue_as_new_and_keeps_one_log(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(text_reply("one"), text_reply("two"), text_reply("three"))
    base = ("run", "--temporal", cluster.address, "--task-queue", "main")
    first = cluster.tether(tmp_path, *base, "turn one", "--turns-per-run", "1")
    assert (first.returncode, first.stdout) == (0, "one\n"), first.stderr
    sid = session_id(first.stderr)
    for prompt, answer in (("turn two", "two\n"), ("turn three", "three\n")):
        done = cluster.tether(tmp_path, *base, prompt, "--resume", sid)
        assert (done.returncode, done.stdout) == (0, answer), done.stderr
    assert cluster.tether(tmp_path, "sessions", "check", sid).returncode == 0
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
    done = cluster.tether(tmp_path, *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"tether: session no-such-session cannot be resumed on {cluster.address}: no workflow; "
        "start a new session (without --resume)\n"
    )


# -- output formats and a clean stdout (issue 25) -------------------------------------------------


def test_run_on_temporal_with_json_output_prints_one_result_object(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(tool_calls_reply(bash("j1", "echo json")), text_reply("It said json."))
    args = ("run", "--temporal", cluster.address, "say json", "--task-queue", "main")
    done = cluster.tether(tmp_path, *args, "--output-format", "json")
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    record = json.loads(line)
    extras = record.pop("tether")
    (call,) = extras.pop("tool_calls")
    timing = ("uuid", "duration_ms", "duration_api_ms", "usage", "modelUsage")
    assert {k: v for k, v in record.items() if k not in timing} == {
        "type": "result",
        "subtype": "success",
        "result": "It said json.",
        "is_error": False,
        "num_turns": 2,
        "session_id": session_id(done.stderr),
        "stop_reason": "end_turn",
        "total_cost_usd": None,
        "permission_denials": [],
        "terminal_reason": "completed",
        "api_error_status": None,
    }
    assert extras == {
        "model": "scripted",
        "turn": 1,
        "outcome": {"kind": "completed"},
        "exit_code": 0,
    }
    assert call.pop("duration_ms") >= 0
    assert call == {
        "id": "j1",
        "name": "bash",
        "input": {"command": "echo json", "description": "test"},
        "is_error": False,
        "code": None,
    }

    cluster.model.push(text_reply("Again."))  # a turn that records no request context
    again = cluster.tether(
        tmp_path, *args, "--output-format", "json", "--resume", record["session_id"]
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["tether"]["model"] == "scripted"


def test_run_on_temporal_with_stream_json_prints_the_turn_as_it_happens(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(tool_calls_reply(bash("s1", "echo stream")), text_reply("Streamed."))
    args = ("run", "--temporal", cluster.address, "stream it", "--task-queue", "main")
    done = cluster.tether(tmp_path, *args, "--output-format", "stream-json")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["type"] for r in records] == ["system", "assistant", "user", "assistant", "result"]
    assert {r["session_id"] for r in records} == {session_id(done.stderr)}
    assert records[2]["message"]["content"][0]["content"] == "stream\n"
    assert records[3]["message"]["content"] == [{"type": "text", "text": "Streamed."}]
    assert records[-1]["result"] == "Streamed."


def test_piped_stdout_carries_only_the_answer_while_the_server_restarts(
    cluster: Cluster, tmp_path: Path
) -> None:
    """A dev server of its own, stopped mid-turn and started again on the same port and file:
    the SDK's retry warnings go to stderr; stdout is the answer alone."""
    server = DevServer.start(tmp_path / "restart.sqlite", log=tmp_path / "restart-server.log")
    workspace = tmp_path / "ws"
    worker = cluster.spawn_worker("restart", workspace, "restart", address=server.address)
    marker, go = workspace / "restart.txt", workspace / "restart.go"
    wait = f"touch {marker.name}; until [ -e {go.name} ]; do sleep 0.05; done; echo done"
    cluster.model.push(tool_calls_reply(bash("r1", wait)), text_reply("Survived the restart."))
    client = cluster.start_tether(
        tmp_path, "run", "--temporal", server.address, "go", "--task-queue", "restart"
    )
    warnings: list[str] = []
    assert client.stderr is not None
    reader = threading.Thread(target=lambda: warnings.extend(client.stderr or ()), daemon=True)
    reader.start()
    try:
        wait_for(marker.exists, timeout_s=PATIENCE_S, what="the command to start")
        server.stop()
        wait_for(
            lambda: any("sdk_core" in line for line in warnings),
            timeout_s=PATIENCE_S,
            what="the client's SDK to warn that it retries",
        )
        server = DevServer.start(server.db_filename, port=server.port, ui_port=server.ui_port)
        go.touch()
        assert client.stdout is not None
        stdout = client.stdout.read()
        assert client.wait(120) == 0, "".join(warnings)
        assert stdout == "Survived the restart.\n"
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
        reader.join(10)
        for stream in (client.stdout, client.stderr):
            if stream is not None:
                stream.close()
        worker.stop()
        server.stop()


def test_kill_9_of_tether_temporal_dev_takes_its_server_with_it(
    cluster: Cluster, tmp_path: Path
) -> None:
    port, ui_port = free_port(), free_port()
    wrapper = subprocess.Popen(
        [
            str(TETHER),
            "temporal",
            "dev",
            "--port",
            str(port),
            "--ui-port",
            str(ui_port),
            "--db-filename",
            str(tmp_path / "dev.sqlite"),
        ],
        cwd=tmp_path,
        env=cluster.env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wrapper.stderr is not None
        line = wrapper.stderr.readline()
        assert line.startswith(f"tether: Temporal dev server at 127.0.0.1:{port} "), line
        (server,) = psutil.Process(wrapper.pid).children()
        assert "start-dev" in server.cmdline()
        wrapper.kill()
        wrapper.wait()
        wait_for(
            lambda: not _running(server), timeout_s=PATIENCE_S, what="the server to die with it"
        )
    finally:
        if wrapper.poll() is None:
            wrapper.kill()
            wrapper.wait()
        if wrapper.stderr is not None:
            wrapper.stderr.close()


def _running(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_attach_to_a_session_without_a_running_workflow_names_the_listing_command(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    done = cluster.tether(
        tmp_path, "temporal", "attach", "no-such-session", "--address", cluster.address
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"tether: session no-such-session cannot be resumed on {cluster.address}: no workflow; "
        "`tether temporal sessions` lists the running sessions\n"
    )


def test_stream_json_init_of_a_temporal_run_names_no_model_as_null(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    cluster.model.push(text_reply("Streamed."))
    args = ("run", "--temporal", cluster.address, "hi", "--task-queue", "main")
    done = cluster.tether(tmp_path, *args, "--output-format", "stream-json")
    assert done.returncode == 0, done.stderr
    init = json.loads(done.stdout.splitlines()[0])
    assert (init["type"], init["subtype"], init["model"]) == ("system", "init", None)


async def test_sigterm_to_a_worker_mid_call_aborts_the_call_after_its_grace_and_exits_143(
    cluster: Cluster, tmp_path: Path
) -> None:
    argv = ["sleep", f"300.{secrets.randbelow(10**9):09d}"]
    cluster.model.push(tool_calls_reply(bash("c1", " ".join(argv))), text_reply("it stopped"))
    workspace = cluster.root / "ws-ending"
    first = cluster.spawn_worker("ending", workspace, "ending-1")
    client = cluster.start_tether(
        tmp_path, "run", "--temporal", cluster.address, "nap", "--task-queue", "ending"
    )
    second = None
    try:
        await eventually(
            lambda: _running(argv), timeout_s=PATIENCE_S, what="the command on the worker"
        )
        first.process.send_signal(signal.SIGTERM)
        assert first.process.wait(PATIENCE_S) == 143, first.log.read_text()
        assert _running(argv) == []
        second = cluster.spawn_worker("ending", workspace, "ending-2")  # the turn goes on
        stdout, stderr = client.communicate(timeout=PATIENCE_S)
    finally:
        for process in (client, first.process):
            if process.poll() is None:
                process.kill()
                process.wait()
        if second is not None:
            second.stop()
        for left in _running(argv):
            left.kill()

    assert (client.returncode, stdout) == (0, "it stopped\n"), stderr
    sid = session_id(stderr)
    assert cluster.tether(tmp_path, "sessions", "check", sid).returncode == 0
    events = SessionStore(cluster.root / "home" / "sessions").load(sid).events
    codes = [(e.data.get("error") or {}).get("code") for e in events if e.type == "tool/result"]
    assert codes == ["ABORTED"]


def _running(argv: list[str]) -> list[psutil.Process]:
    """The live processes whose argv is `argv` (unique to the test)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if process.info["cmdline"] == argv and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except psutil.Error:
            pass
    return found
