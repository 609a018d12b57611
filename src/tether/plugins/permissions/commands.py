"""Reading a bash command the way permission rules need to: as the simple commands it runs.

Owns `split_command`, a small shell-aware splitter (not a parser): it honours single and double
quotes and backslash escapes, splits on the control operators `;`, `&&`, `||`, `|`, `&` and
newlines, and reports command and process substitutions (`$(...)`, backticks, `<(...)`,
`>(...)`), whose bodies are split too and returned as commands of their own, and here-documents
(`<<`). Redirections are not analysed (`npm test > log.txt` is one command). Each command is
returned with its whitespace collapsed and leading `NAME=value` assignments removed (`FOO=1 rm x`
is `rm x`).

Deny and ask rules match a command when they match any of its parts; allow rules only when every
part is allowed and nothing runs through a substitution — so `git status && rm -rf /` is not
allowed by `Bash(git status:*)`. This is a best effort: a rule cannot see through `bash -c`,
`eval`, aliases or scripts; deny rules on bash are a guard rail, not a sandbox.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["SplitCommand", "split_command"]

_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")


@dataclass(frozen=True, slots=True)
class SplitCommand:
    """The simple commands of a command line, and whether any of them came from a
    substitution (or the line could not be read: an unterminated quote)."""

    parts: tuple[str, ...]
    opaque: bool


def _clean(text: str) -> str | None:
    words = text.split()
    while words and _ASSIGNMENT.fullmatch(words[0]):
        words.pop(0)
    return " ".join(words) or None


def _closing(command: str, start: int) -> int:
    """The index of the `)` closing the `(` before `start` (or len(command))."""
    depth, i, n = 1, start, len(command)
    while i < n:
        c = command[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            end = command.find("'", i + 1)
            i = n if end < 0 else end + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return n


def split_command(command: str) -> SplitCommand:
    """Split `command` (see the module note)."""
    parts: list[str] = []
    opaque = False
    current: list[str] = []
    quote: str | None = None
    i, n = 0, len(command)

    def flush() -> None:
        cleaned = _clean("".join(current))
        if cleaned is not None:
            parts.append(cleaned)
        current.clear()

    def substitution(body: str) -> None:
        nonlocal opaque
        opaque = True
        inner = split_command(body)
        parts.extend(inner.parts)

    while i < n:
        c = command[i]
        if c == "\\" and quote != "'":
            current.append(command[i : i + 2])
            i += 2
            continue
        if quote == "'":
            current.append(c)
            if c == "'":
                quote = None
            i += 1
            continue
        if command.startswith("$(", i) or (c in "<>" and command.startswith("(", i + 1)):
            end = _closing(command, i + 2)
            substitution(command[i + 2 : end])
            current.append(command[i : end + 1])
            i = end + 1
            continue
        if c == "`":
            end = command.find("`", i + 1)
            end = n if end < 0 else end
            substitution(command[i + 1 : end])
            current.append(command[i : end + 1])
            i = end + 1
            continue
        if quote == '"':
            current.append(c)
            if c == '"':
                quote = None
            i += 1
            continue
        if c in "'\"":
            quote = c
            current.append(c)
            i += 1
            continue
        if c == "&" and (command[i - 1 : i] in ("<", ">") or command.startswith("&>", i)):
            current.append(c)  # a redirection (2>&1, &>file), not a control operator
            i += 1
            continue
        if c == "<" and command.startswith("<<", i):
            opaque = True  # a here-document: its body is data the command reads
        if c in ";&|\n":
            flush()
            i += 2 if command.startswith(("&&", "||", ";;"), i) else 1
            continue
        current.append(c)
        i += 1
    flush()
    return SplitCommand(tuple(parts), opaque or quote is not None)
