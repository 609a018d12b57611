"""The `tether` command line, as a user runs it: real subprocesses of the installed script.

Contract (CONTRACT.md §7, issue 6): `tether run "<task>"` prints the final answer on stdout and
exits 0 iff the turn completed; a failed turn exits 1 with `tether: <CODE>: <message>` on
stderr; a missing task exits 2. `tether tools list|call` show and run the built-in tools.
`tether sessions list|show|check` read the durable logs under `$TETHER_HOME/sessions`; `check`
exits 1 on any defect. A `tether run` killed with SIGKILL mid-tool leaves an open turn that
`check` reports and that loading (or `tether sessions resume`) repairs with a
`TOOL_OUTCOME_UNKNOWN` result; a torn last line is cut on load. In `tether chat` the first Ctrl-C
aborts the running turn through its signal: the running `bash` command is killed, its `ABORTED`
result is recorded, the chat returns to its prompt, and `/exit` quits with 0.

The model is a `ScriptedModelServer` on 127.0.0.1 in the test's own event loop.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tether.agent.session import OUTCOME_UNKNOWN_TEXT, SessionEvent
from tether.testing.scripted_model import (
    ScriptedModelServer,
    http_error,
    text_reply,
    tool_calls_reply,
)

from ._support import TETHER, Cli, Terminal, eventually, gone, process_running

pytestmark = pytest.mark.slow

SLEEP_30 = ("b1", "bash", '{"command": "sleep 30", "description": "wait a while"}')


@pytest.fixture
def cli(tmp_path: Path, server: ScriptedModelServer) -> Cli:
    return Cli(tmp_path, server.base_url)


def results(events: Sequence[SessionEvent]) -> list[tuple[str, Any]]:
    """`(call_id, error or None)` per `tool/result`, in log order."""
    out: list[tuple[str, Any]] = []
    for event in events:
        if event.type == "tool/result":
            data: Any = event.data
            error = data.get("error")
            out.append((data["message"]["content"][0]["call_id"], error and dict(error)))
    return out


async def finished_session(cli: Cli, server: ScriptedModelServer) -> str:
    server.push(text_reply("hello there"))
    done = await cli.run("run", "say hi")
    assert done.code == 0, done.stderr
    (summary,) = cli.sessions()
    return summary.id


# -- tether run -----------------------------------------------------------------------------------


async def test_run_prints_the_final_answer_and_exits_0(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(
        tool_calls_reply(("r1", "read", '{"file_path": "notes.txt"}')),
        text_reply("The notes say hello."),
    )

    done = await cli.run("run", "what do the notes say?")

    assert (done.code, done.stdout) == (0, "The notes say hello.\n")
    tool_result = server.requests[1].body["messages"][-1]
    assert tool_result["role"] == "tool"
    assert "hello from the workspace" in tool_result["content"]


async def test_run_exits_1_with_the_code_and_message_on_a_model_error(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(http_error(401, "bad key"))

    done = await cli.run("run", "say hi")

    url = server.base_url
    assert done.code == 1
    assert done.stdout == ""
    assert done.stderr.splitlines()[-1] == (
        f"tether: AUTH: OpenAI-compatible API at {url} error (HTTP 401): bad key; the API key"
        f" comes from OPENAI_API_KEY: set it to a valid key for {url}"
    )


async def test_run_without_a_task_exits_2_and_says_what_to_type(cli: Cli) -> None:
    done = await cli.run("run", "  ")

    assert (done.code, done.stdout, done.stderr) == (
        2,
        "",
        'tether: a task is required, for example: tether run "run the tests" '
        "(or pipe it: echo task | tether run)\n",
    )
    assert cli.sessions() == []


# -- tether tools ---------------------------------------------------------------------------------


async def test_tools_list_shows_the_built_in_tools(cli: Cli) -> None:
    done = await cli.run("tools", "list")

    assert done.code == 0
    names = [line.split()[0] for line in done.stdout.splitlines()]
    assert {"bash", "read", "write", "edit", "grep", "glob", "todo_write", "job_output"} <= set(
        names
    )
    assert len(names) == len(set(names))


async def test_tools_call_runs_bash_and_prints_its_output(cli: Cli) -> None:
    done = await cli.run("tools", "call", "bash", '{"command": "echo hi", "description": "x"}')

    assert (done.code, done.stdout) == (0, "hi\n")


async def test_tools_call_prints_the_code_of_a_failed_call_and_exits_1(cli: Cli) -> None:
    done = await cli.run("tools", "call", "read", '{"file_path": "missing.txt"}')

    assert done.code == 1
    assert done.stderr.splitlines()[-1].startswith("tether: ")
    assert done.stdout.startswith("Error: ")


# -- tether sessions ------------------------------------------------------------------------------


async def test_sessions_list_shows_a_finished_session_with_its_title(
    cli: Cli, server: ScriptedModelServer
) -> None:
    session_id = await finished_session(cli, server)

    done = await cli.run("sessions", "list")

    assert done.code == 0
    (line,) = done.stdout.splitlines()
    assert line.startswith(f"{session_id}  ")
    assert line.endswith("  say hi")


async def test_sessions_show_prints_the_turns_messages_and_outcome(
    cli: Cli, server: ScriptedModelServer
) -> None:
    session_id = await finished_session(cli, server)

    done = await cli.run("sessions", "show", session_id)

    assert done.code == 0
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"session {session_id}  created ")
    assert lines[0].endswith(f"  cwd {cli.work}")
    assert lines[1:] == [
        "turn 1",
        "  user: say hi",
        "  assistant: hello there",
        'turn 1 ended: {"kind": "completed"}',
    ]


async def test_sessions_check_passes_a_finished_session(
    cli: Cli, server: ScriptedModelServer
) -> None:
    session_id = await finished_session(cli, server)

    done = await cli.run("sessions", "check", session_id)

    assert (done.code, done.stdout) == (0, f"{session_id}: ok\n")


async def test_a_torn_last_line_fails_check_and_is_cut_on_load(
    cli: Cli, server: ScriptedModelServer
) -> None:
    session_id = await finished_session(cli, server)
    path = cli.store.path(session_id)
    intact = path.read_bytes()
    with path.open("ab") as file:
        file.write(b'{"type":"turn/start","seq":')

    done = await cli.run("sessions", "check", session_id)

    assert done.code == 1
    assert done.stdout.splitlines()[0].startswith(f"{session_id}: TORN_TAIL: line ")
    log = cli.store.open(session_id)
    try:
        assert log.repair.torn_tail is not None
        assert log.repair.synthesized == ()
    finally:
        log.close()
    assert path.read_bytes() == intact
    assert cli.store.check(session_id) == []


# -- a crash mid-tool -----------------------------------------------------------------------------


async def test_kill_9_mid_tool_leaves_an_open_turn_that_load_repairs_as_outcome_unknown(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(SLEEP_30))
    process = await cli.spawn("run", "--allow", "Bash(sleep 30)", "wait for it", new_session=True)
    sleeper = None
    try:
        await eventually(cli.sessions, what="the session file")
        (summary,) = cli.sessions()
        await eventually(
            lambda: b'"tool/call"' in summary.path.read_bytes(), what="the tool/call line"
        )
        await eventually(
            lambda: process_running(process.pid, ["sleep", "30"]), what="the sleep command"
        )
        sleeper = process_running(process.pid, ["sleep", "30"])
        os.killpg(process.pid, signal.SIGKILL)
        assert await process.wait() == -signal.SIGKILL
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert sleeper is not None
    await eventually(lambda: gone(sleeper), what="the command ending with its killed tether")
    session_id = summary.id

    check = await cli.run("sessions", "check", session_id)

    assert check.code == 1
    assert check.stdout.splitlines() == [
        f"{session_id}: OPEN_TURN: turn 1 (seq 0) has no turn/end: the writer stopped mid-turn;"
        " loading the session closes it",
        f'{session_id}: MISSING_RESULT: tool/call "b1" (bash, seq 12) has no tool/result',
        f"run `tether sessions resume {session_id}` to repair an interrupted turn",
    ]

    log = cli.store.open(session_id)
    try:
        closers = log.repair.synthesized
        assert [e.type for e in closers] == ["tool/result", "step/end", "turn/end"]
        result: Any = closers[0].data
        assert result["error"] == {
            "name": "ToolOutcomeUnknownError",
            "code": "TOOL_OUTCOME_UNKNOWN",
        }
        assert result["message"]["content"][0]["content"] == [
            {"type": "text", "text": OUTCOME_UNKNOWN_TEXT}
        ]
        assert closers[2].data["reason"] == {"kind": "interrupted"}
    finally:
        log.close()
    assert cli.store.check(session_id) == []


async def test_sessions_resume_repairs_a_crashed_session_and_says_so(
    cli: Cli, server: ScriptedModelServer
) -> None:
    session_id = await finished_session(cli, server)
    path = cli.store.path(session_id)
    last = json.loads(path.read_bytes().splitlines()[-1])
    assert last["type"] == "turn/end"
    _truncate_last_line(path)  # a crash just before turn/end was written

    done = await cli.run("sessions", "resume", session_id, input=b"/exit\n")

    assert done.code == 0
    assert "tether: repaired the session log: closed interrupted turn 1" in done.stderr
    assert cli.store.check(session_id) == []


def _truncate_last_line(path: Path) -> None:
    data = path.read_bytes()
    cut = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[:cut])


# -- Ctrl-C in chat -------------------------------------------------------------------------------


async def test_ctrl_c_in_chat_aborts_the_running_bash_and_returns_to_the_prompt(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(SLEEP_30))
    terminal = await Terminal.open([str(TETHER), "chat"], cwd=cli.work, env=cli.env)
    try:
        await terminal.expect("›")
        terminal.send(b"wait for it\r")
        await _approve_if_asked(terminal)
        await eventually(
            lambda: process_running(terminal.process.pid, ["sleep", "30"]), what="the sleep"
        )
        sleeper = process_running(terminal.process.pid, ["sleep", "30"])
        assert sleeper is not None

        terminal.send(b"\x03")
        await terminal.expect("tether: aborting the turn (Ctrl-C again to quit)")
        await terminal.expect("✗ bash sleep 30 ABORTED")
        await terminal.expect("tether: turn aborted; tool outcomes are recorded")
        await terminal.expect("›")
        await eventually(lambda: gone(sleeper), what="the sleep to be killed")

        terminal.send(b"/exit\r")
        assert await terminal.wait() == 0
    finally:
        await terminal.aclose()

    (summary,) = cli.sessions()
    check = await cli.run("sessions", "check", summary.id)
    assert (check.code, check.stdout) == (0, f"{summary.id}: ok\n")
    loaded = cli.store.load(summary.id)
    assert results(loaded.events) == [("b1", {"name": "AbortError", "code": "ABORTED"})]
    turn_end: Any = [e for e in loaded.events if e.type == "turn/end"][-1].data
    assert turn_end["reason"] == {"kind": "aborted", "reason": {"kind": "user"}}
    assert len(server.requests) == 1


async def _approve_if_asked(terminal: Terminal) -> None:
    """Answer `y` if the chat's permission rules ask before running the command."""

    def asked_or_running() -> bool:
        return "approve?" in terminal.output or bool(
            process_running(terminal.process.pid, ["sleep", "30"])
        )

    await eventually(asked_or_running, what="the approval prompt or the command")
    if "approve?" in terminal.output:
        terminal.send(b"y\r")


