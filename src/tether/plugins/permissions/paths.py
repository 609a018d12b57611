"""Path specifiers of `Read(...)` / `Edit(...)` / `Write(...)` rules, in Claude Code's syntax.

Owns `PathPattern` (compiled once per rule) and `candidate_paths` (what a call's path argument
is checked as). Where a pattern is anchored:

    //abs/path    an absolute filesystem path
    ~/path        the user's home directory
    /path         the workspace root (like a leading slash in .gitignore)
    ./path        the workspace root
    dir/name      the workspace root (a slash inside anchors it, as in .gitignore)
    name          any depth under the workspace (no slash: matches a file or directory name)

Globs are gitignore-style: `*` and `?` stay within one path segment, `**` spans segments, and a
pattern that matches a directory matches everything inside it (`Read(./secrets)` covers
`./secrets/key.pem`). A call's path (relative ones resolve against the workspace, `~` expands)
is checked both as written (normalized) and with symlinks resolved: deny and ask rules match if
either matches, allow rules only if both do — a symlink cannot smuggle a denied file out, or an
unallowed one in.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PathPattern", "candidate_paths"]


@functools.cache
def _glob_special() -> re.Pattern[str]:
    return re.compile(r"([\\*?\[\]{}!])")


def _glob_regex(glob: str) -> str:
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class PathPattern:
    """One compiled path specifier (see the module note)."""

    text: str
    regex: re.Pattern[str]
    anchor: str = ""
    """The directory everything the pattern matches is in ("": the filesystem root)."""
    glob: str = "/"
    """The pattern as one absolute gitignore-style glob (for `rg --glob=!…`)."""

    @classmethod
    def compile(cls, text: str, workspace: Path, home: Path | None = None) -> PathPattern:
        """Raises ValueError for an empty pattern."""
        pattern = text.strip()
        if not pattern:
            raise ValueError("a path pattern cannot be empty")
        user_home = os.path.normpath(str(Path.home() if home is None else home))
        root = os.path.normpath(str(workspace))
        if pattern.startswith("//"):
            base, rest = "", pattern[1:]
        elif pattern == "~" or pattern.startswith("~/"):
            base, rest = user_home, pattern[1:]
        elif pattern.startswith("/"):
            base, rest = root, pattern
        elif pattern.startswith("./"):
            base, rest = root, pattern[1:]
        elif "/" in pattern.rstrip("/"):
            base, rest = root, "/" + pattern
        else:
            base, rest = root, "/**/" + pattern
        rest = re.sub("/+", "/", rest).rstrip("/")
        if base == "/":
            base = ""
        if not base and not rest:
            return cls(text, re.compile("/"))  # `//`: the filesystem root, so every path
        literal = base + rest
        absolute = _glob_special().sub(r"\\\1", base) + rest
        glob_at = min((i for i in map(literal.find, "*?[") if i >= 0), default=-1)
        anchor = literal if glob_at < 0 else literal[:glob_at].rpartition("/")[0]
        tail = ""
        if rest.endswith("/**"):
            rest, tail = rest[:-3], "(?:/.*)?"
        regex = re.compile(re.escape(base) + _glob_regex(rest) + tail)
        return cls(text, regex, anchor, absolute)

    def matches(self, path: str) -> bool:
        """Whether `path` (absolute, normalized) or one of its ancestors matches."""
        current = path
        while True:
            if self.regex.fullmatch(current):
                return True
            parent = os.path.dirname(current)
            if parent == current:
                return False
            current = parent

    def may_match_under(self, directory: str) -> bool:
        """Whether the pattern may match `directory` (absolute, normalized) or anything inside
        it; when unsure, yes."""
        here = directory.rstrip("/")
        anchor = self.anchor
        return (
            not here
            or not anchor
            or anchor == here
            or anchor.startswith(here + "/")
            or here.startswith(anchor + "/")
        )


def candidate_paths(raw: str, workspace: Path) -> tuple[str, str]:
    """(normalized, symlinks resolved) absolute forms of a call's path argument."""
    expanded = os.path.expanduser(raw)
    joined = os.path.join(str(workspace), expanded)
    return os.path.normpath(joined), os.path.realpath(joined)
