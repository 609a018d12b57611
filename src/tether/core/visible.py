"""Showing a string the model controls on a terminal exactly: nothing in it hidden or reordered.

Owns `hidden(char)`, the one decision of which characters a terminal would not show as what they
are, `visible_parts` (a string as runs of plain text and written-out characters: `\\x1b`,
`\\u202e`, `\\U000e0041`) and `visible` (the same as plain text). `tether.cli.visible` prints the
parts in a distinct style (rich markup and `Text`). Every string a model can influence
passes through one of them before it reaches the terminal: tool names and arguments in approval
and sandbox-escalation questions, the rules "don't ask again" would save, the reason a question
gives (which may quote a command's output), the status line and the tool lines of `chat` and
`run`, notices, previews of output, the diff of an `edit`/`write`, and the note `tether run`
writes to stderr for a call nobody can approve (docs/sandbox.md, "What a prompt shows"). Does
not own what is shown (the callers), how it is styled (`tether.cli.visible`) or the bytes that
run: a question shows the very arguments the tool receives, unchanged.

Two strengths:

* strict (the default), for what the user decides on — a command, a path, a rule, a tool line:
  control characters (C0 but newline and tab, DEL, C1, so every ESC sequence), Unicode format
  characters (bidirectional embeddings, overrides, isolates and marks U+202A–202E, U+2066–2069,
  U+200E/F, U+061C; zero-width space and joiners U+200B–200D, U+2060–2064, U+FEFF, U+180E, the
  soft hyphen, tag characters U+E0000–E007F), line and paragraph separators, spaces other than
  U+0020 (a no-break space looks like a space but is not one to bash), variation selectors and
  the other invisible marks and fillers (U+034F, U+115F, U+1160, U+17B4, U+17B5, U+180B–180F,
  U+3164, U+FFA0);
* prose, for the model's own text, reasoning and a command's output: only the control
  characters (a terminal acts on them; the Unicode ones are needed by right-to-left scripts,
  emoji and Indic scripts, and a terminal does not act on them).

Newline and tab are kept as they are in both.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from functools import lru_cache
from typing import Final

__all__ = ["hidden", "visible", "visible_parts"]


@functools.cache
def _prose() -> re.Pattern[str]:
    return re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


_INVISIBLE: Final = frozenset(
    {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x3164, 0xFFA0}
)
_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


@lru_cache(maxsize=4096)
def hidden(char: str, *, strict: bool = True) -> bool:
    """Whether a terminal would not show `char` (one character) as what it is (see the module
    note for the two strengths)."""
    if char in "\n\t":
        return False
    code = ord(char)
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return True
    if not strict or 0x20 <= code < 0x7F:
        return False
    category = unicodedata.category(char)
    return (
        category in _CATEGORIES
        or (category == "Zs" and char != " ")
        or code in _INVISIBLE
        or 0xFE00 <= code <= 0xFE0F
        or 0xE0100 <= code <= 0xE01EF
    )


def _written(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def visible_parts(text: str, *, strict: bool = True) -> list[tuple[str, bool]]:
    """`text` as runs of (chunk, written out?); a single run when nothing is hidden."""
    if not strict and not _prose().search(text):
        return [(text, False)]
    if strict and text.isascii() and text.isprintable():
        return [(text, False)]
    parts: list[tuple[str, bool]] = []
    start = 0
    for index, char in enumerate(text):
        if hidden(char, strict=strict):
            if start < index:
                parts.append((text[start:index], False))
            parts.append((_written(char), True))
            start = index + 1
    if start < len(text):
        parts.append((text[start:], False))
    return parts


def visible(text: str, *, strict: bool = True) -> str:
    """`text` with every hidden character written out (`\\x1b`), as plain text."""
    return "".join(chunk for chunk, _ in visible_parts(text, strict=strict))
