"""What a search asks for, independent of the backend that answers it.

Owns: `GrepQuery` and `GlobQuery` (normalised tool arguments: an absolute root, the filters,
the mode) and the output modes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = ["GlobQuery", "GrepQuery", "OutputMode"]

OutputMode: TypeAlias = Literal["files_with_matches", "content", "count"]


@dataclass(frozen=True, slots=True)
class GrepQuery:
    """A content search under `root` (a directory or one file, absolute)."""

    pattern: str
    root: str
    mode: OutputMode = "files_with_matches"
    globs: tuple[str, ...] = ()
    file_type: str | None = None
    ignore_case: bool = False
    line_numbers: bool = True
    before: int = 0
    after: int = 0
    multiline: bool = False
    excluded: tuple[str, ...] = ()
    """Globs never searched (paths a `Read(...)` deny rule denies), as ripgrep reads them:
    relative to the directory it runs in (`ripgrep.relative_exclusions`)."""


@dataclass(frozen=True, slots=True)
class GlobQuery:
    """A file-name search: files under `root` matching `pattern`."""

    pattern: str
    root: str
    excluded: tuple[str, ...] = ()
    """As `GrepQuery.excluded`."""
