"""Permissions in `tether chat` that last, as a Claude Code user expects (issue 26 §2), on a real
pseudo-terminal against the scripted model server.

Contract: the approval prompt shows the prefix rule "don't ask again" would save (`Bash(touch:*)`)
and where (`.claude/settings.local.json`) before anything is saved; `a` saves it, and a new
`tether chat` — a restart — runs a matching command without asking. Read-only commands (`ls`,
`cat`, `git status`...) run without asking at all.
"""

from __future__ import annotations

import json

import pytest

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ._chat import WAIT, leave, open_chat
from ._support import Cli

pytestmark = pytest.mark.slow


def bash(call_id: str, command: str) -> tuple[str, str, str]:
    return (call_id, "bash", json.dumps({"command": command, "description": "run"}))


async def test_a_saved_prefix_rule_is_shown_first_and_still_allows_after_a_restart(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(
        tool_calls_reply(bash("t1", "touch first.txt")),
        text_reply("made the first"),
        tool_calls_reply(bash("t2", "touch second.txt")),
        text_reply("made the second"),
    )
    terminal = await open_chat(cli)
    try:
        terminal.send(b"make the first file\r")
        await terminal.expect("? bash needs approval", timeout_s=WAIT)
        await terminal.expect("approve?", timeout_s=WAIT)
        shown = " ".join(terminal.output.split())
        assert (
            "a yes, and don't ask again for Bash(touch:*) (saved to .claude/settings.local.json)"
        ) in shown
        settings = cli.work / ".claude" / "settings.local.json"
        assert not settings.exists()  # shown, not saved yet
        terminal.send(b"a\r")
        await terminal.expect("made the first", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        terminal.send(b"/permissions\r")
        await terminal.expect("saved (don't ask again): Bash(touch:*)", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert json.loads(settings.read_text()) == {"permissions": {"allow": ["Bash(touch:*)"]}}

    restarted = await open_chat(cli)
    try:
        restarted.send(b"make the second file\r")
        await restarted.expect("made the second", timeout_s=WAIT)
        await restarted.expect("›", timeout_s=WAIT)
        await leave(restarted)
    finally:
        await restarted.aclose()
    assert "needs approval" not in restarted.output
    assert (cli.work / "first.txt").exists()
    assert (cli.work / "second.txt").exists()


async def test_read_only_commands_run_without_asking(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(
        tool_calls_reply(bash("r1", "ls -la && cat notes.txt | head -1")),
        text_reply("listed"),
    )
    terminal = await open_chat(cli)
    try:
        terminal.send(b"what is here\r")
        await terminal.expect("✓ bash ls -la && cat notes.txt | head -1", timeout_s=WAIT)
        await terminal.expect("listed", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert "needs approval" not in terminal.output
    result = json.dumps(server.requests[1].messages)
    assert "hello from the workspace" in result
