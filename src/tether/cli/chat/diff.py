"""Unified diffs of what an `edit` or `write` call would change, for approvals and results.

Owns: turning a call's arguments into the diff the user sees (`proposed_diff`) and how a diff
looks (`render_diff`: rich Text, + lines green, - lines red, hunk headers cyan; plain text when
the console has no colour). The current file is read from disk (at most 2 MB); an edit whose
`old_string` is not in the file, or a file that cannot be read, gives None and the caller falls
back to the raw arguments.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from rich.text import Text

from ...core.json import JsonValue
from ..visible import visible_text

__all__ = ["proposed_diff", "render_diff"]

_MAX_BYTES: Final = 2_000_000
_MAX_LINES: Final = 80


def _current(path: Path) -> str | None:
    """The file's text, "" when it does not exist, None when it cannot be shown."""
    try:
        if path.stat().st_size > _MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError):
        return None


def proposed_diff(tool: str, arguments: JsonValue | None, cwd: Path) -> str | None:
    """The unified diff `tool` (edit or write) would apply with `arguments`, or None."""
    if not isinstance(arguments, Mapping):
        return None
    file_path = arguments.get("file_path")
    if not isinstance(file_path, str) or not file_path:
        return None
    path = Path(file_path) if Path(file_path).is_absolute() else cwd / file_path
    before = _current(path)
    if before is None:
        return None
    if tool == "write":
        content = arguments.get("content")
        if not isinstance(content, str):
            return None
        after = content
    elif tool == "edit":
        old, new = arguments.get("old_string"), arguments.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str) or not old or old not in before:
            return None
        count = -1 if arguments.get("replace_all") is True else 1
        after = before.replace(old, new, count)
    else:
        return None
    shown = file_path
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{shown}" if before else "/dev/null",
        tofile=f"b/{shown}",
        n=3,
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return text or None


def render_diff(diff: str, *, indent: str = "    ") -> Text:
    """A coloured rendering of a unified diff (cut after 80 lines, saying how many more)."""
    out = Text()
    lines = diff.split("\n")[:-1] if diff.endswith("\n") else diff.split("\n")
    for line in lines[:_MAX_LINES]:
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = ""
        out.append_text(visible_text(indent + line + "\n", style))
    hidden = len(lines) - _MAX_LINES
    if hidden > 0:
        out.append(f"{indent}… {hidden} more diff line{'s' if hidden != 1 else ''}\n", "dim")
    return out
