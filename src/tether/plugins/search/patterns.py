"""Glob patterns and `.gitignore` rules for the pure-Python search backend.

Owns: translating a gitignore-style glob (`*`, `?`, `[...]`, `**`, `{a,b}`) to a regex,
`GlobFilter` (ripgrep's `--glob` semantics: a pattern without `/` matches a file's name at any
depth, one with `/` matches its path relative to the search root; `!pat` excludes), and
`IgnoreRules` (the simple subset of `.gitignore`: comments, `!` negation, trailing `/` for
directories, anchoring by a `/`, last match wins). Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["GlobFilter", "IgnoreRule", "IgnoreRules", "glob_regex", "parse_ignore"]


def _split_braces(body: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in body:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        current += char
    parts.append(current)
    return parts


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == n:
            out.append("(?:/.*)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            close = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if close < 0:
                out.append(re.escape(char))
                i += 1
                continue
            inner = pattern[i + 1 : close]
            if inner[:1] in ("!", "^"):
                inner = "^" + inner[1:]
            out.append("[" + inner.replace("\\", "\\\\") + "]")
            i = close + 1
        elif char == "{":
            depth, close = 0, -1
            for j in range(i, n):
                depth += {"{": 1, "}": -1}.get(pattern[j], 0)
                if depth == 0:
                    close = j
                    break
            if close < 0:
                out.append(re.escape(char))
                i += 1
                continue
            options = _split_braces(pattern[i + 1 : close])
            out.append("(?:" + "|".join(_translate(option) for option in options) + ")")
            i = close + 1
        elif char == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex matching whole `/`-separated paths against a gitignore-style glob."""
    return re.compile(f"(?s:{_translate(pattern)})\\Z")


@dataclass(frozen=True, slots=True)
class _Glob:
    regex: re.Pattern[str]
    by_name: bool
    negated: bool


class GlobFilter:
    """Which files a set of `--glob`s admits: any positive glob must match (when there is one)
    and no negated glob may."""

    __slots__ = ("_globs", "_has_positive")

    def __init__(self, patterns: list[str]) -> None:
        globs = []
        for raw in patterns:
            negated = raw.startswith("!")
            pattern = raw[1:] if negated else raw
            by_name = "/" not in pattern.rstrip("/")
            globs.append(_Glob(glob_regex(pattern.strip("/")), by_name, negated))
        self._globs = tuple(globs)
        self._has_positive = any(not g.negated for g in globs)

    def admits(self, relative: str) -> bool:
        """`relative`: the file's path relative to the search root, `/`-separated."""
        name = relative.rsplit("/", 1)[-1]
        admitted = not self._has_positive
        for glob in self._globs:
            if glob.regex.match(name if glob.by_name else relative):
                if glob.negated:
                    return False
                admitted = True
        return admitted


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """One `.gitignore` line, relative to `base` (the directory holding the file, absolute)."""

    base: str
    regex: re.Pattern[str]
    anchored: bool
    dir_only: bool
    negated: bool


def parse_ignore(text: str, base: str) -> list[IgnoreRule]:
    """The rules of one `.gitignore` file located in directory `base`."""
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated or line.startswith("\\"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        rules.append(IgnoreRule(base, glob_regex(line.lstrip("/")), anchored, dir_only, negated))
    return rules


class IgnoreRules:
    """An ordered rule list; the last rule matching a path decides (`!` re-includes)."""

    __slots__ = ("rules",)

    def __init__(self, rules: list[IgnoreRule] | None = None) -> None:
        self.rules: tuple[IgnoreRule, ...] = tuple(rules or ())

    def extended(self, rules: list[IgnoreRule]) -> IgnoreRules:
        """These rules followed by `rules` (a deeper `.gitignore`)."""
        return IgnoreRules([*self.rules, *rules]) if rules else self

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether absolute `path` is ignored."""
        verdict = False
        name = path.rsplit("/", 1)[-1]
        for rule in self.rules:
            if rule.dir_only and not is_dir:
                continue
            if not path.startswith(rule.base.rstrip("/") + "/"):
                continue
            subject = path[len(rule.base.rstrip("/")) + 1 :] if rule.anchored else name
            if rule.regex.match(subject):
                verdict = not rule.negated
        return verdict
