"""`@path` mentions in a chat message: the file's content is attached to the message.

Owns: finding mentions (`@` at the start of a word, followed by a path that exists in the
workspace; `\\@` is left as text) and attaching them, and naming the mentions of files that do
not exist (`missing_mentions`: the chat does not send such a message — the user meant a file and
mistyped it — but puts it back in the input; a word that does not look like a path, `@bob` or
`@app.route`, is text). A mentioned file is read through the `read` tool as the agent itself, so
the permission rules and the fs tool's limits apply (a long file is cut with the tool's own
note) and the read-before-write bookkeeping sees it: an `edit` after `@file` needs no extra
`read`; a mentioned directory gets its files listed by the `glob` tool. The tool calls are not
part of the model history; the message carries the content:

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

__all__ = ["Attachment", "attach_mentions", "find_mentions", "missing_mentions"]

_MENTION: Final = re.compile(r"(?<![\S\\])@([^\s@]+)")
_PATH_LIKE: Final = re.compile(r"[\w.~/+-]+")
_EXTENSIONS: Final = frozenset(
    [
        "c",
        "cc",
        "cfg",
        "conf",
        "cpp",
        "cs",
        "css",
        "csv",
        "env",
        "go",
        "h",
        "hpp",
        "html",
        "ini",
        "ipynb",
        "java",
        "js",
        "json",
        "jsx",
        "kt",
        "lock",
        "log",
        "lua",
        "md",
        "mdx",
        "php",
        "pl",
        "py",
        "pyi",
        "rb",
        "rs",
        "rst",
        "scss",
        "sh",
        "sql",
        "svelte",
        "swift",
        "toml",
        "ts",
        "tsx",
        "txt",
        "vue",
        "xml",
        "yaml",
        "yml",
        "zig",
    ]
)
"""Suffixes that make `@name.suffix` a file reference even without a `/`."""


@dataclass(frozen=True, slots=True)
class Attachment:
    """One mention: its path, and the content attached or the error that prevented it."""

    path: str
    content: str | None
    error: str | None = None


def _candidates(text: str) -> list[str]:
    found: list[str] = []
    for match in _MENTION.finditer(text):
        raw = match.group(1).rstrip(".,;:!?)\"'")
        if raw and raw not in found:
            found.append(raw)
    return found


def _kind(raw: str, cwd: Path) -> str | None:
    """ "file", "dir" or None (nothing there)."""
    path = Path(raw) if Path(raw).is_absolute() else cwd / raw
    try:
        if path.is_file():
            return "file"
        if path.is_dir():
            return "dir"
    except OSError:
        return None
    return None


def find_mentions(text: str, cwd: Path) -> list[str]:
    """The distinct mentioned paths that are files or directories under `cwd` (or absolute),
    in order."""
    return [raw for raw in _candidates(text) if _kind(raw, cwd) is not None]


def missing_mentions(text: str, cwd: Path) -> list[str]:
    """The mentions that look like paths (`src/app.py`, `notes.txt`, `docs/`) but name nothing
    under `cwd`."""
    return [
        raw
        for raw in _candidates(text)
        if _PATH_LIKE.fullmatch(raw) and _looks_like_a_path(raw) and _kind(raw, cwd) is None
    ]


def _looks_like_a_path(raw: str) -> bool:
    if "/" in raw:
        return True
    _, dot, suffix = raw.rpartition(".")
    return bool(dot) and suffix.lower() in _EXTENSIONS


async def attach_mentions(
    text: str, *, cwd: Path, agent: Agent, signal: AbortSignal
) -> tuple[str, list[Attachment]]:
    """The message with every mentioned file (or directory listing) attached, and what was
    attached."""
    attachments: list[Attachment] = []
    parts = [text]
    for path in find_mentions(text, cwd):
        if _kind(path, cwd) == "dir":
            result = await agent.call_tool("glob", {"pattern": "*", "path": path}, signal=signal)
        else:
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
