"""Hook matchers: which hooks of a config group select a query (a tool name, a session source).

Owns `matches(pattern, query, mode)` and `matcher_diagnostic(pattern, mode)` (spec §5.2):

    None, "" or "*"                  match everything
    claude-code, only [A-Za-z0-9_|]  a literal alternation: split on "|", exact equality
    claude-code, anything else       an unanchored regex (`re.search`)
    codex                            always an unanchored regex

An invalid regex never raises at runtime: it matches nothing, and the first time a pattern is
seen to be invalid it is logged once, at WARNING, as `invalid <mode> regex matcher "<pattern>"`
(`matcher_diagnostic` returns the same text for config parsers, which may reject the config).
Compiled patterns are cached per (mode, pattern).
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Literal, TypeAlias

__all__ = ["MatcherMode", "matcher_diagnostic", "matches"]

MatcherMode: TypeAlias = Literal["claude-code", "codex"]

_log = logging.getLogger("tether.plugins.hooks")


@functools.cache
def _literal() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z0-9_|]+")


@functools.lru_cache(maxsize=1024)
def _compile(pattern: str, mode: MatcherMode) -> frozenset[str] | re.Pattern[str] | None:
    """A literal alternation (a set of names), a compiled regex, or None when invalid."""
    if mode == "claude-code" and _literal().fullmatch(pattern):
        return frozenset(pattern.split("|"))
    try:
        return re.compile(pattern)
    except re.error:
        _log.warning("%s", _invalid(pattern, mode))
        return None


def _invalid(pattern: str, mode: MatcherMode) -> str:
    return f'invalid {mode} regex matcher "{pattern}"'


def matches(pattern: str | None, query: str, mode: MatcherMode = "claude-code") -> bool:
    """Whether `pattern` selects `query`. Never raises for a bad pattern (it matches nothing)."""
    if pattern is None or pattern in ("", "*"):
        return True
    compiled = _compile(pattern, mode)
    if compiled is None:
        return False
    if isinstance(compiled, frozenset):
        return query in compiled
    return compiled.search(query) is not None


def matcher_diagnostic(pattern: str | None, mode: MatcherMode = "claude-code") -> str | None:
    """`invalid <mode> regex matcher "<pattern>"` when `pattern` cannot be compiled, else None."""
    if pattern is None or pattern in ("", "*"):
        return None
    if mode == "claude-code" and _literal().fullmatch(pattern):
        return None
    try:
        re.compile(pattern)
    except re.error:
        return _invalid(pattern, mode)
    return None
