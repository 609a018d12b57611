"""How `grep` and `glob` results read to the model (Claude Code's Grep/Glob shapes).

Owns the texts: `No files found`, `No matches found`, `Found <n> file(s)` headers, the count
summary, and the truncation notices. Pure functions over canonical values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

__all__ = ["GLOB_TRUNCATED", "glob_text", "grep_text"]

GLOB_TRUNCATED: Final = "(Results are truncated. Consider using a more specific path or pattern.)"
INCOMPLETE: Final = (
    "(The search printed more than the capture limit; earlier results are missing. Use a more"
    " specific pattern or path.)"
)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _notice(shown: int, total: int, unit: str) -> str:
    return (
        f"(Results are truncated: showing the first {shown} of {total} {unit}. Use a more"
        " specific pattern or path, or raise head_limit.)"
    )


def grep_text(
    mode: str,
    results: Sequence[str],
    total: int,
    matches: int,
    incomplete: bool,
) -> str:
    """The model-facing text of a `grep` result."""
    if total == 0:
        return "No files found" if mode == "files_with_matches" else "No matches found"
    parts: list[str] = []
    if mode == "files_with_matches":
        parts.append(f"Found {_plural(total, 'file')}\n" + "\n".join(results))
        unit = "files"
    elif mode == "count":
        parts.append("\n".join(results))
        across = _plural(total, "file")
        parts.append(f"Found {_plural(matches, 'total occurrence')} across {across}.")
        unit = "files"
    else:
        parts.append("\n".join(results))
        unit = "lines"
    if len(results) < total:
        parts.append(_notice(len(results), total, unit))
    if incomplete:
        parts.append(INCOMPLETE)
    return "\n\n".join(parts)


def glob_text(files: Sequence[str], truncated: bool) -> str:
    """Paths newest first, one per line; `No files found`; the truncation line when capped."""
    if not files:
        return "No files found"
    text = "\n".join(files)
    return f"{text}\n{GLOB_TRUNCATED}" if truncated else text
