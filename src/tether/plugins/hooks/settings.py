"""Claude Code settings files: where they are and how to read one.

Owns the default search list, in the order they are read — the project's
`.claude/settings.json`, its `.claude/settings.local.json`, then the user's
`~/.claude/settings.json` — with duplicates (the same file reached twice, e.g. when the project
is the home directory) dropped, and `read_settings`, which parses one file as JSON (a document
nested too deeply for the decoder is a `ValueError` like any other malformed file, not a
`RecursionError`). Both the hook
bridge (`hooks`) and the permission rules (`permissions`) read these files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["claude_settings_paths", "read_settings"]


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
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read; simplify the file") from None
