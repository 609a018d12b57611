"""Claude Code's session options on tether's machinery: deny rules, the tool set, an explicit
settings file, added directories and MCP config files (`--disallowedTools`, `--tools`,
`--settings`, `--add-dir`, `--mcp-config`, `--strict-mcp-config`; the Claude Agent SDK passes
the same).

Owns `ClaudeOptions` (the data), `Scratch` (where a JSON string given for `--settings` or
`--mcp-config` is written as a file, removed with the agent), `added_directories` (`--add-dir`
and the settings files' `permissions.additionalDirectories`), `builtin_overrides` (what the
options change in the built-in plugins' config before the boot: the `fs` plugin reaches the added
directories, the hook bridge reads the explicit settings file, the `mcp` plugin the config files)
and `apply_after_boot` (what is applied to the booted services, so that it fails closed when a
configuration replaced the plugin: deny rules, the tool set and the settings file's rules and
`defaultMode`).

An added directory grants what the workspace grants, as in Claude Code: the file tools read it,
and it is one of the sandbox's writable roots (`tether.agent.boot.start`'s `added_dirs`), so
`write`/`edit` and commands may write there — except its protected paths (`.git`, `.claude/`,
`tether.yml`, ...), read-only as in every writable root, and nothing in `read-only`.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..kernel import ConfigError, Context
from ..plugins.hooks.names import ToolNames
from ..plugins.hooks.settings import claude_settings_paths, load_settings, settings_error
from ..plugins.permissions import Permissions

__all__ = [
    "ClaudeOptions",
    "Scratch",
    "added_directories",
    "apply_after_boot",
    "builtin_overrides",
]


@dataclass(frozen=True, slots=True)
class ClaudeOptions:
    """See the module note. `tools` None: every tool; a tuple: only those (Claude Code or
    tether names), the others denied. `settings` and each `mcp_config` are a file path or a
    JSON object as a string."""

    disallowed_tools: tuple[str, ...] = ()
    tools: tuple[str, ...] | None = None
    settings: str | None = None
    add_dirs: tuple[Path, ...] = ()
    mcp_config: tuple[str, ...] = ()
    strict_mcp_config: bool = False


class Scratch:
    """A private directory for the options given as JSON strings; `close` removes it."""

    def __init__(self) -> None:
        self._dir: tempfile.TemporaryDirectory[str] | None = None

    def file_for(self, value: str, what: str) -> Path:
        """`value` itself when it is not JSON text (a path), else a file holding it. Raises
        ValueError for JSON that is not an object."""
        if not value.lstrip().startswith("{"):
            return Path(value).expanduser()
        try:
            document = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"{what}: not valid JSON ({exc})") from None
        if not isinstance(document, dict):
            raise ValueError(f"{what}: not a JSON object")
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="tether-options-")
        fd, name = tempfile.mkstemp(suffix=".json", dir=self._dir.name)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump(document, file)
        return Path(name)

    def close(self) -> None:
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None


def _additional_directories(paths: list[Path], cwd: Path) -> list[str]:
    """`permissions.additionalDirectories` of the settings files that exist, made absolute
    (relative to the workspace, `~` expanded). Raises ConfigError for a malformed entry."""
    found: list[str] = []
    for path in paths:
        if not path.exists():
            continue
        section = load_settings(path).get("permissions")
        entries = section.get("additionalDirectories") if isinstance(section, dict) else None
        if entries is None:
            continue
        if not isinstance(entries, list) or not all(isinstance(e, str) and e for e in entries):
            raise settings_error(
                path, '"permissions.additionalDirectories" is not a list of directories'
            )
        found += [str((cwd / Path(entry).expanduser()).resolve()) for entry in entries]
    return found


def added_directories(
    options: ClaudeOptions, cwd: Path, settings_file: Path | None
) -> tuple[str, ...]:
    """The real paths of `--add-dir` and of the settings files' (the explicit one included)
    `permissions.additionalDirectories`, each once. Raises ConfigError for an `--add-dir` that
    is not a directory or a settings file that cannot be used."""
    settings = claude_settings_paths(cwd)
    if settings_file is not None:
        if not settings_file.is_file():
            raise ConfigError(f"--settings: {settings_file} is not a file")
        settings.append(settings_file)
    added = [str((cwd / d).resolve()) for d in options.add_dirs]
    for directory in added:
        if not os.path.isdir(directory):
            raise ConfigError(f"--add-dir: {directory} is not a directory")
    added += _additional_directories(settings, cwd)
    return tuple(dict.fromkeys(added))


def builtin_overrides(
    options: ClaudeOptions,
    settings_file: Path | None,
    mcp_files: list[Path],
    directories: tuple[str, ...],
) -> dict[str, dict[str, object]]:
    """Config for the built-in plugins (lists extend the built-in's, see `tether.agent.boot`);
    `directories` are `added_directories`."""
    overrides: dict[str, dict[str, object]] = {}
    if directories:
        overrides["fs"] = {"directories": list(directories)}
    if settings_file is not None:
        overrides["hooks-claude-code"] = {"config_path": [str(settings_file)]}
    if mcp_files or options.strict_mcp_config:
        mcp: dict[str, object] = {"mcp_json": [str(path) for path in mcp_files]}
        if options.strict_mcp_config:
            mcp["project_dir"] = None
        overrides["mcp"] = mcp
    return overrides


def apply_after_boot(ctx: Context, options: ClaudeOptions, settings_file: Path | None) -> None:
    """Deny rules, the tool set and the explicit settings file, on the booted `permissions`
    service. Raises ValueError (one line) for a bad rule or when the configuration has no
    `permissions` plugin; ConfigError for a settings file that cannot be used."""
    wanted = bool(options.disallowed_tools) or options.tools is not None or settings_file
    if not wanted:
        return
    permissions = ctx.get("permissions")
    if not isinstance(permissions, Permissions):
        raise ValueError(
            "--disallowedTools, --tools and --settings need the permissions plugin, and the "
            "configuration does not mount it"
        )
    for rule in options.disallowed_tools:
        try:
            permissions.deny(rule)
        except ValueError as exc:
            raise ValueError(f"--disallowedTools: {exc}") from None
    if options.tools is not None:
        _only_tools(ctx, permissions, options.tools)
    if settings_file is not None:
        permissions.import_settings(settings_file)


def _only_tools(ctx: Context, permissions: Permissions, tools: tuple[str, ...]) -> None:
    names: ToolNames = permissions.policy.names
    kept = {names.tether_name(name) for name in tools} | set(tools)
    registered = ctx.tools.names()
    unknown = sorted(name for name in tools if names.tether_name(name) not in registered)
    if unknown:
        raise ValueError(
            f'--tools: no tool named "{unknown[0]}" (the tools: {", ".join(registered)})'
        )
    for name in registered:
        if name not in kept:
            permissions.deny(name)
