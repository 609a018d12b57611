"""Session-log faults through the `tether` command line (issue 18): real subprocesses, real files.

Contract: a `tether run` whose session log hits a full disk (a real tmpfs, or the write seam
where mounting is refused: `tests/agent/_disk.py`; the disk fills while a bash call runs, so the
call's result is the first record refused) stops the turn with one line on stderr (exit
1, no traceback) and leaves a log that is a valid prefix ending at the last record it could
write; `sessions check` reports the cut turn and names `resume`; once there is space, `resume`
writes
`TOOL_OUTCOME_UNKNOWN` for the call whose outcome was not recorded and `TOOL_NOT_STARTED` for the
call that never started, and `check` passes. A `tether` killed while creating a session leaves
nothing that `list` or `check` show, and the next command removes its temp file. `check` reports
every broken file (empty, garbage header, another version, unreadable) with its id and reason. A
file damaged in the middle is checked to `repair`, refused by `resume` with the same advice, and
`repair` moves the damaged lines to a side file, saying exactly which. A last line that lacks
only its newline is a valid record.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.agent.session import OUTCOME_UNKNOWN_TEXT, TOOL_NOT_STARTED_TEXT
from tether.testing.scripted_model import (
    ScriptedModelServer,
    ScriptedResponse,
    text_reply,
    tool_calls_reply,
)

from ..agent._disk import SmallDisk
from ..agent.test_session_faults import CLOSED_WITHOUT_RESULTS
from ._support import Cli

pytestmark = pytest.mark.slow


def two_calls(disk: SmallDisk) -> ScriptedResponse:
    """Two exclusive calls: r1_s0 prints ~60 KB and then fills the disk, so its `tool/call` is
    recorded and its result is refused; r1_s1 never starts."""
    command = f"seq 1 12000; {disk.fill_command()}"
    return tool_calls_reply(
        ("r1_s0", "bash", json.dumps({"command": command, "description": "count"})),
        ("r1_s1", "bash", '{"command": "echo second", "description": "echo"}'),
    )


@pytest.fixture
async def server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as scripted:
        yield scripted


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[SmallDisk]:
    small = SmallDisk.open(tmp_path / "home", size=256 * 1024)
    try:
        yield small
    finally:
        small.close()


@pytest.fixture
def cli(tmp_path: Path, server: ScriptedModelServer) -> Cli:
    return Cli(tmp_path, server.base_url)


def use(cli: Cli, disk: SmallDisk) -> None:
    """Point the next `tether` at the disk as it is now (seam mode: its budget)."""
    for key in ("TETHER_TEST_WRITE_BUDGET", "TETHER_TEST_FULL_WHILE"):
        cli.env.pop(key, None)
    cli.env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    cli.env.update(disk.env())


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


async def finished_session(cli: Cli, server: ScriptedModelServer) -> str:
    server.push(text_reply("hello there"))
    done = await cli.run("run", "say hi")
    assert done.code == 0, done.stderr
    (summary,) = cli.sessions()
    return summary.id


# -- 1. a full disk mid-turn ----------------------------------------------------------------------


async def test_a_full_disk_stops_the_turn_in_one_line_and_resume_records_the_outcomes_later(
    cli: Cli, server: ScriptedModelServer, disk: SmallDisk
) -> None:
    server.push(two_calls(disk))
    use(cli, disk)

    # the command fills the disk of the tether home, outside the workspace: no sandbox
    done = await cli.run("run", "--yolo", "--sandbox", "danger-full-access", "count")

    (summary,) = cli.sessions()
    sid, path = summary.id, summary.path
    assert done.code == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"tether: SESSION_WRITE_FAILED: cannot append to {path}: [Errno 28] No space left on"
        " device; the turn stopped (its started tool calls were stopped and awaited); once there"
        f" is space, `tether sessions resume {sid}` records their outcome"
    )
    records = lines(path)
    assert [records[-2]["type"], records[-1]["type"]] == ["assistant/message", "tool/call"]
    assert records[-1]["data"]["call_id"] == "r1_s0"
    asked, called = records[-2]["seq"], records[-1]["seq"]

    check = await cli.run("sessions", "check", sid)

    assert (check.code, check.stdout.splitlines()) == (
        1,
        [
            f"{sid}: OPEN_TURN: turn 1 (seq 0) has no turn/end: the writer stopped mid-turn;"
            " loading the session closes it",
            f'{sid}: MISSING_RESULT: tool/call "r1_s0" (bash, seq {called}) has no tool/result',
            f'{sid}: MISSING_RESULT: tool call "r1_s1" requested by assistant/message seq {asked}'
            " has no tool/result",
            f"run `tether sessions resume {sid}` to repair an interrupted turn",
        ],
    )

    disk.free()
    use(cli, disk)
    resumed = await cli.run("sessions", "resume", sid, input=b"/exit\n")

    assert resumed.code == 0, resumed.stderr
    assert (
        "tether: repaired the session log: closed interrupted turn 1 with synthetic tool results"
        " (1 TOOL_OUTCOME_UNKNOWN, 1 TOOL_NOT_STARTED)" in resumed.stderr
    )
    added = lines(path)[len(records) :]
    assert [(r["type"], r.get("source_event_seqs")) for r in added] == [
        ("tool/result", [called]),
        ("tool/result", None),
        ("step/end", None),
        ("turn/end", None),
    ]
    assert [r["data"]["message"]["content"][0]["content"][0]["text"] for r in added[:2]] == [
        OUTCOME_UNKNOWN_TEXT,
        TOOL_NOT_STARTED_TEXT,
    ]
    assert added[3]["data"]["reason"] == {"kind": "interrupted"}
    check = await cli.run("sessions", "check", sid)
    assert (check.code, check.stdout) == (0, f"{sid}: ok\n")


async def test_resume_gives_a_turn_closed_without_its_results_the_missing_ones(cli: Cli) -> None:
    """The log a tether before issue 18 left on a full disk: `tool/call r1_s0`, `step/end`,
    `turn/end {"kind": "error", ... "[Errno 28]"}` — the turn closed, two results missing."""
    path = cli.store.path("s1")
    path.parent.mkdir(parents=True)
    header = {"type": "session", "version": 0, "id": "s1", "created_at": 1}
    records = [header, *CLOSED_WITHOUT_RESULTS]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))

    checked = await cli.run("sessions", "check", "s1")
    resumed = await cli.run("sessions", "resume", "s1", input=b"/exit\n")

    assert (checked.code, checked.stdout.splitlines()) == (
        1,
        [
            's1: MISSING_RESULT: tool/call "r1_s0" (bash, seq 3) has no tool/result',
            's1: MISSING_RESULT: tool call "r1_s1" requested by assistant/message seq 2 has no'
            " tool/result",
            "run `tether sessions resume s1` to repair an interrupted turn",
        ],
    )
    assert resumed.code == 0, resumed.stderr
    assert (
        "tether: repaired the session log: gave turn 1 its missing tool results"
        " (1 TOOL_OUTCOME_UNKNOWN, 1 TOOL_NOT_STARTED)" in resumed.stderr
    )
    after = await cli.run("sessions", "check", "s1")
    assert (after.code, after.stdout) == (0, "s1: ok\n")


# -- 2. a kill during session creation ------------------------------------------------------------

_DIE_AT = """
import os, signal, sys
from tether.agent.session import SessionStore
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
setattr(os, sys.argv[2], die)
log = SessionStore(sys.argv[1]).create(session_id="s1")
log.append("todo/write", {"todos": []})
"""
"""A real writer SIGKILLed at one exact point of publishing its file: just before the hard link
(`link`: only the temp file exists) or just after it (`unlink`: the temp file is still there)."""


def killed_while_creating(cli: Cli, at: str) -> Path:
    root = cli.home / "sessions"
    done = subprocess.run(
        [sys.executable, "-c", _DIE_AT, str(root), at],
        env=cli.env,
        capture_output=True,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    return root / "s1"


async def test_a_kill_before_the_session_file_is_published_leaves_no_session_and_no_temp_file(
    cli: Cli,
) -> None:
    directory = killed_while_creating(cli, "link")
    assert sorted(p.name for p in directory.iterdir()) == [
        f".session.jsonl.{_only_pid(directory)}.tmp",
        "writer.lock",
    ]

    listed = await cli.run("sessions", "list")
    checked = await cli.run("sessions", "check")

    assert (listed.code, listed.stdout, checked.code, checked.stdout) == (0, "", 0, "")
    assert not directory.exists()


async def test_a_kill_after_the_session_file_is_published_leaves_the_session_whole(
    cli: Cli,
) -> None:
    directory = killed_while_creating(cli, "unlink")
    assert len(list(directory.glob(".session.jsonl.*.tmp"))) == 1

    checked = await cli.run("sessions", "check")

    assert (checked.code, checked.stdout) == (0, "s1: ok\n")
    assert sorted(p.name for p in directory.iterdir()) == ["session.jsonl", "writer.lock"]
    assert [r["type"] for r in lines(directory / "session.jsonl")] == ["session", "todo/write"]


def _only_pid(directory: Path) -> str:
    (temp,) = directory.glob(".session.jsonl.*.tmp")
    return temp.name.split(".")[3]


# -- 3. check misses nothing ----------------------------------------------------------------------


def broken_sessions(cli: Cli) -> dict[str, Path]:
    root = cli.home / "sessions"
    made: dict[str, Path] = {}
    for name in ("empty", "garbage", "future", "unreadable"):
        (root / name).mkdir(parents=True)
        made[name] = root / name / "session.jsonl"
    made["empty"].write_bytes(b"")
    made["garbage"].write_bytes(b"hello\n")
    made["future"].write_text(
        json.dumps({"type": "session", "version": 99, "id": "future", "created_at": 1}) + "\n"
    )
    # Tests run as root, which reads a file whatever its mode; a directory where the file
    # should be is unreadable for root too (EISDIR), through the same read path as EACCES.
    made["unreadable"].mkdir()
    return made


async def test_check_without_an_id_reports_every_broken_session_with_its_reason(
    cli: Cli, server: ScriptedModelServer
) -> None:
    good = await finished_session(cli, server)
    made = broken_sessions(cli)

    done = await cli.run("sessions", "check")

    repair = (
        "run `tether sessions repair {}` to keep the valid part and move the rest to a side file"
    )
    assert done.code == 1
    assert done.stdout.splitlines() == [
        f"{good}: ok",
        "empty: EMPTY_FILE: the file is empty: it has no session header",
        repair.format("empty"),
        "future: VERSION: line 1: session format version 99 is not supported (this tether reads"
        " version 0); it was written by a newer tether — upgrade",
        "garbage: BAD_HEADER: line 1 is not a session header (not valid JSON)",
        repair.format("garbage"),
        f"unreadable: UNREADABLE: cannot read {made['unreadable']}: [Errno 21] Is a directory:"
        f" '{made['unreadable']}'",
    ]


async def test_check_of_an_empty_file_by_id_fails_and_repair_moves_it_aside(cli: Cli) -> None:
    made = broken_sessions(cli)

    checked = await cli.run("sessions", "check", "empty")
    repaired = await cli.run("sessions", "repair", "empty")

    assert (checked.code, checked.stdout.splitlines()[0]) == (
        1,
        "empty: EMPTY_FILE: the file is empty: it has no session header",
    )
    side = made["empty"].with_name("session.damaged-1.jsonl")
    assert (repaired.code, repaired.stdout.splitlines()) == (
        0,
        [
            f"empty: moved line 1 (0 bytes from offset 0) to {side}: the file is empty",
            f"empty: no valid header remains: the session file {made['empty']} is gone",
        ],
    )
    assert not made["empty"].exists()


# -- 4. repairable means repairable ---------------------------------------------------------------


async def test_a_file_damaged_in_the_middle_is_checked_to_repair_refused_by_resume_and_salvaged(
    cli: Cli, server: ScriptedModelServer
) -> None:
    sid = await finished_session(cli, server)
    path = cli.store.path(sid)
    raw = path.read_bytes().splitlines(keepends=True)
    raw[3] = b"this line was overwritten\n"  # line 4: the user message
    path.write_bytes(b"".join(raw))
    offset = sum(len(line) for line in raw[:3])
    damaged = b"".join(raw[3:])

    checked = await cli.run("sessions", "check", sid)
    resumed = await cli.run("sessions", "resume", sid, input=b"/exit\n")
    repaired = await cli.run("sessions", "repair", sid)

    assert checked.code == 1
    assert checked.stdout.splitlines()[0] == f"{sid}: INVALID_LINE: line 4: not valid JSON"
    assert checked.stdout.splitlines()[-1] == (
        f"run `tether sessions repair {sid}` to keep the valid part and move the rest to a side"
        " file"
    )
    assert (resumed.code, resumed.stderr) == (
        2,
        f"tether: {path}: line 4 is corrupt (not valid JSON); run `tether sessions repair {sid}`"
        " to keep the valid part and move the rest to a side file\n",
    )
    side = path.with_name("session.damaged-1.jsonl")
    assert (repaired.code, repaired.stdout.splitlines()) == (
        0,
        [
            f"{sid}: moved lines 4-{len(raw)} ({len(damaged)} bytes from offset {offset}) to"
            f" {side}: line 4: not valid JSON",
            f"{sid}: closed interrupted turn 1",
        ],
    )
    assert side.read_bytes() == damaged
    assert [r["type"] for r in lines(path)] == [
        "session",
        "turn/start",
        "step/start",
        "step/end",
        "turn/end",
    ]
    after = await cli.run("sessions", "check", sid)
    assert (after.code, after.stdout) == (0, f"{sid}: ok\n")


async def test_a_last_line_that_lacks_only_its_newline_is_a_valid_event(
    cli: Cli, server: ScriptedModelServer
) -> None:
    sid = await finished_session(cli, server)
    path = cli.store.path(sid)
    whole = path.read_bytes()
    path.write_bytes(whole[:-1])

    checked = await cli.run("sessions", "check", sid)
    resumed = await cli.run("sessions", "resume", sid, input=b"/exit\n")

    assert (checked.code, checked.stdout) == (0, f"{sid}: ok\n")
    assert resumed.code == 0, resumed.stderr
    assert "repaired" not in resumed.stderr
    assert path.read_bytes() == whole
