"""Hook events only a chat fires (issue 34 item 4): SessionEnd with reason `prompt_input_exit`
when the user leaves at the prompt, and Notification `idle_prompt` when the prompt has waited
for the user (`tether.cli.chat.idle`).

Contract: after a turn, `/exit` and Ctrl-D at the prompt each end the session with one
SessionEnd whose `reason` is `prompt_input_exit` (never a second "other" when the agent closes);
with `$TETHER_IDLE_PROMPT_S` set, the prompt after a turn fires one Notification with
`notification_type` `idle_prompt`, `message` "tether is waiting for your input" and the common
fields Claude Code sends (session_id, transcript_path, cwd, permission_mode, hook_event_name);
a bad `$TETHER_IDLE_PROMPT_S` is refused in one line naming it. The idle test waits on the hook
itself: it writes to a FIFO the test reads. `tether chat` runs on a real pseudo-terminal.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tether.testing.scripted_model import ScriptedModelServer, text_reply

from ._chat import WAIT, leave, open_chat, say
from ._support import Cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("jq") is None, reason="the hook scripts use jq"),
]


def install(cli: Cli, event: str, script: str) -> None:
    """`.claude/settings.json` with one command hook for `event` running `script` (bash)."""
    hooks = cli.work / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    path = hooks / "hook.sh"
    path.write_text("#!/bin/bash\n" + script)
    path.chmod(0o755)
    command = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/hook.sh'
    settings = {"hooks": {event: [{"hooks": [{"type": "command", "command": command}]}]}}
    (cli.work / ".claude" / "settings.json").write_text(json.dumps(settings))


async def read_fifo(fifo: Path) -> str:
    """What one writer writes to `fifo`, bounded by `WAIT`; on the way out a reader still
    blocked is released (an empty writer), so no thread outlives the test."""
    reading = asyncio.ensure_future(asyncio.to_thread(fifo.read_text))
    try:
        return await asyncio.wait_for(asyncio.shield(reading), WAIT)
    finally:
        if not reading.done():
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # the reader has not opened it yet: nothing is blocked
                pass
            await asyncio.wait({reading})


END_HOOK = 'jq -c "{hook_event_name, reason}" >> "$CLAUDE_PROJECT_DIR"/end.txt\n'
ENDED = '{"hook_event_name":"SessionEnd","reason":"prompt_input_exit"}\n'


async def test_exit_at_the_prompt_ends_the_session_with_prompt_input_exit(
    cli: Cli, server: ScriptedModelServer
) -> None:
    install(cli, "SessionEnd", END_HOOK)
    server.push(text_reply("hello back"))
    terminal = await open_chat(cli)
    try:
        await say(terminal, "hello", "hello back")
        await leave(terminal)
    finally:
        await terminal.aclose()

    assert (cli.work / "end.txt").read_text() == ENDED


async def test_ctrl_d_at_the_prompt_ends_the_session_with_prompt_input_exit(
    cli: Cli, server: ScriptedModelServer
) -> None:
    install(cli, "SessionEnd", END_HOOK)
    server.push(text_reply("hello back"))
    terminal = await open_chat(cli)
    try:
        await say(terminal, "hello", "hello back")
        terminal.send(b"\x04")
        assert await terminal.wait(timeout_s=WAIT) == 0
    finally:
        await terminal.aclose()

    assert (cli.work / "end.txt").read_text() == ENDED


async def test_a_prompt_left_idle_after_a_turn_fires_the_idle_prompt_notification(
    cli: Cli, server: ScriptedModelServer
) -> None:
    fifo = cli.work / "notified.fifo"
    os.mkfifo(fifo)
    install(cli, "Notification", 'cat > "$CLAUDE_PROJECT_DIR"/notified.fifo\n')
    cli.env["TETHER_IDLE_PROMPT_S"] = "0.1"
    server.push(text_reply("hello back"))
    terminal = await open_chat(cli)
    try:
        await say(terminal, "hello", "hello back")
        payload: dict[str, Any] = json.loads(await read_fifo(fifo))
        await leave(terminal)
    finally:
        await terminal.aclose()

    assert {k: payload[k] for k in ("hook_event_name", "notification_type", "message")} == {
        "hook_event_name": "Notification",
        "notification_type": "idle_prompt",
        "message": "tether is waiting for your input",
    }
    assert {"session_id", "transcript_path", "cwd", "permission_mode"} <= payload.keys()


async def test_a_bad_idle_delay_is_refused_naming_the_variable(cli: Cli) -> None:
    cli.env["TETHER_IDLE_PROMPT_S"] = "soon"

    done = await cli.run("chat")

    assert done.code == 2
    assert done.stderr == (
        "tether: TETHER_IDLE_PROMPT_S must be a number of seconds (>= 0), got 'soon'\n"
    )
