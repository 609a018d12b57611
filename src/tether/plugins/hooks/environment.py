"""The environment Claude Code settings give commands: the settings `env` block and the
`CLAUDE_ENV_FILE` a `SessionStart` hook writes.

Owns `settings_env` — the `env` objects of the settings files, merged in Claude Code's precedence
(the user's `~/.claude/settings.json`, then the project's `.claude/settings.json`, then its
`.claude/settings.local.json`, then explicitly configured files; later ones win). Values must be
strings (numbers and booleans are written as JSON writes them); anything else is logged and
skipped. An unreadable file contributes nothing here (the hook loader logs it).

And `ENV_FILE_SCRIPT` / `env_file_changes`: after the `SessionStart` hooks ran, the file is sourced
once by bash (`set -a`, so plain assignments count too) between two `env -0` dumps; the variables
it set, changed or unset become the overlay applied to every later bash command of the session.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from .settings import read_settings

__all__ = ["ENV_FILE_SCRIPT", "env_file_changes", "settings_env"]

_log = logging.getLogger("tether.plugins.hooks")

_SEPARATOR: Final = "\x01tether-env-file\x01"
ENV_FILE_SCRIPT: Final = (
    'env -0; printf "\\001tether-env-file\\001"; set -a; '
    '. "$CLAUDE_ENV_FILE" >/dev/null 2>&1 </dev/null; env -0'
)
"""Prints the environment, the separator, then the environment after sourcing the file."""

_SHELL_OWNED: Final = frozenset({"_", "SHLVL", "PWD", "OLDPWD"})


def _value(path: Path, name: str, value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    _log.warning('hooks-claude-code: settings "%s": env.%s must be a string; ignored', path, name)
    return None


def settings_env(paths: Sequence[Path]) -> dict[str, str]:
    """The merged `env` blocks of `paths` (lowest precedence first)."""
    merged: dict[str, str] = {}
    for path in paths:
        if not path.is_file():
            continue
        try:
            document = read_settings(path)
        except (OSError, ValueError):
            continue
        block = document.get("env") if isinstance(document, dict) else None
        if block is None:
            continue
        if not isinstance(block, dict):
            _log.warning('hooks-claude-code: settings "%s": env must be an object; ignored', path)
            continue
        for name, value in block.items():
            text = _value(path, name, value)
            if text is not None:
                merged[str(name)] = text
    return merged


def _parse(dump: str) -> dict[str, str]:
    pairs = (entry.partition("=") for entry in dump.split("\0") if "=" in entry)
    return {name: value for name, _, value in pairs if name}


def env_file_changes(stdout: str) -> Mapping[str, str | None] | None:
    """The variables the sourced file set (a value) or unset (None), from `ENV_FILE_SCRIPT`'s
    output; None when the output is not that script's."""
    before, found, after = stdout.partition(_SEPARATOR)
    if not found:
        return None
    old, new = _parse(before), _parse(after)
    changes: dict[str, str | None] = {
        name: value
        for name, value in new.items()
        if name not in _SHELL_OWNED and old.get(name) != value
    }
    changes.update({name: None for name in old if name not in new and name not in _SHELL_OWNED})
    return changes