def uncontained(cli: Cli) -> tuple[str, ...]:
    """Run `cli` as on a machine without namespaces (the orphan ledger's case); the flags a
    command then needs to run commands at all."""
    cli.env["TETHER_BWRAP"] = ""
    return ("--sandbox", "danger-full-access")


async def test_the_next_tether_stops_the_process_group_a_killed_tether_left_behind(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(SLEEP_30))
    flags = uncontained(cli)
    process = await cli.spawn(
        "run", *flags, "--allow", "Bash(sleep 30)", "wait for it", new_session=True
    )
    sleeper = None
    try:
        await eventually(
            lambda: process_running(process.pid, ["sleep", "30"]), what="the sleep command"
        )
        sleeper = process_running(process.pid, ["sleep", "30"])
        assert sleeper is not None
        group = os.getpgid(sleeper.pid)

        def ledgered() -> bool:  # the ledger line lands just after the spawn: wait for it
            return any(
                line.split()[:1] == [str(group)]
                for ledger in (cli.home / "run").glob("*.groups")
                for line in ledger.read_text().splitlines()
            )

        await eventually(ledgered, what="the sleep's group in the orphan ledger")
        os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        assert not gone(sleeper)  # SIGKILL gave tether no chance to stop its own group

        done = await cli.run("tools", "list")

        assert done.code == 0
        await eventually(lambda: gone(sleeper), what="the orphaned sleep to be stopped")
        assert list((cli.home / "run").glob("*.groups")) == []
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        if sleeper is not None and not gone(sleeper):
            os.killpg(sleeper.pid, signal.SIGKILL)


