"""How `read`, `write` and `edit` results read to the model, and their presentation meta.

Owns: the exact result envelopes (spec §6.3), the read footer, diff hunks with 3 lines of
context for write/edit meta, and the extension -> language map. Pure functions over canonical
values; no I/O.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Final

from ...core.json import JsonValue
from ...tools.results import ContentBlock, text_content

__all__ = [
    "DIFF_TEXT_LIMIT",
    "diff_hunks",
    "edit_text",
    "language_of",
    "read_footer",
    "read_text",
    "write_text",
]

DIFF_TEXT_LIMIT: Final = 1024 * 1024
"""Above this many characters (before + after) a write/edit carries no hunks in its meta."""

_LANGUAGES: Final = frozenset(
    {
        *("c", "cc", "cpp", "cs", "css", "go", "h", "hpp", "html", "java", "js", "json", "jsx"),
        *("kt", "lua", "md", "php", "py", "rb", "rs", "scala", "sh", "sql", "swift", "toml"),
        *("ts", "tsx", "txt", "xml", "yaml", "yml", "zig"),
    }
)


def language_of(path: str) -> str | None:
    """The code-fence language of a known extension (`a.py` -> `py`); None for dotfiles and
    unknown extensions."""
    base = os.path.basename(path)
    stem, ext = os.path.splitext(base)
    if not stem or not ext:
        return None
    lang = ext[1:].lower()
    return lang if lang in _LANGUAGES else None


def read_footer(offset: int, limit: int, numbers: Sequence[int], total: int) -> str:
    """The footer inside `<content>`; "byte-capped" is `len(lines) < limit and end < total`."""
    end = numbers[-1] if numbers else offset - 1
    if len(numbers) < limit and end < total:
        return f"(Output capped. Showing lines {offset}-{end}. Use offset={end + 1} to continue.)"
    if end < total:
        return f"(Showing lines {offset}-{end} of {total}. Use offset={end + 1} to continue.)"
    return f"(End of file - total {total} lines)"


def read_text(
    path: str, offset: int, lines: Sequence[tuple[int, str]], total: int, limit: int
) -> Sequence[ContentBlock]:
    """`<path>…</path>\n<type>file</type>\n<content>\n<n>: <text>…\n\n<footer>\n</content>`
    (an empty window: just the footer inside `<content>`)."""
    footer = read_footer(offset, limit, [number for number, _ in lines], total)
    body = "\n".join(f"{number}: {text}" for number, text in lines)
    inner = f"{body}\n\n{footer}" if lines else footer
    return text_content(f"<path>{path}</path>\n<type>file</type>\n<content>\n{inner}\n</content>")


def write_text(path: str, operation: str) -> Sequence[ContentBlock]:
    """The `write` envelope: `Created file` or `Updated file`."""
    what = "Created file" if operation == "create" else "Updated file"
    return text_content(f"<path>{path}</path>\n<type>file</type>\n<content>\n{what}\n</content>")


def edit_text(path: str, replace_all: bool) -> Sequence[ContentBlock]:
    """The `edit` sentence."""
    if replace_all:
        return text_content(
            f"The file {path} has been updated. All occurrences were successfully replaced."
        )
    return text_content(f"The file {path} has been updated successfully.")


def diff_hunks(path: str, before: str | None, after: str) -> list[JsonValue]:
    """`[{path, old_text, new_text}]`, one per changed region with 3 lines of context; empty for
    a create (no `before`) and for texts over `DIFF_TEXT_LIMIT`."""
    if before is None or len(before) + len(after) > DIFF_TEXT_LIMIT:
        return []
    import difflib  # at the first edit, not at boot (issue 36: startup)

    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    hunks: list[JsonValue] = []
    for group in matcher.get_grouped_opcodes(3):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        hunks.append(
            {"path": path, "old_text": "".join(old[i1:i2]), "new_text": "".join(new[j1:j2])}
        )
    return hunks
