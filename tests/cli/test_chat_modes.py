"""Permission modes in `tether chat` (issue 34 item 2), on a real pseudo-terminal against the
scripted model server.

Contract: Shift+Tab cycles default → acceptEdits → plan → default and the line under the prompt
shows the mode (`⏵⏵ accept edits on`, `⏸ plan mode on`; nothing in default); in acceptEdits a
write runs without asking; in plan mode the plan the model presents (`exit_plan_mode`) is asked
about with the plan shown, and accepting it switches to default.
"""

from __future__ import annotations

import json

import pytest

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ._chat import WAIT, leave, open_chat, screen
from ._support import Cli, Terminal, eventually

pytestmark = pytest.mark.slow

SHIFT_TAB = b"\x1b[Z"


async def shows(terminal: Terminal, text: str) -> None:
    """Wait until the screen shows `text` (prompt_toolkit redraws only what changed, so the
    bytes written need not contain it whole)."""
    await eventually(lambda: text in screen(terminal), timeout_s=WAIT, what=repr(text))


async def test_shift_tab_cycles_the_mode_and_the_prompt_shows_it(cli: Cli) -> None:
    terminal = await open_chat(cli)
    try:
        terminal.send(SHIFT_TAB)
        await shows(terminal, "⏵⏵ accept edits on (shift+tab to cycle)")
        terminal.send(SHIFT_TAB)
        await shows(terminal, "⏸ plan mode on (shift+tab to cycle)")
        terminal.send(SHIFT_TAB)
        await eventually(lambda: "(shift+tab to cycle)" not in screen(terminal), what="no mode")
        terminal.send(b"/permissions\r")
        await terminal.expect("mode: default", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()


async def test_after_shift_tab_a_write_runs_without_asking(
    cli: Cli, server: ScriptedModelServer
) -> None:
    write = ("w1", "write", json.dumps({"file_path": "new.txt", "content": "hi\n"}))
    server.push(tool_calls_reply(write), text_reply("written"))
    terminal = await open_chat(cli)
    try:
        terminal.send(SHIFT_TAB)
        await shows(terminal, "accept edits on")
        terminal.send(b"write it\r")
        await terminal.expect("written", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert "needs approval" not in terminal.output
    assert (cli.work / "new.txt").read_text() == "hi\n"


async def test_an_accepted_plan_leaves_plan_mode(cli: Cli, server: ScriptedModelServer) -> None:
    plan = ("p1", "exit_plan_mode", json.dumps({"plan": "1. write the file"}))
    server.push(tool_calls_reply(plan), text_reply("carrying it out"))
    terminal = await open_chat(cli, "--permission-mode", "plan")
    try:
        await shows(terminal, "plan mode on")
        terminal.send(b"plan it\r")
        await terminal.expect("? exit_plan_mode needs approval", timeout_s=WAIT)
        await terminal.expect("approve?", timeout_s=WAIT)
        assert "1. write the file" in terminal.output
        terminal.send(b"y\r")
        await terminal.expect("carrying it out", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    (result,) = [m for m in server.requests[1].messages if m["role"] == "tool"]
    assert "The user accepted the plan" in str(result["content"])