async def test_the_next_tether_stops_a_process_that_escaped_the_group_of_a_killed_tether(
    cli: Cli, server: ScriptedModelServer
) -> None:
    duration = f"61.{secrets.randbelow(10**9):09d}"  # this test's escaped sleep, by its argv
    command = f"setsid -f sleep {duration}; sleep 30"
    server.push(
        tool_calls_reply(("b1", "bash", json.dumps({"command": command, "description": "escape"})))
    )
    process = await cli.spawn("run", *uncontained(cli), "--yolo", "wait for it", new_session=True)
    escaped = None
    try:
        await eventually(
            lambda: process_running(process.pid, ["sleep", duration]),
            what="the escaped sleep",
        )
        escaped = process_running(process.pid, ["sleep", duration])
        assert escaped is not None
        assert os.getsid(escaped.pid) == escaped.pid  # it left the command's session

        def recorded() -> bool:
            ledgers = (cli.home / "run").glob("*.groups")
            return any(f"\n{escaped.pid} " in f"\n{p.read_text()}" for p in ledgers)

        await eventually(recorded, what="the escaped sleep in the orphan ledger")
        os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        assert not gone(escaped)  # SIGKILL gave tether no chance to stop it

        done = await cli.run("tools", "list")

        assert done.code == 0
        await eventually(lambda: gone(escaped), what="the escaped sleep to stop")
        assert list((cli.home / "run").glob("*.groups")) == []
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        if escaped is not None and not gone(escaped):
            escaped.kill()


