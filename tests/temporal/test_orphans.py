"""A turn whose client was killed is not lost (issue 25): its session is recorded locally from
its first turn, `tether temporal sessions` lists it with what it is doing, `tether temporal
attach ID` follows it to its end and `tether temporal abort ID` stops it — both bring the local
log up to date — and `--resume` says which of the two to use. Real `tether` subprocesses
against the dev server and the shared worker."""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from tether.agent.session import SessionStore
from tether.testing.scripted_model import text_reply, tool_calls_reply

from .conftest import TETHER, Cluster, WorkerProcess, wait_for
from .test_sessions import bash

pytestmark = pytest.mark.slow


def sleeping(duration: str) -> list[int]:
    """The pids of live `sleep <duration>` processes (each test's duration is its own)."""
    found = []
    for process in psutil.process_iter(["pid"]):
        with contextlib.suppress(psutil.Error):
            live = process.status() != psutil.STATUS_ZOMBIE
            if live and process.cmdline() == ["sleep", duration]:
                found.append(process.pid)
    return found


def orphan(cluster: Cluster, cwd: Path, marker: Path) -> str:
    """Start `tether run --temporal` on a turn that runs the scripted bash call, kill the
    client with SIGKILL once the command has started; the session id."""
    client = cluster.start_tether(
        cwd,
        "run",
        "--temporal",
        cluster.address,
        "work",
        "--task-queue",
        "main",
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_for(marker.exists, timeout_s=60, what="the orphan's command to start")
    finally:
        client.kill()
        _, stderr = client.communicate(timeout=30)
    match = re.search(r"session (\S+) ·", stderr)
    assert match is not None, stderr
    return match.group(1)


def store(cluster: Cluster) -> SessionStore:
    return SessionStore(cluster.root / "home" / "sessions")


def test_an_orphaned_turn_is_listed_then_attach_follows_it_to_its_end(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    marker = main_worker.workspace / "orphan-attach.txt"
    go = main_worker.workspace / "orphan-attach.go"
    wait = f"touch {marker.name}; until [ -e {go.name} ]; do sleep 0.05; done; echo woke"
    cluster.model.push(tool_calls_reply(bash("nap", wait)), text_reply("Woke up."))
    sid = orphan(cluster, tmp_path, marker)
    assert cluster.tether(tmp_path, "sessions", "check", sid).returncode == 0
    assert sid in cluster.tether(tmp_path, "sessions", "list").stdout

    listed = cluster.tether(
        tmp_path, "temporal", "sessions", "--address", cluster.address, "--json"
    )
    assert listed.returncode == 0, listed.stderr
    (row,) = [r for r in json.loads(listed.stdout) if r["session_id"] == sid]
    assert (row["turn"], row["state"], row["busy"], row["approvals"]) == (1, "tools", True, 0)
    assert row["prompt"] == "work"

    attach = cluster.start_tether(tmp_path, "temporal", "attach", sid)  # the log's cluster
    assert attach.stderr is not None
    line = attach.stderr.readline()
    assert line == f"tether: following the running turn of session {sid} (Ctrl-C aborts it)\n"
    go.touch()
    stdout, stderr = attach.communicate(timeout=120)
    assert (attach.returncode, stdout) == (0, "Woke up.\n"), stderr
    assert cluster.tether(tmp_path, "sessions", "check", sid).returncode == 0
    events = store(cluster).load(sid).events
    (result,) = [e.data for e in events if e.type == "tool/result"]
    assert "woke" in result["message"]["content"][0]["content"][0]["text"]
    assert [e.data["reason"] for e in events if e.type == "turn/end"] == [{"kind": "completed"}]


def test_abort_stops_an_orphaned_turn_and_records_its_outcome(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    marker = main_worker.workspace / "orphan-abort.txt"
    duration = f"60.{secrets.randbelow(10**9):09d}"  # the command's sleep, found by its argv
    cluster.model.push(
        tool_calls_reply(bash("stuck", f"touch {marker.name}; sleep {duration}; echo never"))
    )
    sid = orphan(cluster, tmp_path, marker)
    wait_for(lambda: sleeping(duration), timeout_s=30, what="its sleep")

    again = cluster.tether(tmp_path, "run", "--temporal", cluster.address, "more", "--resume", sid)
    assert again.returncode == 2
    assert again.stderr.splitlines()[-1] == (
        f"tether: turn 1 is still running in this session: follow it with `tether temporal "
        f"attach {sid}`, stop it with `tether temporal abort {sid}`"
    )

    started = time.monotonic()
    aborted = cluster.tether(tmp_path, "temporal", "abort", sid)
    assert aborted.returncode == 0, aborted.stderr
    assert "turn 1 ended aborted" in aborted.stderr
    assert time.monotonic() - started < 60  # not the sleep: the abort ended it
    assert sleeping(duration) == []
    assert cluster.tether(tmp_path, "sessions", "check", sid).returncode == 0
    events = store(cluster).load(sid).events
    (result,) = [e.data for e in events if e.type == "tool/result"]
    assert result["error"]["code"] == "ABORTED"
    assert [e.data["reason"]["kind"] for e in events if e.type == "turn/end"] == ["aborted"]

    idle = cluster.tether(tmp_path, "temporal", "abort", sid)
    assert idle.returncode == 0
    assert f"no turn is running in session {sid}" in idle.stderr


def test_sessions_of_a_namespace_that_does_not_exist_fails_in_one_line(
    cluster: Cluster, main_worker: WorkerProcess, tmp_path: Path
) -> None:
    done = subprocess.run(
        [str(TETHER), "temporal", "sessions", "--namespace", "no-such-namespace"],
        cwd=tmp_path,
        env={**cluster.env(tmp_path), "TEMPORAL_ADDRESS": cluster.address},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, "")
    (line,) = done.stderr.splitlines()
    assert line.startswith("tether: ")
    assert "no-such-namespace" in line
