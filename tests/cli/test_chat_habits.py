"""The habits a Claude Code user brings to `tether chat` (issue 26 §3, §8), on a real
pseudo-terminal rendered with pyte, against the scripted model server.

Contract: Esc aborts the running turn (the model's stream is closed, the turn ends `aborted`, the
chat goes on); `--continue` opens the workspace's latest session and `--resume ID` the named one,
each showing the earlier conversation; `--resume` alone lists the sessions to pick from;
`.claude/commands/review.md` is `/review`, its `$ARGUMENTS` replaced and its ``!`cmd` `` lines
run and inlined; `!ls` runs in the shell without the model, and the model sees its output with
the next message; `@missing.txt` is reported and the message is not sent but kept in the input;
without a terminal, stdin is read one message per line and an empty stdin is refused (exit 2).
Waiting is always for screen text (generous timeouts), never fixed sleeps.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from tether.agent.session.events import TURN_END
from tether.testing.scripted_model import (
    ScriptedModelServer,
    finish,
    reply,
    text,
    text_reply,
    tool_calls_reply,
    until,
)

from ._chat import WAIT, last_line, leave, open_chat, open_resumed, say, screen, user_texts
from ._support import TETHER, Cli, Terminal, eventually

pytestmark = pytest.mark.slow


def turn_ends(cli: Cli, session_id: str) -> list[object]:
    events = cli.store.load(session_id).events
    return [e.data["reason"] for e in events if e.type == TURN_END]


# -- Esc -----------------------------------------------------------------------------------------


async def test_esc_aborts_the_running_turn_and_the_chat_goes_on(
    cli: Cli, server: ScriptedModelServer
) -> None:
    never = asyncio.Event()
    server.push(
        reply(text("Starting a long answer"), until(never), text("never shown"), finish("stop")),
        text_reply("the next answer"),
    )
    terminal = await open_chat(cli)
    try:
        terminal.send(b"write a lot\r")
        await eventually(
            lambda: "Starting a long answer" in screen(terminal),
            timeout_s=WAIT,
            what="the answer streaming",
        )
        terminal.send(b"\x1b")
        await terminal.expect("interrupted (Esc)", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        request = await server.request(0)
        await asyncio.wait_for(request.ended(), timeout=WAIT)
        assert request.client_disconnected
        await say(terminal, "and now?", "the next answer")
        await leave(terminal)
    finally:
        never.set()
        await terminal.aclose()
    (summary,) = cli.sessions()
    assert turn_ends(cli, summary.id) == [
        {"kind": "aborted", "reason": {"kind": "user"}},
        {"kind": "completed"},
    ]
    assert "never shown" not in terminal.output


async def test_keys_typed_during_a_turn_wait_in_the_next_prompt(
    cli: Cli, server: ScriptedModelServer
) -> None:
    go_on = asyncio.Event()
    server.push(
        reply(text("Working on it"), until(go_on), text(", done."), finish("stop")),
        text_reply("second answer"),
    )
    terminal = await open_chat(cli)
    try:
        terminal.send(b"first\r")
        await eventually(
            lambda: "Working on it" in screen(terminal), timeout_s=WAIT, what="the answer"
        )
        terminal.send(b"typed ahead")
        go_on.set()
        await eventually(
            lambda: last_line(terminal) == "› typed ahead",
            timeout_s=WAIT,
            what="the typed keys in the next prompt",
        )
        terminal.send(b"\r")
        await terminal.expect("second answer", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        go_on.set()
        await terminal.aclose()
    assert user_texts(server.requests[1].messages)[-1] == "typed ahead"


async def test_esc_at_an_approval_prompt_cancels_the_call_and_aborts_the_turn(
    cli: Cli, server: ScriptedModelServer
) -> None:
    touch = json.dumps({"command": "touch never.txt", "description": "make a file"})
    server.push(tool_calls_reply(("t1", "bash", touch)), text_reply("after"))
    terminal = await open_chat(cli)
    try:
        terminal.send(b"make the file\r")
        await terminal.expect("approve?", timeout_s=WAIT)
        terminal.send(b"\x1b")
        await terminal.expect("interrupted (Esc)", timeout_s=WAIT)
        await terminal.expect("ABORTED_BEFORE_DISPATCH", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await say(terminal, "fine", "after")
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert not (cli.work / "never.txt").exists()
    (summary,) = cli.sessions()
    assert turn_ends(cli, summary.id)[0] == {"kind": "aborted", "reason": {"kind": "user"}}


# -- --continue, --resume ------------------------------------------------------------------------


async def test_continue_opens_the_latest_session_and_shows_its_conversation(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("Kiwi is noted."), text_reply("You said kiwi."))
    first = await open_chat(cli)
    try:
        await say(first, "remember the word kiwi", "Kiwi is noted.")
        await leave(first)
    finally:
        await first.aclose()
    (summary,) = cli.sessions()

    again = await open_resumed(cli, "--continue")
    try:
        shown = screen(again)
        assert f"session {summary.id}" in shown
        assert "› remember the word kiwi" in shown
        assert "Kiwi is noted." in shown
        await say(again, "which word?", "You said kiwi.")
        await leave(again)
    finally:
        await again.aclose()
    assert len(cli.sessions()) == 1
    assert user_texts(server.requests[1].messages) == ["remember the word kiwi", "which word?"]


async def test_resume_with_an_id_shows_the_earlier_conversation(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("**Bold** first answer."))
    first = await open_chat(cli)
    try:
        await say(first, "first question", "first answer.")
        await leave(first)
    finally:
        await first.aclose()
    (summary,) = cli.sessions()

    resumed = await open_resumed(cli, "--resume", summary.id)
    try:
        await leave(resumed)
    finally:
        await resumed.aclose()
    shown = screen(resumed)
    assert f"── earlier in session {summary.id} ──" in shown
    assert "› first question" in shown
    assert "Bold first answer." in shown  # rendered as Markdown again
    assert "── resumed ──" in shown


async def test_resume_without_an_id_opens_a_picker_of_this_workspaces_sessions(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("answer one"), text_reply("answer two"))
    for question in ("the older question", "the newer question"):
        chat = await open_chat(cli)
        try:
            await say(chat, question, "answer")
            await leave(chat)
        finally:
            await chat.aclose()
    newer, older = sorted(cli.sessions(), key=lambda s: s.modified_at, reverse=True)

    picker = await Terminal.open([str(TETHER), "chat", "--resume"], cwd=cli.work, env=cli.env)
    try:
        await picker.expect("Resume which session?", timeout_s=WAIT)
        await picker.expect("the older question", timeout_s=WAIT)
        shown = screen(picker)
        assert shown.index("the newer question") < shown.index("the older question")
        picker.send(b"\x1b[B")  # ↓ to the older one
        picker.send(b"\r")
        await picker.expect(f"session {older.id}", timeout_s=WAIT)
        await picker.expect("› the older question", timeout_s=WAIT)
        await picker.expect("── resumed ──", timeout_s=WAIT)
        await picker.expect("›", timeout_s=WAIT)
        await leave(picker)
    finally:
        await picker.aclose()
    assert newer.id != older.id


async def test_resume_without_an_id_and_without_a_terminal_says_to_pass_one(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("hi"))
    await cli.run("run", "hello")
    finished = await cli.run("chat", "--resume", input=b"")
    assert finished.code == 2
    assert "--resume without an id needs a terminal" in finished.stderr


# -- custom slash commands, bash mode, @ mentions ------------------------------------------------


async def test_a_custom_command_expands_its_arguments_and_bash_lines(
    cli: Cli, server: ScriptedModelServer
) -> None:
    commands = cli.work / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\n"
        "description: Review a part of the code\n"
        "argument-hint: [part]\n"
        "allowed-tools: Bash(wc:*)\n"
        "---\n"
        "Review $ARGUMENTS carefully (first word: $1).\n\n"
        "Size of the notes: !`wc -c notes.txt`\n"
    )
    server.push(text_reply("Reviewed the parser."))
    terminal = await open_chat(cli)
    try:
        terminal.send(b"/help\r")
        await terminal.expect("/review", timeout_s=WAIT)
        await terminal.expect("Review a part of the code [part] (project)", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        terminal.send(b"/review the parser module\r")
        await terminal.expect("✓ ! wc -c notes.txt", timeout_s=WAIT)
        await terminal.expect("Reviewed the parser.", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert "needs approval" not in terminal.output  # allowed-tools allowed the bash line
    (prompt,) = user_texts(server.requests[0].messages)
    assert prompt == (
        "Review the parser module carefully (first word: the).\n\nSize of the notes: 25 notes.txt"
    )


async def test_bang_runs_a_shell_command_without_the_model_and_the_model_sees_it_next(
    cli: Cli, server: ScriptedModelServer
) -> None:
    (cli.work / "listed-file.txt").write_text("x")
    server.push(text_reply("I see the listing."))
    terminal = await open_chat(cli)
    try:
        terminal.send(b"!ls\r")
        await terminal.expect("listed-file.txt", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        assert server.requests == []  # the model was not asked
        await say(terminal, "what did I list?", "I see the listing.")
        await leave(terminal)
    finally:
        await terminal.aclose()
    prompt, listing = user_texts(server.requests[0].messages)
    assert prompt == "what did I list?"
    assert listing.startswith("<bash-input>ls</bash-input>\n<bash-stdout>")
    assert "listed-file.txt" in listing


async def test_a_mention_of_a_missing_file_is_reported_and_the_message_kept(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("read it"))
    terminal = await open_chat(cli)
    try:
        terminal.send(b"summarise @notse.txt please\r")
        await terminal.expect("✗ @notse.txt", timeout_s=WAIT)
        await terminal.expect("no such file", timeout_s=WAIT)
        await terminal.expect("not sent", timeout_s=WAIT)
        await eventually(
            lambda: last_line(terminal) == "› summarise @notse.txt please",
            timeout_s=WAIT,
            what="the message back in the input",
        )
        terminal.send(b"\x15")  # Ctrl-U: clear the line
        await say(terminal, "summarise @notes.txt please", "read it")
        await leave(terminal)
    finally:
        await terminal.aclose()
    (prompt,) = user_texts(server.requests[0].messages)
    assert prompt.startswith('summarise @notes.txt please\n\n<attached path="notes.txt">')


# -- without a terminal --------------------------------------------------------------------------


async def test_an_empty_stdin_is_refused_with_one_line_and_exit_code_2(cli: Cli) -> None:
    finished = await cli.run("chat", input=b"", timeout_s=WAIT)
    assert finished.code == 2
    assert "Traceback" not in finished.stderr
    assert finished.stderr.strip().splitlines()[-1] == (
        "tether: stdin ended before any message: without a terminal, tether chat reads one "
        'message per line (for one task, use tether run "...")'
    )


async def test_stdin_from_dev_null_is_refused_without_a_traceback(cli: Cli) -> None:
    process = await asyncio.create_subprocess_exec(
        str(TETHER),
        "chat",
        cwd=cli.work,
        env=cli.env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), timeout=WAIT)
    assert process.returncode == 2
    assert b"Traceback" not in err
    assert b"PermissionError" not in err
    assert b"stdin ended before any message" in err


async def test_piped_lines_are_messages_one_per_line(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(text_reply("one"), text_reply("two"))
    finished = await cli.run("chat", input=b"first\nsecond\n", timeout_s=WAIT)
    assert finished.code == 0
    assert [user_texts(r.messages)[-1] for r in server.requests] == ["first", "second"]
    assert json.dumps(finished.stdout).count("\\u203a") >= 2  # a prompt per line
