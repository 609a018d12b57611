"""What a search asks for, independent of the backend that answers it.

Owns: `GrepQuery` and `GlobQuery` (normalised tool arguments: an absolute root, the filters,
the mode), the output modes, and the file-type table the Python backend uses for `type`
(ripgrep has its own, larger one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

__all__ = ["FILE_TYPES", "GlobQuery", "GrepQuery", "OutputMode"]

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


@dataclass(frozen=True, slots=True)
class GlobQuery:
    """A file-name search: files under `root` matching `pattern`."""

    pattern: str
    root: str


FILE_TYPES: Final[dict[str, tuple[str, ...]]] = {
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h"),
    "css": ("*.css", "*.scss"),
    "go": ("*.go",),
    "html": ("*.html", "*.htm"),
    "java": ("*.java",),
    "js": ("*.js", "*.mjs", "*.cjs", "*.jsx"),
    "json": ("*.json",),
    "md": ("*.md", "*.markdown"),
    "py": ("*.py", "*.pyi"),
    "rb": ("*.rb",),
    "rust": ("*.rs",),
    "sh": ("*.sh", "*.bash", "*.zsh"),
    "toml": ("*.toml",),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "txt": ("*.txt",),
    "yaml": ("*.yaml", "*.yml"),
}
