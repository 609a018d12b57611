"""Helpers for the `tether chat` pty tests: open a chat, type, wait for answers, read the screen.

Waiting is always for screen text, bounded by `WAIT` (generous: the machine may be loaded).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ._support import PATIENCE_S, TETHER, Cli, Terminal

__all__ = [
    "WAIT",
    "last_line",
    "leave",
    "open_chat",
    "open_resumed",
    "say",
    "screen",
    "tool_texts",
    "user_texts",
]

WAIT = PATIENCE_S


async def open_chat(cli: Cli, *args: str) -> Terminal:
    """`tether chat ARGS` on a new pseudo-terminal, once its prompt is shown."""
    terminal = await Terminal.open([str(TETHER), "chat", *args], cwd=cli.work, env=cli.env)
    await terminal.expect("›", timeout_s=WAIT)
    return terminal


async def open_resumed(cli: Cli, *args: str) -> Terminal:
    """`tether chat ARGS` that resumes a session: once the earlier conversation (whose prompts
    start with `›` too) is shown and the prompt after it."""
    terminal = await Terminal.open([str(TETHER), "chat", *args], cwd=cli.work, env=cli.env)
    await terminal.expect("── resumed ──", timeout_s=WAIT)
    await terminal.expect("›", timeout_s=WAIT)
    return terminal


async def say(terminal: Terminal, text: str, answer: str) -> None:
    """Type `text`, press Enter, wait for `answer` and the next prompt."""
    terminal.send(text.encode() + b"\r")
    await terminal.expect(answer, timeout_s=WAIT)
    await terminal.expect("›", timeout_s=WAIT)


async def leave(terminal: Terminal) -> None:
    """`/exit`, and the chat ends with exit code 0."""
    terminal.send(b"/exit\r")
    assert await terminal.wait(timeout_s=WAIT) == 0


def screen(terminal: Terminal) -> str:
    """What the terminal shows (lines scrolled off the top first)."""
    return "\n".join(terminal.screen())


def last_line(terminal: Terminal) -> str:
    """The last line of the screen with text on it."""
    return next((line for line in reversed(terminal.screen()) if line.strip()), "")


def user_texts(messages: Sequence[dict[str, object]]) -> list[str]:
    """The text of every user message of a request, in order."""
    out = []
    for message in messages:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(str(part.get("text", "")) for part in content)
        out.append(str(content))
    return out


def tool_texts(messages: Sequence[dict[str, object]]) -> list[str]:
    """The content of every tool result of a request, as JSON text."""
    return [json.dumps(m.get("content")) for m in messages if m.get("role") == "tool"]
