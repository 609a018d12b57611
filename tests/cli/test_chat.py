"""`tether chat` on a real pseudo-terminal against the scripted model server.

Contract (issue 13): the input is a line editor with per-project history (↑ recalls), a
bracketed paste is one message, slash commands act locally (`/clear` starts a new session,
`/compact` replaces the history with the model's summary in a new, linked session), a request
that would not fit the context window is compacted first, `@path` attaches a file (and counts as
a read for a later edit), edit approvals show a diff, a denial's reason reaches the model, an
edit that would fail anyway is not asked about, and without a terminal nothing is decorated.
Waiting is always for screen text (generous timeouts), never fixed sleeps.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.agent.session.events import SESSION_COMPACTION
from tether.testing.scripted_model import (
    ScriptedModelServer,
    finish,
    http_error,
    reasoning,
    reply,
    text,
    text_reply,
    tool_calls_reply,
)

from ._chat import WAIT, leave, open_chat, say, tool_texts, user_texts
from ._support import Cli, eventually

pytestmark = pytest.mark.slow


@pytest.fixture
def cli(tmp_path: Path, server: ScriptedModelServer) -> Cli:
    cli = Cli(tmp_path, server.base_url)
    cli.env["HOME"] = str(tmp_path)
    return cli


async def test_up_arrow_recalls_the_previous_message(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(text_reply("first answer"), text_reply("second answer"))
    terminal = await open_chat(cli)
    try:
        await say(terminal, "what is in notes", "first answer")
        terminal.send(b"\x1b[A\r")
        await terminal.expect("second answer", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert user_texts(server.requests[1].messages) == ["what is in notes", "what is in notes"]
    (history,) = (cli.home / "history").iterdir()
    assert "+what is in notes" in history.read_text()


async def test_ctrl_r_finds_an_earlier_message(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(text_reply("a"), text_reply("b"), text_reply("c"))
    terminal = await open_chat(cli)
    try:
        await say(terminal, "remember kiwi", "a")
        await say(terminal, "something else", "b")
        terminal.send(b"\x12kiw")
        await terminal.expect("kiw", timeout_s=WAIT)
        terminal.send(b"\r\r")
        await terminal.expect("c", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert user_texts(server.requests[2].messages)[-1] == "remember kiwi"


async def test_ctrl_c_while_typing_clears_the_line(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(text_reply("only the second"))
    terminal = await open_chat(cli)
    try:
        terminal.send(b"first draft")
        await terminal.expect("first draft", timeout_s=WAIT)
        terminal.send(b"\x03")
        await eventually(
            lambda: "first draft" not in "\n".join(terminal.screen()),
            timeout_s=WAIT,
            what="the line to be cleared",
        )
        await say(terminal, "second", "only the second")
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert user_texts(server.requests[0].messages) == ["second"]


async def test_ctrl_c_twice_on_an_empty_line_quits(cli: Cli, server: ScriptedModelServer) -> None:
    terminal = await open_chat(cli)
    try:
        # Both presses at once: "again" means within 2 s of the first as tether sees them, which
        # a loaded machine can stretch between a press, its notice and the next press.
        terminal.send(b"\x03\x03")
        await terminal.expect("press Ctrl-C again to quit", timeout_s=WAIT)
        assert await terminal.wait(timeout_s=WAIT) == 130
    finally:
        await terminal.aclose()


@pytest.mark.parametrize("flag", [True, False])
async def test_reasoning_is_dimmed_with_the_flag_and_folded_without(
    cli: Cli, server: ScriptedModelServer, flag: bool
) -> None:
    server.push(reply(reasoning("pondering the question"), text("the answer"), finish("stop")))
    terminal = await open_chat(cli, *(["--show-reasoning"] if flag else []))
    try:
        await say(terminal, "think", "the answer")
        if not flag:
            terminal.send(b"/show 1\r")
            await terminal.expect("pondering the question", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    screen = "\n".join(terminal.screen())
    folded = "✻ reasoning, 3 words (/show 1)"
    assert (folded in screen) is not flag
    assert "pondering the question" in screen


async def test_tab_completes_a_slash_command(cli: Cli, server: ScriptedModelServer) -> None:
    terminal = await open_chat(cli)
    try:
        terminal.send(b"/cle\t")
        await eventually(
            lambda: "› /clear" in terminal.screen(), timeout_s=WAIT, what="/clear completed"
        )
        terminal.send(b"\r")
        await terminal.expect("new session", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert server.requests == []


async def test_model_sessions_cost_and_permissions_answer_locally(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("first"), text_reply("second"))
    terminal = await open_chat(cli)
    try:
        await say(terminal, "hello", "first")
        (summary,) = cli.sessions()
        terminal.send(b"/sessions\r")
        await terminal.expect(f"* {summary.id}", timeout_s=WAIT)
        terminal.send(b"/permissions\r")
        await terminal.expect("mode: default", timeout_s=WAIT)
        await terminal.expect("session grants: none", timeout_s=WAIT)
        terminal.send(b"/cost\r")
        await terminal.expect("total", timeout_s=WAIT)
        terminal.send(b"/model other-model\r")
        await terminal.expect("model: other-model", timeout_s=WAIT)
        await say(terminal, "again", "second")
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert [r.body["model"] for r in server.requests] == ["scripted", "other-model"]


async def test_a_multi_line_paste_is_one_message(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(text_reply("got the traceback"))
    terminal = await open_chat(cli)
    try:
        terminal.send(b"\x1b[200~Traceback:\r\n  File x\r\nValueError: bad\x1b[201~")
        await say(terminal, "", "got the traceback")
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert len(server.requests) == 1
    assert user_texts(server.requests[0].messages) == ["Traceback:\n  File x\nValueError: bad"]


async def test_alt_enter_adds_a_line_to_the_message(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(text_reply("two lines"))
    terminal = await open_chat(cli)
    try:
        terminal.send(b"one\x1b\rtwo\n three")
        await say(terminal, "", "two lines")
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert user_texts(server.requests[0].messages) == ["one\ntwo\n three"]


async def test_clear_starts_a_new_session_without_the_old_messages(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("first answer"), text_reply("fresh answer"))
    terminal = await open_chat(cli)
    try:
        await say(terminal, "remember the word kiwi", "first answer")
        terminal.send(b"/clear\r")
        await terminal.expect("new session", timeout_s=WAIT)
        await say(terminal, "what word", "fresh answer")
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert user_texts(server.requests[1].messages) == ["what word"]
    assert len(cli.sessions()) == 2


async def test_compact_replaces_the_history_with_the_summary_in_a_linked_session(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(
        text_reply("kiwi noted"),
        text_reply("SUMMARY: the user likes kiwi"),
        text_reply("you like kiwi"),
    )
    terminal = await open_chat(cli)
    try:
        await say(terminal, "remember the word kiwi", "kiwi noted")
        terminal.send(b"/compact the fruit\r")
        await terminal.expect("compacted session", timeout_s=WAIT)
        await say(terminal, "what do I like", "you like kiwi")
        await leave(terminal)
    finally:
        await terminal.aclose()
    summary_request = user_texts(server.requests[1].messages)
    assert summary_request[0] == "remember the word kiwi"
    assert "Focus the summary on: the fruit" in summary_request[-1]
    after = user_texts(server.requests[2].messages)
    assert len(after) == 2
    assert "SUMMARY: the user likes kiwi" in after[0]
    assert after[1] == "what do I like"
    new, old = sorted(cli.sessions(), key=lambda s: s.created_at, reverse=True)
    old_links = [e.data for e in cli.store.load(old.id).events if e.type == SESSION_COMPACTION]
    assert [(d["into_session"], d["trigger"]) for d in old_links] == [(new.id, "manual")]
    loaded = cli.store.load(new.id)
    assert loaded.header.parent_session == old.id
    links = [e.data for e in loaded.events if e.type == SESSION_COMPACTION]
    assert [(d["from_session"], d["trigger"], d["focus"]) for d in links] == [
        (old.id, "manual", "the fruit")
    ]
    shown = await cli.run("sessions", "show", new.id)
    assert f"\ncompacted from session {old.id} (manual)\n  user: This conversation" in shown.stdout
    shown = await cli.run("sessions", "show", old.id)
    assert f"\ncompacted into session {new.id} (manual)\n" in shown.stdout


async def test_a_request_that_would_not_fit_the_window_is_compacted_first(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(
        text_reply("noted"),
        text_reply("SUMMARY: a long note"),
        text_reply("done"),
    )
    terminal = await open_chat(cli, "--context-window", "300")
    try:
        await say(terminal, "note " + "x" * 1200, "noted")
        await say(terminal, "and now?", "done")
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert "auto-compacting" in terminal.output
    last = user_texts(server.requests[2].messages)
    assert "SUMMARY: a long note" in last[0]
    assert last[1] == "and now?"
    assert all("x" * 1200 not in text for text in last)


async def test_a_long_turn_is_compacted_between_its_steps(
    cli: Cli, server: ScriptedModelServer
) -> None:
    (cli.work / "big.txt").write_text("line of the big file\n" * 100)
    read = json.dumps({"file_path": "big.txt"})
    server.push(
        tool_calls_reply(("r1", "read", read)),
        text_reply("SUMMARY: read big.txt"),
        text_reply("finished the task"),
    )
    terminal = await open_chat(cli, "--context-window", "300")
    try:
        await say(terminal, "read the big file", "finished the task")
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert "auto-compacting" in terminal.output
    assert "line of the big file" in json.dumps(server.requests[1].messages)
    (summary,) = user_texts(server.requests[2].messages)
    assert "SUMMARY: read big.txt" in summary
    new, old = sorted(cli.sessions(), key=lambda s: s.created_at, reverse=True)
    old_ends = [e.data["reason"] for e in cli.store.load(old.id).events if e.type == "turn/end"]
    assert old_ends == [{"kind": "compacted", "into_session": new.id}]
    new_ends = [e.data["reason"] for e in cli.store.load(new.id).events if e.type == "turn/end"]
    assert new_ends == [{"kind": "completed"}]
    for session in (old, new):
        check = await cli.run("sessions", "check", session.id)
        assert (check.code, check.stdout) == (0, f"{session.id}: ok\n")


async def test_a_context_overflow_from_the_model_compacts_and_sends_the_message_again(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(
        text_reply("noted"),
        http_error(400, "This model's maximum context length is 8192 tokens"),
        text_reply("SUMMARY: one note"),
        text_reply("answered after compaction"),
    )
    terminal = await open_chat(cli)
    try:
        await say(terminal, "remember this note", "noted")
        await say(terminal, "and now?", "answered after compaction")
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert "no longer fits the model's context window; compacting" in terminal.output
    last = user_texts(server.requests[3].messages)
    assert "SUMMARY: one note" in last[0]
    assert last[1] == "and now?"


async def test_an_at_mention_attaches_the_file_and_an_edit_after_it_shows_a_diff(
    cli: Cli, server: ScriptedModelServer
) -> None:
    edit = json.dumps(
        {
            "file_path": "notes.txt",
            "old_string": "hello from the workspace",
            "new_string": "hello edited",
        }
    )
    server.push(tool_calls_reply(("e1", "edit", edit)), text_reply("edited"))
    terminal = await open_chat(cli)
    try:
        terminal.send(b"fix @notes.txt please\r")
        await terminal.expect("attached @notes.txt", timeout_s=WAIT)
        await terminal.expect("? edit needs approval", timeout_s=WAIT)
        await terminal.expect("-hello from the workspace", timeout_s=WAIT)
        await terminal.expect("+hello edited", timeout_s=WAIT)
        await terminal.expect("approve?", timeout_s=WAIT)
        terminal.send(b"y\r")
        await terminal.expect("✓ edit notes.txt", timeout_s=WAIT)
        await terminal.expect("edited", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    (prompt,) = user_texts(server.requests[0].messages)
    assert prompt.startswith('fix @notes.txt please\n\n<attached path="notes.txt">\n')
    assert "hello from the workspace" in prompt
    assert (cli.work / "notes.txt").read_text() == "hello edited\n"


async def test_deny_with_a_reason_tells_the_model_the_reason(
    cli: Cli, server: ScriptedModelServer
) -> None:
    touch = json.dumps({"command": "touch made.txt", "description": "make a file"})
    server.push(tool_calls_reply(("t1", "bash", touch)), text_reply("ok, not touching"))
    terminal = await open_chat(cli)
    try:
        terminal.send(b"make the file\r")
        await terminal.expect("approve?", timeout_s=WAIT)
        terminal.send(b"d\r")
        await terminal.expect("reason for the model:", timeout_s=WAIT)
        terminal.send(b"use the Makefile instead\r")
        await terminal.expect("ok, not touching", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert not (cli.work / "made.txt").exists()
    assert tool_texts(server.requests[1].messages) == [
        json.dumps('Error: the user rejected tool "bash": use the Makefile instead')
    ]


async def test_an_edit_that_would_fail_anyway_is_not_asked_about(
    cli: Cli, server: ScriptedModelServer
) -> None:
    edit = json.dumps({"file_path": "notes.txt", "old_string": "hello", "new_string": "bye"})
    server.push(tool_calls_reply(("e1", "edit", edit)), text_reply("I will read it first"))
    terminal = await open_chat(cli)
    try:
        await say(terminal, "edit notes", "I will read it first")
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert "needs approval" not in terminal.output
    assert "✗ edit notes.txt" in terminal.output
    (result,) = tool_texts(server.requests[1].messages)
    assert "edit requires reading" in result
    assert "notes.txt" in result
    assert (cli.work / "notes.txt").read_text() == "hello from the workspace\n"


async def test_unknown_slash_commands_stay_local(cli: Cli, server: ScriptedModelServer) -> None:
    terminal = await open_chat(cli)
    try:
        terminal.send(b"/nope\r")
        await terminal.expect("unknown command /nope", timeout_s=WAIT)
        terminal.send(b"/help\r")
        await terminal.expect("/compact", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert server.requests == []


async def test_without_a_terminal_chat_prints_plain_lines(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("**plain** answer"))
    cli.env.pop("NO_COLOR")
    finished = await cli.run("chat", input=b"hello\n/cost\n/exit\n", timeout_s=WAIT)
    assert finished.code == 0
    assert "\x1b" not in finished.stdout + finished.stderr
    assert "**plain** answer\n" in finished.stdout
