"""Subagents from the command line: real `tether` processes, a real terminal, real crashes.

Contract (issue 16 "Done when"): in `tether chat`, Ctrl-C during a foreground child's
`bash sleep 30` aborts the caller's turn and with it the child's: the `task` call ends `ABORTED`
within twice the shell's kill grace, the command's process is gone, and both logs are balanced.
A background child survives the caller's Ctrl-C, and `job_kill` stops it. A `tether run` killed
with SIGKILL mid-child leaves two open logs: `sessions check` names the child's defects first,
and `sessions resume` repairs the child's log, then the caller's — whose open `task` call gets
`TOOL_OUTCOME_UNKNOWN` naming the child session. `sessions show` marks the link.

The model is a `ScriptedModelServer` on 127.0.0.1 answering per conversation (`Router`).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli._support import TETHER, Cli, Terminal, eventually, gone, process_running
from tether.agent.session import OUTCOME_UNKNOWN_TEXT
from tether.testing.scripted_model import (
    ScriptedModelServer,
    hang,
    reply,
    text_reply,
    tool_calls_reply,
)

from ._support import Router, alive, bash_call, group_members, results, task_call

pytestmark = pytest.mark.slow

SLEEP = ["sleep", "30"]


@pytest.fixture
async def server(router: Router) -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer(fallback=router) as scripted:
        yield scripted


@pytest.fixture
def cli(tmp_path: Path, server: ScriptedModelServer) -> Cli:
    built = Cli(tmp_path, server.base_url)
    home = tmp_path / "user-home"
    home.mkdir()
    built.env["HOME"] = str(home)  # no ~/.claude of the machine's user
    return built


def children(cli: Cli, parent_id: str) -> list[str]:
    return sorted(
        s.id for s in cli.sessions() if cli.store.load(s.id).header.parent_session == parent_id
    )


def top_session(cli: Cli) -> str:
    (top,) = [s.id for s in cli.sessions() if cli.store.load(s.id).header.parent_session is None]
    return top


async def approve_if_asked(terminal: Terminal, argv: list[str]) -> None:
    """Answer `y` if the chat asks before running the command."""

    def asked_or_running() -> bool:
        return "approve?" in terminal.output or bool(process_running(terminal.process.pid, argv))

    await eventually(asked_or_running, what="the approval prompt or the command")
    if "approve?" in terminal.output:
        terminal.send(b"y\r")


async def test_ctrl_c_in_chat_stops_a_foreground_childs_bash_and_aborts_the_task_call(
    cli: Cli, router: Router
) -> None:
    router.script("delegate the wait", tool_calls_reply(task_call("t1", "wait a while")))
    router.script("wait a while", tool_calls_reply(bash_call("b1", "sleep 30")))
    terminal = await Terminal.open([str(TETHER), "chat"], cwd=cli.work, env=cli.env)
    try:
        await terminal.expect("›")
        terminal.send(b"delegate the wait\r")
        await approve_if_asked(terminal, SLEEP)
        await eventually(lambda: process_running(terminal.process.pid, SLEEP), what="the sleep")
        sleeper = process_running(terminal.process.pid, SLEEP)
        assert sleeper is not None

        group = os.getpgid(sleeper.pid)
        loop = asyncio.get_running_loop()
        pressed = loop.time()
        terminal.send(b"\x03")
        await terminal.expect("✗ task a subtask ABORTED")
        elapsed = loop.time() - pressed
        assert gone(sleeper)  # already gone when the call's result was shown
        assert group_members(group) == []
        await terminal.expect("›")
        terminal.send(b"/exit\r")
        assert await terminal.wait() == 0
    finally:
        await terminal.aclose()

    assert elapsed < 30  # stopped, not left to finish its sleep (never a tighter bound: load)
    parent_id = top_session(cli)
    (child_id,) = children(cli, parent_id)
    assert results(cli.store.load(parent_id).events) == [
        ("t1", {"name": "AbortError", "code": "ABORTED"})
    ]
    assert results(cli.store.load(child_id).events) == [
        ("b1", {"name": "AbortError", "code": "ABORTED"})
    ]
    check = await cli.run("sessions", "check", parent_id)
    assert (check.code, check.stdout) == (0, f"{child_id}: ok\n{parent_id}: ok\n")


async def test_a_background_child_survives_ctrl_c_and_job_kill_stops_it(
    cli: Cli, router: Router
) -> None:
    router.script(
        "start it",
        tool_calls_reply(task_call("t1", "wait in the back", background=True)),
        reply(hang()),
        tool_calls_reply(("k1", "job_kill", json.dumps({"job_id": "task-1"}))),
        tool_calls_reply(("o1", "job_output", json.dumps({"job_id": "task-1", "wait": True}))),
        text_reply("stopped it"),
    )
    router.script("wait in the back", tool_calls_reply(bash_call("b1", "sleep 30")))
    terminal = await Terminal.open([str(TETHER), "chat"], cwd=cli.work, env=cli.env)
    try:
        await terminal.expect("›")
        terminal.send(b"start it\r")
        await approve_if_asked(terminal, SLEEP)
        await eventually(lambda: process_running(terminal.process.pid, SLEEP), what="the sleep")
        sleeper = process_running(terminal.process.pid, SLEEP)
        assert sleeper is not None
        await eventually(lambda: len(router.seen["start it"]) == 2, what="the second request")

        terminal.send(b"\x03")
        await terminal.expect("tether: turn aborted; tool outcomes are recorded")
        await terminal.expect("›")
        assert not gone(sleeper)
        asked = len(terminal.output)

        terminal.send(b"stop the job\r")
        await eventually(
            lambda: "approve?" in terminal.output[asked:] or "stopped it" in terminal.output,
            what="the job_kill approval or the answer",
        )
        if "stopped it" not in terminal.output:
            terminal.send(b"y\r")
        await terminal.expect("stopped it")
        assert gone(sleeper)
        await terminal.expect("›")
        terminal.send(b"/exit\r")
        assert await terminal.wait() == 0
    finally:
        await terminal.aclose()

    parent_id = top_session(cli)
    (child_id,) = children(cli, parent_id)
    parent = cli.store.load(parent_id)
    assert results(parent.events) == [("t1", None), ("k1", None), ("o1", None)]
    (output,) = [e for e in parent.events if e.type == "tool/result"][-1:]
    message: Any = output.data["message"]
    assert "[status: killed, stopped; session " + child_id in json.dumps(message)
    check = await cli.run("sessions", "check", parent_id)
    assert (check.code, check.stdout) == (0, f"{child_id}: ok\n{parent_id}: ok\n")


async def test_kill_9_mid_child_then_resume_repairs_the_child_log_then_the_parents(
    cli: Cli, router: Router
) -> None:
    router.script("delegate the wait", tool_calls_reply(task_call("t1", "wait a while")))
    router.script("wait a while", tool_calls_reply(bash_call("b1", "sleep 30")))
    process = await cli.spawn(
        "run", "--allow", "Bash(sleep 30)", "delegate the wait", new_session=True
    )
    sleeper = None
    try:
        await eventually(lambda: process_running(process.pid, SLEEP), what="the sleep command")
        sleeper = process_running(process.pid, SLEEP)
        os.killpg(process.pid, signal.SIGKILL)
        assert await process.wait() == -signal.SIGKILL
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert sleeper is not None
    await eventually(lambda: not alive(sleeper), what="the command ending with its tether")
    parent_id = top_session(cli)
    (child_id,) = children(cli, parent_id)

    check = await cli.run("sessions", "check", parent_id)

    assert check.code == 1
    lines = check.stdout.splitlines()
    assert [line.split(": ")[:2] for line in lines] == [
        [child_id, "OPEN_TURN"],
        [child_id, "MISSING_RESULT"],
        [
            f"run `tether sessions resume {parent_id}` to repair an interrupted turn (it repairs"
            " its subagent sessions first)"
        ],
        [parent_id, "OPEN_TURN"],
        [parent_id, "MISSING_RESULT"],
        [f"run `tether sessions resume {parent_id}` to repair an interrupted turn"],
    ]

    resumed = await cli.run("sessions", "resume", parent_id, input=b"/exit\n")

    assert resumed.code == 0
    assert (
        f"tether: repaired the session log: subagent session {child_id}: closed interrupted turn"
        " 1 with synthetic tool results (1 TOOL_OUTCOME_UNKNOWN)"
    ) in resumed.stderr
    assert cli.store.check(child_id) == []
    assert cli.store.check(parent_id) == []
    parent = cli.store.load(parent_id)
    (repaired,) = [e for e in parent.events if e.type == "tool/result"]
    data: Any = repaired.data
    assert dict(data["error"]) == {
        "name": "ToolOutcomeUnknownError",
        "code": "TOOL_OUTCOME_UNKNOWN",
    }
    assert data["message"]["content"][0]["content"] == [
        {
            "type": "text",
            "text": OUTCOME_UNKNOWN_TEXT
            + f" This call ran a subagent in session {child_id}; its own log records what it"
            f" did: `tether sessions show {child_id}`.",
        }
    ]
    assert dict(data["meta"]) == {"subagent_session": child_id}


async def test_sessions_show_marks_the_child_and_its_parent(cli: Cli, router: Router) -> None:
    router.script(
        "delegate", tool_calls_reply(task_call("t1", "look around")), text_reply("all done")
    )
    router.script("look around", text_reply("nothing here"))
    done = await cli.run("run", "delegate")
    assert done.code == 0, done.stderr
    parent_id = top_session(cli)
    (child_id,) = children(cli, parent_id)

    shown = await cli.run("sessions", "show", parent_id)
    child_shown = await cli.run("sessions", "show", child_id)

    assert f"    subagent general-purpose for t1: session {child_id}" in shown.stdout.splitlines()
    assert child_shown.stdout.splitlines()[1] == (
        f"subagent of session {parent_id}  (delegation depth 1)"
    )
