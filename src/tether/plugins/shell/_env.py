"""The environment a child process starts with.

Owns one rule: start from the parent's environment minus every variable whose name looks like a
credential (`KEY`, `PASSWORD`, `SECRET` or `TOKEN`, case-insensitive), then apply the request's
explicit entries, which always win (a credential-shaped name passed explicitly is kept; a `None`
value removes an inherited variable). The parent's `os.environ` is never modified.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Final

__all__ = ["CREDENTIAL_NAME", "child_environment"]

CREDENTIAL_NAME: Final = re.compile("KEY|PASSWORD|SECRET|TOKEN", re.IGNORECASE)
"""Variable names matching this are not inherited by child processes."""


def _scrub(source: Mapping[str, str]) -> dict[str, str]:
    return {name: value for name, value in source.items() if not CREDENTIAL_NAME.search(name)}


_cached: tuple[dict[bytes, bytes], dict[str, str]] | None = None


def _scrubbed_os_environ() -> dict[str, str]:
    """`_scrub(os.environ)`, recomputed only when the environment changed. Reading `os.environ`
    decodes every entry (tens of µs per spawn); comparing its raw table is a C-level dict
    comparison."""
    global _cached
    raw = getattr(os.environ, "_data", None)
    if not isinstance(raw, dict):
        return _scrub(os.environ)
    cached = _cached
    if cached is not None and cached[0] == raw:
        return cached[1]
    scrubbed = _scrub(os.environ)
    _cached = (dict(raw), scrubbed)
    return scrubbed


def child_environment(
    explicit: Mapping[str, str | None], parent: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The scrubbed parent environment (default `os.environ`) overlaid by `explicit`."""
    env = dict(_scrubbed_os_environ() if parent is None else _scrub(parent))
    for name, value in explicit.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env
