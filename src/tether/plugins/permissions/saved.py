"""Saving "don't ask again" rules where Claude Code keeps them: `.claude/settings.local.json`.

Owns `save_allow_rules`: add rules to `permissions.allow` of the project's local settings file (the
one Claude Code writes for the same answer, and which the `permissions` plugin reads at every start,
so the rule holds after a restart or `--resume`); `save_rules` and `unsave_rule`, the same for any
kind (`allow`, `ask`, `deny`), which `/permissions add|remove` use. The rest of the file is kept as
it was (other keys, other rules, their order); a rule already there is not added twice. The file is
written whole to a temporary file beside it and renamed over it, so a crash leaves the old file or
the new one, never half of one. A file that exists but cannot be read as a JSON object is not
overwritten: `SettingsNotSaved` says which file and why, and nothing is lost.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from ..hooks.settings import read_settings

__all__ = ["LOCAL_SETTINGS", "SettingsNotSaved", "save_allow_rules", "save_rules", "unsave_rule"]

LOCAL_SETTINGS: Final = Path(".claude") / "settings.local.json"
"""Where, under the workspace, the rules are saved."""


class SettingsNotSaved(Exception):
    """The rules could not be saved; the message names the file and what to do."""


def save_allow_rules(workspace: Path, rules: Sequence[str]) -> Path:
    """Add `rules` to `permissions.allow` in `workspace/.claude/settings.local.json` (created
    when missing) and return its path. Raises `SettingsNotSaved`."""
    return save_rules(workspace, "allow", rules)


def save_rules(workspace: Path, kind: str, rules: Sequence[str]) -> Path:
    """Add `rules` to `permissions.<kind>` (`allow`, `ask` or `deny`) of the local settings
    file and return its path. Raises `SettingsNotSaved`."""

    def add(listed: list[object]) -> None:
        for rule in rules:
            if rule not in listed:
                listed.append(rule)

    return _edit(workspace, kind, add)


def unsave_rule(workspace: Path, kind: str, rule: str) -> Path | None:
    """Take `rule` out of `permissions.<kind>` of the local settings file: its path, or None
    when the rule is not there (nothing is written then). Raises `SettingsNotSaved`."""
    path = workspace / LOCAL_SETTINGS
    if not path.exists():
        return None
    found: list[bool] = []

    def remove(listed: list[object]) -> None:
        while rule in listed:
            listed.remove(rule)
            found.append(True)

    _edit(workspace, kind, remove, write_unchanged=False, changed=found)
    return path if found else None


def _edit(
    workspace: Path,
    kind: str,
    edit: Callable[[list[object]], None],
    *,
    write_unchanged: bool = True,
    changed: list[bool] | None = None,
) -> Path:
    path = workspace / LOCAL_SETTINGS
    document: dict[str, object] = {}
    if path.exists():
        try:
            loaded = read_settings(path)
        except (OSError, ValueError) as exc:
            raise SettingsNotSaved(
                f'cannot read "{path}" to change its rules ({exc}); fix or remove it and try again'
            ) from None
        if not isinstance(loaded, dict):
            raise SettingsNotSaved(f'"{path}" is not a JSON object; fix or remove it')
        document = loaded
    permissions = document.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise SettingsNotSaved(f'"permissions" in "{path}" is not an object; fix it')
    listed = permissions.setdefault(kind, [])
    if not isinstance(listed, list):
        raise SettingsNotSaved(f'"permissions.{kind}" in "{path}" is not a list; fix it')
    edit(listed)
    if not write_unchanged and not changed:
        return path
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".settings.local.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise SettingsNotSaved(f'cannot write "{path}": {exc.strerror or exc}') from None
    return path
