"""`@path` mentions in a chat message: the file's content is attached to the message.

Owns: finding mentions (`@` at the start of a word, followed by a path that exists in the
workspace; `\\@` or a non-existent path is left as text) and attaching them. A mentioned file is
read through the `read` tool as the agent itself, so the fs tool's limits apply (a long file is
cut with the tool's own note) and the read-before-write bookkeeping sees it: an `edit` after
`@file` needs no extra `read`. The tool call is not part of the model history; the message
carries the content:

    <text>

    <attached path="src/app.py">
    …the read tool's line-numbered output…
    </attached>
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ...agent.api import Agent
from ...core.signals import AbortSignal
from ...tools import ToolFailure

__all__ = ["Attachment", "attach_mentions", "find_mentions"]

_MENTION: Final = re.compile(r"(?<![\S\\])@([^\s@]+)")


@dataclass(frozen=True, slots=True)
class Attachment:
    """One mention: its path, and the content attached or the error that prevented it."""

    path: str
    content: str | None
    error: str | None = None


def find_mentions(text: str, cwd: Path) -> list[str]:
    """The distinct mentioned paths that are files under `cwd` (or absolute), in order."""
    found: list[str] = []
    for match in _MENTION.finditer(text):
        raw = match.group(1).rstrip(".,;:!?)")
        path = Path(raw) if Path(raw).is_absolute() else cwd / raw
        try:
            is_file = path.is_file()
        except OSError:
            is_file = False
        if is_file and raw not in found:
            found.append(raw)
    return found


async def attach_mentions(
    text: str, *, cwd: Path, agent: Agent, signal: AbortSignal
) -> tuple[str, list[Attachment]]:
    """The message with every mentioned file attached, and what was attached."""
    attachments: list[Attachment] = []
    parts = [text]
    for path in find_mentions(text, cwd):
        result = await agent.call_tool("read", {"file_path": path}, signal=signal)
        if isinstance(result, ToolFailure):
            attachments.append(Attachment(path, None, result.error.message))
            continue
        body = "\n".join(
            str(block.get("text", "")) for block in result.content if block.get("type") == "text"
        )
        attachments.append(Attachment(path, body))
        parts.append(f'<attached path="{path}">\n{body}\n</attached>')
    return "\n\n".join(parts), attachments
