"""The hook bridge's configuration and loading its hook files (`hooks-claude-code`'s `Config`).

Owns `Config` (documented in `tether.plugins.hooks.claude_code`), which files are read (the
configured ones, then the discovered settings files), `load_hook_set` — every file's command
hooks, a file that cannot be used failing the mount in one line, each event tether does not run
named once in a warning line — and `load_settings_env`, the merged settings `env` blocks. Does
not run hooks.
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar

from ...core.timeout import MAX_TIMER_DELAY_MS
from ...kernel.config_models import ConfigValue, fields_given
from ..sandbox.policy import SandboxMode, SandboxSettings
from .names import DEFAULT_TOOL_NAMES
from .settings import claude_settings_paths, load_settings, settings_error

if TYPE_CHECKING:
    from pydantic import AfterValidator

    from .claude_config import ClaudeHookSet

__all__ = ["Config", "hook_files", "load_hook_set", "load_settings_env"]

_log = logging.getLogger("tether.plugins.hooks")


def _timeout(value: float) -> float:
    if not (math.isfinite(value) and 0 < value <= MAX_TIMER_DELAY_MS):
        raise ValueError(
            "hooks-claude-code: default_timeout_ms must be a positive finite number no "
            f"greater than {MAX_TIMER_DELAY_MS}"
        )
    return value


def _no_env_policy(value: SandboxSettings) -> SandboxSettings:
    if "env" in fields_given(value):  # hooks run through the shell, with its policy
        raise ValueError(
            "hooks-claude-code: sandbox.env is not used here; hooks get the shell's "
            "environment policy (tether.yml's sandbox.env) and the settings files' env"
        )
    return value


def _summary(value: int) -> int:
    if value < 1:
        raise ValueError("hooks-claude-code: stderr_summary_max_chars must be a positive integer")
    return value


class Config(ConfigValue):
    """See the module note. Its constructor validates as the mapping path does."""

    __pydantic_config__: ClassVar = {"extra": "forbid", "frozen": True}
    __config_validate__: ClassVar = True

    config_path: str | list[str] | None = None
    discover: bool = True
    project_dir: str | None = None
    plugin_root: str | None = None
    default_timeout_ms: Annotated[float, AfterValidator(_timeout)] = 600_000
    stderr_summary_max_chars: Annotated[int, AfterValidator(_summary)] = 500
    tool_names: dict[str, str] = dict(DEFAULT_TOOL_NAMES)  # noqa: RUF012 (shared, never mutated)
    sandbox: Annotated[SandboxSettings, AfterValidator(_no_env_policy)] = SandboxSettings(
        mode=SandboxMode.DANGER_FULL_ACCESS.value
    )


def _config_paths(config: Config, project_dir: Path, home: Path | None) -> list[tuple[Path, bool]]:
    """(path, required): the configured files, then the discovered ones."""
    explicit = config.config_path
    listed = [explicit] if isinstance(explicit, str) else list(explicit or ())
    paths: list[tuple[Path, bool]] = [(project_dir / p, True) for p in listed]
    if config.discover:
        paths += [(p, False) for p in claude_settings_paths(project_dir, home)]
    return paths


def load_settings_env(
    config: Config, project_dir: Path, home: Path | None = None
) -> dict[str, str]:
    """The merged settings `env` blocks: user, project, local, then configured files."""
    from .environment import settings_env  # the env blocks: when there are files (issue 36)

    paths = _config_paths(config, project_dir, home)
    discovered = [p for p, required in paths if not required]
    configured = [p for p, required in paths if required]
    return settings_env([*reversed(discovered), *configured])


def hook_files(config: Config, project_dir: Path, home: Path | None = None) -> list[Path]:
    """The files `load_hook_set` reads, in order: every configured one (it must be usable) and
    every discovered one that exists, each once. Empty: there are no hooks and no settings
    `env` to load, and the parser is not imported."""
    seen: set[str] = set()
    found: list[Path] = []
    for path, required in _config_paths(config, project_dir, home):
        key = os.path.realpath(path)
        if key in seen or (not required and not path.is_file()):
            continue
        seen.add(key)
        found.append(path)
    return found


def load_hook_set(config: Config, project_dir: Path, home: Path | None = None) -> ClaudeHookSet:
    """Read every configured and discovered file. Raises ConfigError for a file that cannot be
    used (see the module note)."""
    # the parser: when there are files to read (issue 36)
    from .claude_config import (
        ClaudeHookSet,
        HookConfigError,
        parse_claude_hooks,
        unsupported_events,
    )

    hooks = ClaudeHookSet()
    substitutions = {"CLAUDE_PROJECT_DIR": str(project_dir)}
    if config.plugin_root is not None:
        substitutions["CLAUDE_PLUGIN_ROOT"] = config.plugin_root
    warned: set[str] = set()
    for path in hook_files(config, project_dir, home):
        document = load_settings(path)
        try:
            groups = parse_claude_hooks(document, substitutions=substitutions)
        except HookConfigError as exc:
            raise settings_error(path, str(exc)) from None
        hooks.add(str(path), groups)
        for event in unsupported_events(document):
            if event not in warned:
                warned.add(event)
                _log.warning(
                    'hooks-claude-code: "%s" hooks in %s do not run: tether does not support '
                    "the %s event",
                    event,
                    path,
                    event,
                )
    return hooks
