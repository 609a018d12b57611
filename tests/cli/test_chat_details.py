"""Small things a Claude Code user notices in `tether chat` (issue 34 item 7), on a real
pseudo-terminal against the scripted model server.

Contract: Esc at an approval question leaves the question before the turn is aborted, so
`approve?` is on the screen once, followed by the interrupt notice.
"""

from __future__ import annotations

import json

import pytest

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ._chat import WAIT, leave, open_chat, say, screen
from ._support import Cli

pytestmark = pytest.mark.slow


async def test_esc_at_an_approval_question_leaves_approve_on_the_screen_once(
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
        await terminal.expect("›", timeout_s=WAIT)
        await say(terminal, "fine", "after")
        await leave(terminal)
    finally:
        await terminal.aclose()
    shown = screen(terminal)
    assert shown.count("approve?") == 1
    assert shown.index("approve?") < shown.index("interrupted (Esc)")
    assert not (cli.work / "never.txt").exists()