async def test_the_next_tether_stops_a_daemon_a_hook_of_a_killed_tether_started(
    cli: Cli, server: ScriptedModelServer, tmp_path: Path
) -> None:
    duration = f"62.{secrets.randbelow(10**9):09d}"  # this test's daemon, by its argv
    hooks = cli.work / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "pre.sh").write_text(f"#!/bin/bash\nsetsid -f sleep {duration}\nsleep 30\n")
    (hooks / "pre.sh").chmod(0o755)
    command = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/pre.sh'
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
    (cli.work / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [entry]}})
    )
    cli.env["HOME"] = str(tmp_path / "user")
    server.push(tool_calls_reply(SLEEP_30))
    process = await cli.spawn("run", *uncontained(cli), "--yolo", "wait for it", new_session=True)
    daemon = hook = None
    try:

        def both_running() -> bool:  # the hook starts its daemon first, then its own sleep
            nonlocal daemon, hook
            daemon = daemon or process_running(process.pid, ["sleep", duration])
            hook = hook or process_running(process.pid, ["sleep", "30"])
            return daemon is not None and hook is not None

        await eventually(both_running, what="the hook's daemon and the hook's own sleep")
        assert daemon is not None
        assert hook is not None
        assert os.getsid(daemon.pid) == daemon.pid  # it left the hook's session
        os.killpg(process.pid, signal.SIGKILL)  # at once: tether may not have looked for it yet
        await process.wait()
        assert not gone(daemon)  # SIGKILL gave tether no chance to stop it
        assert not gone(hook)

        done = await cli.run("tools", "list")

        assert done.code == 0
        await eventually(lambda: gone(daemon) and gone(hook), what="both stopped")
        assert list((cli.home / "run").glob("*.groups")) == []
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        for left in (daemon, hook):
            if left is not None and not gone(left):
                left.kill()
