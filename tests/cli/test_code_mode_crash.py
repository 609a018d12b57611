"""A `tether run` killed with SIGKILL in the middle of a `run_code` program (issue 14): real
`tether` subprocesses, the real sandbox, the scripted model server, real files.

Contract: the log the killed process leaves holds the `run_code` call and its started child,
both durable; `sessions check` names the open turn, the call without a result and the child
without its `tool/code-dispatch`; `sessions resume` repairs it — the child gets a
`tool/code-dispatch` of `TOOL_OUTCOME_UNKNOWN` citing its start, then `run_code` its
`tool/result`, then the step and the turn close — says so in one line each, and `check` passes
afterwards; `sessions show` nests the child under the call.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from tether.testing.scripted_model import ScriptedModelServer, tool_calls_reply

from ..plugins.shell._support import marker, sleeping
from ._support import Cli, eventually

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("pydantic_monty") is None, reason="needs the code-mode extra"
    ),
]

DURATION = marker()
PROGRAM = (
    "await tools.bash({'command': 'touch started; exec sleep "
    + DURATION
    + "', 'description': 'wait'})"
)


@pytest.fixture
def cli(tmp_path: Path, server: ScriptedModelServer) -> Cli:
    found = Cli(tmp_path, server.base_url)
    found.env["TETHER_TOOLS_MODE"] = "code"
    return found


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()[1:]]


async def test_a_run_killed_mid_program_leaves_a_log_that_resume_repairs(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(
        tool_calls_reply(
            ("call_code", "run_code", json.dumps({"code": PROGRAM, "description": "Wait"}))
        )
    )
    running = await cli.spawn("run", "--yolo", "wait for a while")
    try:
        await eventually((cli.work / "started").exists, what="the inner bash call to start")
    finally:
        running.kill()  # SIGKILL: its contained command ends with it
        await running.wait()
    await eventually(lambda: sleeping(DURATION) == [], what="the command to end with tether")
    (summary,) = cli.sessions()
    sid, path = summary.id, summary.path
    left = records(path)
    assert [r["type"] for r in left][-2:] == ["tool/call", "tool/code-dispatch-start"]
    call_seq, start_seq = left[-2]["seq"], left[-1]["seq"]

    check = await cli.run("sessions", "check", sid)

    assert check.code == 1
    assert check.stdout.splitlines() == [
        f"{sid}: OPEN_TURN: turn 1 (seq 0) has no turn/end: the writer stopped mid-turn;"
        " loading the session closes it",
        f'{sid}: MISSING_RESULT: tool/call "call_code" (run_code, seq {call_seq}) has no'
        " tool/result",
        f'{sid}: MISSING_RESULT: Code Mode sub-call "call_code:code:1" (bash, seq {start_seq})'
        ' of "call_code" has no tool/code-dispatch',
        f"run `tether sessions resume {sid}` to repair an interrupted turn",
    ]

    resumed = await cli.run("sessions", "resume", sid, input=b"/exit\n")

    assert resumed.code == 0, resumed.stderr
    assert "gave 1 open Code Mode sub-call the outcome TOOL_OUTCOME_UNKNOWN" in resumed.stderr
    assert (
        "closed interrupted turn 1 with synthetic tool results (1 TOOL_OUTCOME_UNKNOWN)"
        in resumed.stderr
    )
    repaired = records(path)[len(left) :]
    assert [r["type"] for r in repaired][:4] == [
        "tool/code-dispatch",
        "tool/result",
        "step/end",
        "turn/end",
    ]
    child, parent, _, ended = repaired[:4]
    assert child["data"]["sub_call_id"] == "call_code:code:1"
    assert child["data"]["error"]["info"]["code"] == "TOOL_OUTCOME_UNKNOWN"
    assert child["source_event_seqs"] == [start_seq]
    assert parent["data"]["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
    assert parent["source_event_seqs"] == [call_seq]
    assert ended["data"]["reason"] == {"kind": "interrupted"}
    assert (await cli.run("sessions", "check", sid)).stdout == f"{sid}: ok\n"

    shown = await cli.run("sessions", "show", sid)

    assert "    call call_code run_code " in shown.stdout
    assert "      result call_code:code:1 TOOL_OUTCOME_UNKNOWN\n    result " in shown.stdout
