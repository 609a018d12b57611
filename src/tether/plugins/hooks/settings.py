"""Claude Code settings files: where they are and how to read one.

Owns the default search list, in the order they are read — the project's
`.claude/settings.json`, its `.claude/settings.local.json`, then the user's
`~/.claude/settings.json` — with duplicates (the same file reached twice, e.g. when the project
is the home directory) dropped, and `read_settings`, which parses one file as JSON (a document
nested too deeply for the decoder is a `ValueError` like any other malformed file, not a
`RecursionError`). Both the hook bridge (`hooks`) and the permission rules (`permissions`) read
these files.

A settings file that exists but cannot be used fails closed: `load_settings` and
`settings_error` make the one-line `ConfigError` that stops the boot, naming the file and the
problem — tether does not run without permission rules or hooks it was given and cannot read:

    <path>: not valid JSON (Expecting ',' delimiter: line 1 column 41 (char 40)); fix the file
    or move it away (tether does not run without the permission rules and hooks it may hold)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...kernel import ConfigError

__all__ = ["claude_settings_paths", "load_settings", "read_settings", "settings_error"]


def claude_settings_paths(project_dir: Path, home: Path | None = None) -> list[Path]:
    """The default settings files for `project_dir` (existing or not), duplicates dropped."""
    user_home = Path.home() if home is None else home
    candidates = [
        project_dir / ".claude" / "settings.json",
        project_dir / ".claude" / "settings.local.json",
        user_home / ".claude" / "settings.json",
    ]
    seen: set[str] = set()
    paths: list[Path] = []
    for path in candidates:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            paths.append(path)
    return paths


def read_settings(path: Path) -> object:
    """The parsed JSON document. Raises OSError (unreadable) or ValueError (not JSON, or nested
    too deeply to decode)."""
    text = path.read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except RecursionError:  # 3.11's decoder; 3.12+ may decode it and is caught below
        raise ValueError(_TOO_DEEP) from None
    if _depth(document) > MAX_SETTINGS_DEPTH:
        raise ValueError(_TOO_DEEP)
    return document


def settings_error(path: Path, problem: str) -> ConfigError:
    """The boot-stopping error for a settings file that cannot be used (module note)."""
    return ConfigError(
        f"{path}: {problem}; fix the file or move it away (tether does not run without the "
        "permission rules and hooks it may hold)"
    )


def load_settings(path: Path) -> dict[str, object]:
    """The settings object in `path`. Raises ConfigError (`settings_error`) when the file cannot
    be read, is not JSON, or is not a JSON object."""
    try:
        document = read_settings(path)
    except OSError as exc:
        raise settings_error(path, f"cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise settings_error(path, f"not valid JSON ({exc})") from None
    if not isinstance(document, dict):
        raise settings_error(path, "not a JSON object")
    return document


MAX_SETTINGS_DEPTH = 100
"""Nesting a settings file may have (the same on every Python, whatever its decoder allows)."""

_TOO_DEEP = "JSON nested too deeply to read; simplify the file"


def _depth(document: object) -> int:
    """How deeply containers nest in `document` (iteratively: no recursion limit applies)."""
    deepest = 0
    stack: list[tuple[object, int]] = [(document, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            children: list[object] = list(value.values())
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, level)
        if level > MAX_SETTINGS_DEPTH:
            return level
        stack.extend((child, level + 1) for child in children)
    return deepest
