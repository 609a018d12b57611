"""`tether run` output and headless ergonomics (issue 12 §4, §5).

Contract: retries show one `retrying (n/5) in x.y s: <why>` line on stderr and the failed
attempt's text is not printed again; a refused connection fails at once, without retries, with one
line naming the base URL; the answer is printed once — streamed on a terminal, and when stdout is
piped only the answer goes to stdout. The task can come from stdin (`-` or no argument);
`--continue` adds a turn to this directory's latest session, `--resume ID` to a named one
(`--output-format json|stream-json`: tests/cli/test_output_format.py); `AGENTS.md` /
`CLAUDE.md` of the project and `$TETHER_HOME/AGENTS.md` are in the system prompt.

`tether` runs as a real subprocess against a `ScriptedModelServer`; the terminal tests give it a
real pseudo-terminal.
"""

from __future__ import annotations

import json
import re
import socket

import pytest

from tether.testing.scripted_model import (
    ScriptedModelServer,
    drop,
    http_error,
    reply,
    text,
    text_reply,
    tool_calls_reply,
)

from ._support import TETHER, Cli, Terminal

pytestmark = pytest.mark.slow


def bash(command: str, call_id: str = "t1") -> tuple[str, str, str]:
    return (call_id, "bash", json.dumps({"command": command, "description": "a test command"}))


def user_texts(server: ScriptedModelServer, request: int) -> list[object]:
    return [m["content"] for m in server.requests[request].messages if m["role"] == "user"]


def system_prompt(server: ScriptedModelServer) -> str:
    (system,) = [m["content"] for m in server.requests[0].messages if m["role"] == "system"]
    assert isinstance(system, str)
    return system


# -- §4 model errors ------------------------------------------------------------------------------


async def test_a_retry_is_one_visible_line_on_stderr(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(http_error(500, "upstream exploded"), text_reply("recovered"))

    done = await cli.run("run", "say hi")

    assert (done.code, done.stdout) == (0, "recovered\n")
    retries = [line for line in done.stderr.splitlines() if "retrying" in line]
    assert len(retries) == 1
    assert re.fullmatch(
        r"retrying \(1/5\) in 0\.[4-6] s: .*\(HTTP 500\): upstream exploded", retries[0]
    ), retries


async def test_a_refused_connection_fails_at_once_with_one_line_naming_the_base_url(
    cli: Cli,
) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    cli.env["OPENAI_BASE_URL"] = url

    done = await cli.run("run", "say hi")

    assert (done.code, done.stdout) == (1, "")
    lines = done.stderr.splitlines()
    assert len(lines) == 2, done.stderr
    assert lines[1].startswith(f"tether: CONNECT: cannot connect to {url} (")
    assert lines[1].endswith("); is the server running, and is OPENAI_BASE_URL right?")


async def test_piped_stdout_gets_only_the_answer_and_stderr_the_progress(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(
        tool_calls_reply(bash("echo hi"), content="Let me look first."),
        text_reply("the answer"),
    )

    done = await cli.run("run", "--yolo", "look")

    assert (done.code, done.stdout) == (0, "the answer\n")
    assert "Let me look first.\n" in done.stderr
    assert "the answer" not in done.stderr


async def test_progress_lines_on_stderr_are_never_wrapped_or_cut(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash("rm notes.txt")), text_reply("could not"))

    done = await cli.run("run", "remove notes.txt", timeout_s=30)

    assert done.code == 0
    failed = [line for line in done.stderr.splitlines() if line.startswith("✗ bash")]
    assert len(failed) == 1, done.stderr
    assert failed[0].endswith(
        ' ms · tool "bash" requires approval, but no approval channel is available (tether run '
        "is non-interactive; allow it with --allow 'Bash(rm notes.txt)' or --yolo)"
    )


async def test_on_a_terminal_the_answer_streams_once(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(text_reply("the one answer", pieces=3))
    terminal = await Terminal.open([str(TETHER), "run", "say it"], cwd=cli.work, env=cli.env)
    try:
        assert await terminal.wait() == 0
    finally:
        await terminal.aclose()

    assert terminal.output.count("the one answer") == 1


async def test_a_retried_stream_does_not_print_its_partial_text_again(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(
        reply(text("partial "), drop()),
        reply(text("partial "), drop()),
        text_reply("partial answer"),
    )
    terminal = await Terminal.open([str(TETHER), "run", "say it"], cwd=cli.work, env=cli.env)
    try:
        assert await terminal.wait() == 0
    finally:
        await terminal.aclose()

    assert terminal.output.count("partial") == 1
    assert terminal.output.count("retrying (") == 2
    assert terminal.output.endswith("\nanswer\n")  # only what the failed attempts had not shown


# -- §5 headless ergonomics -----------------------------------------------------------------------


async def test_the_task_is_read_from_stdin(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(text_reply("ok"))

    done = await cli.run("run", input=b"the task from a pipe\n")

    assert (done.code, done.stdout) == (0, "ok\n")
    assert user_texts(server, 0) == ["the task from a pipe\n"]


async def test_a_dash_reads_the_task_from_stdin(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(text_reply("ok"))

    done = await cli.run("run", "-", input=b"dash task")

    assert done.code == 0
    assert user_texts(server, 0) == ["dash task"]


async def test_continue_adds_a_turn_to_the_latest_session_of_this_directory(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("first answer"), text_reply("second answer"))
    await cli.run("run", "first task")

    done = await cli.run("run", "--continue", "second task")

    assert (done.code, done.stdout) == (0, "second answer\n")
    assert len(cli.sessions()) == 1
    assert user_texts(server, 1) == ["first task", "second task"]


async def test_continue_without_a_session_here_exits_2(
    cli: Cli, server: ScriptedModelServer
) -> None:
    done = await cli.run("run", "--continue", "task")

    assert (done.code, done.stdout) == (2, "")
    assert done.stderr == (
        f"tether: --continue: no session to continue in {cli.work.resolve()}; start one with "
        "tether run\n"
    )
    assert server.requests == []


async def test_resume_adds_a_turn_to_the_named_session(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("a"), text_reply("b"), text_reply("c"))
    await cli.run("run", "one")
    (first,) = cli.sessions()
    await cli.run("run", "two")

    done = await cli.run("run", "--resume", first.id, "three")

    assert done.code == 0
    assert user_texts(server, 2) == ["one", "three"]


async def test_agents_md_claude_md_and_the_users_agents_md_are_in_the_system_prompt(
    cli: Cli, server: ScriptedModelServer
) -> None:
    (cli.work / "AGENTS.md").write_text("Run make check before answering.\n")
    (cli.work / "CLAUDE.md").write_text("Use tabs in Go files.\n")
    cli.home.mkdir(parents=True, exist_ok=True)
    (cli.home / "AGENTS.md").write_text("Answer in English.\n")
    server.push(text_reply("ok"))

    done = await cli.run("run", "hi")

    assert done.code == 0
    prompt = system_prompt(server)
    assert prompt.endswith(
        f"## {cli.home / 'AGENTS.md'}\n\nAnswer in English.\n\n"
        f"## {cli.work / 'AGENTS.md'}\n\nRun make check before answering.\n\n"
        f"## {cli.work / 'CLAUDE.md'}\n\nUse tabs in Go files."
    )
