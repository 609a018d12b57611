"""The pure-Python search backend, for machines without ripgrep.

Owns: walking a tree the way ripgrep does by default (hidden files included, `.git` skipped,
`.gitignore` rules of the root's ancestors up to the repository root and of every directory
walked, symlinks not followed, binary files skipped) and producing ripgrep's output lines
(`path:line:text`, context lines `path-line-text`, `--` between groups; `path:count`; paths).

Runs in a worker thread. The caller's signal is read before every directory entry and file;
once it has aborted the search stops with `SearchStopped`. Residual window: one file's regex
scan (Python's `re` cannot be interrupted).
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterator, Sequence

from ...core.signals import AbortSignal
from .errors import SEARCH_INVALID_ARGS, SearchError
from .patterns import GlobFilter, IgnoreRule, IgnoreRules, parse_ignore
from .query import FILE_TYPES, GlobQuery, GrepQuery

__all__ = ["SearchStopped", "glob_tree", "grep_tree", "walk_files"]

_SNIFF = 8192


class SearchStopped(Exception):
    """The signal aborted while the tree was being searched."""


def _check(signal: AbortSignal) -> None:
    if signal.aborted:
        raise SearchStopped


def parse_ignore_file(directory: str) -> list[IgnoreRule]:
    """The rules of `directory/.gitignore` (none when it is missing or unreadable)."""
    try:
        with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as f:
            return parse_ignore(f.read(), directory)
    except OSError:
        return []


def _ancestor_rules(root: str) -> IgnoreRules:
    """`.gitignore` rules from the repository root (nearest ancestor with `.git`) down to the
    root's parent; without a repository, only the root's own file applies."""
    chain: list[str] = []
    current = os.path.dirname(root)
    while True:
        chain.append(current)
        if os.path.exists(os.path.join(current, ".git")):
            break
        parent = os.path.dirname(current)
        if parent == current:
            chain = []
            break
        current = parent
    rules = IgnoreRules()
    for directory in reversed(chain):
        rules = rules.extended(parse_ignore_file(directory))
    return rules


def walk_files(root: str, filters: Sequence[GlobFilter], signal: AbortSignal) -> Iterator[str]:
    """Absolute paths of the searchable files under `root` (itself, when it is a file)."""
    if not os.path.isdir(root):
        if os.path.isfile(root):  # never open a FIFO or device: the read could block forever
            yield root
        return
    stack: list[tuple[str, IgnoreRules]] = [(root, _ancestor_rules(root))]
    while stack:
        directory, rules = stack.pop()
        _check(signal)
        rules = rules.extended(parse_ignore_file(directory))
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            _check(signal)
            if entry.name == ".git":
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if rules.ignored(entry.path, is_dir):
                continue
            if is_dir:
                subdirs.append(entry.path)
            elif entry.is_file(follow_symlinks=False):
                relative = os.path.relpath(entry.path, root).replace(os.sep, "/")
                if all(each.admits(relative) for each in filters):
                    yield entry.path
        stack.extend((sub, rules) for sub in reversed(subdirs))


def _filters(query: GrepQuery) -> list[GlobFilter]:
    filters = [GlobFilter(list(query.globs))]
    if query.file_type is not None:
        types = FILE_TYPES.get(query.file_type)
        if types is None:
            known = ", ".join(sorted(FILE_TYPES))
            raise SearchError(
                f'unknown file type "{query.file_type}"; use one of {known}, or a glob',
                SEARCH_INVALID_ARGS,
            )
        filters.append(GlobFilter(list(types)))
    return filters


def _compile(query: GrepQuery) -> re.Pattern[str]:
    flags = re.IGNORECASE if query.ignore_case else 0
    if query.multiline:
        flags |= re.MULTILINE | re.DOTALL
    try:
        return re.compile(query.pattern, flags)
    except re.error as error:
        raise SearchError(f"invalid regex: {error}", SEARCH_INVALID_ARGS) from None


def _matched_lines(
    regex: re.Pattern[str], text: str, lines: list[str], multiline: bool
) -> list[int]:
    if not multiline:
        return [i for i, line in enumerate(lines) if regex.search(line)]
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    hit: set[int] = set()
    for match in regex.finditer(text):
        first = _line_at(starts, match.start())
        last = _line_at(starts, max(match.start(), match.end() - 1))
        hit.update(range(first, min(last, len(lines) - 1) + 1))
    return sorted(hit)


def _line_at(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset) - 1


def _content(
    path: str, lines: list[str], matched: list[int], query: GrepQuery, out: list[str]
) -> None:
    hits = set(matched)
    windows: list[list[int]] = []
    for index in matched:
        low, high = max(0, index - query.before), min(len(lines) - 1, index + query.after)
        if windows and low <= windows[-1][1] + 1:
            windows[-1][1] = max(windows[-1][1], high)
        else:
            windows.append([low, high])
    context = query.before > 0 or query.after > 0
    for low, high in windows:
        if context and out:
            out.append("--")
        for i in range(low, high + 1):
            sep = ":" if i in hits else "-"
            number = f"{i + 1}{sep}" if query.line_numbers else ""
            out.append(f"{path}{sep}{number}{lines[i]}")


def grep_tree(query: GrepQuery, signal: AbortSignal) -> list[str]:
    """ripgrep-shaped output lines for `query`. Raises SearchError, SearchStopped."""
    regex = _compile(query)
    filters = _filters(query)
    out: list[str] = []
    for path in walk_files(query.root, filters, signal):
        _check(signal)
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        if b"\x00" in data[:_SNIFF]:
            continue
        text = data.decode("utf-8", errors="replace")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        matched = _matched_lines(regex, text, lines, query.multiline)
        if not matched:
            continue
        if query.mode == "files_with_matches":
            out.append(path)
        elif query.mode == "count":
            out.append(f"{path}:{len(matched)}")
        else:
            _content(path, lines, matched, query, out)
    return out


def glob_tree(query: GlobQuery, signal: AbortSignal) -> list[str]:
    """Absolute paths of files under `query.root` matching `query.pattern`."""
    return list(walk_files(query.root, [GlobFilter([query.pattern])], signal))
