"""What the `mcp` plugin is configured with: one entry per server, in Claude Code's format.

Owns `McpConfig` (the plugin config: `servers`, and which `.mcp.json` files to read; a
`ConfigValue`, so a boot without MCP servers imports no pydantic) and `load_mcp_json` (one file's
`mcpServers` as `ServerConfig`s; a bad file is one clear line). `ServerConfig` (a `.mcp.json` /
`mcpServers` entry; an SDK application's in-process server is served over its control channel:
`tether.plugins.mcp.channel`) and `OAuthSettings` are pydantic models in `server_config.py`, named
here lazily (PEP 562). Imports nothing from the `mcp` SDK.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Final

from ...core.lazy import lazy_names
from ...kernel.config_models import ConfigValue
from ...kernel.errors import describe_validation_error

if TYPE_CHECKING:
    from .server_config import OAuthSettings, ServerConfig

__all__ = [
    "DEFAULT_CANCEL_GRACE_MS",
    "McpConfig",
    "McpConfigError",
    "OAuthSettings",
    "ServerConfig",
    "expand_variables",
    "load_mcp_json",
]

DEFAULT_CANCEL_GRACE_MS: Final = 2000.0


@functools.cache
def _server_name() -> re.Pattern[str]:
    """What a server name may be (compiled when a name is first checked: a boot without
    servers checks none)."""
    return re.compile(r"^[A-Za-z0-9_-]+$")


@functools.cache
def _env_ref() -> re.Pattern[str]:
    """`${VAR}` / `${VAR:-default}` (compiled at the first expansion)."""
    return re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class McpConfigError(ValueError):
    """A `.mcp.json` or server entry tether cannot use; the message is one line."""


def _names(config: McpConfig) -> None:
    for name in config.servers:
        _check_name(name)


class McpConfig(ConfigValue):
    """The plugin config. `servers` wins over a `.mcp.json` server of the same name. Its
    constructor validates as the mapping path does."""

    __pydantic_config__: ClassVar = {"extra": "forbid", "frozen": True}
    __config_check__: ClassVar = staticmethod(_names)
    __config_validate__: ClassVar = True

    servers: Mapping[str, ServerConfig] = {}  # a shared default: never mutated
    project_dir: str | None = None
    """Where `.mcp.json` is looked for (the workspace); None reads no `.mcp.json`."""
    mcp_json: tuple[str, ...] = ()
    """More `.mcp.json` files (or files with `mcpServers`) to read, in order."""

    def all_servers(self) -> dict[str, ServerConfig]:
        """Every configured server: the `.mcp.json` files in order, then `servers`."""
        found: dict[str, ServerConfig] = {}
        files = [Path(path) for path in self.mcp_json]
        if self.project_dir is not None:
            project_file = Path(self.project_dir) / ".mcp.json"
            if project_file.is_file():
                files.insert(0, project_file)
        for path in files:
            found.update(load_mcp_json(path))
        found.update(self.servers)
        return {name: server for name, server in found.items() if not server.disabled}


def _check_name(name: str) -> None:
    if not _server_name().match(name):
        raise ValueError(
            f'server name "{name}" must use only letters, digits, "_" and "-"'
            " (it becomes part of the tool names mcp__<server>__<tool>)"
        )


def load_mcp_json(path: Path) -> dict[str, ServerConfig]:
    """The `mcpServers` of one file; an empty file has none (a sandbox's placeholder for a
    missing `.mcp.json` is one: `tether.plugins.sandbox.protected`). Raises `McpConfigError`
    naming the file and the entry."""
    try:
        text = path.read_text(encoding="utf-8")
        if not text.strip():
            return {}
        document = json.loads(text)
    except OSError as exc:
        raise McpConfigError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise McpConfigError(f"{path}: not JSON: {exc.msg} at line {exc.lineno}") from None
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        raise McpConfigError(f'{path}: needs an object "mcpServers" mapping names to servers')
    from pydantic import ValidationError

    from .server_config import ServerConfig

    out: dict[str, ServerConfig] = {}
    for name, entry in servers.items():
        try:
            _check_name(name)
            out[name] = ServerConfig.model_validate(entry)
        except ValidationError as exc:
            where = f"mcpServers.{name}"
            raise McpConfigError(f"{path}: {describe_validation_error(exc, root=where)}") from None
        except ValueError as exc:
            raise McpConfigError(f"{path}: mcpServers: {exc}") from None
    return out


def expand_variables(text: str) -> str:
    """`text` with `${VAR}` / `${VAR:-default}` expanded from the environment (Claude Code's
    `.mcp.json` expansion). Raises McpConfigError naming an unset variable without a default."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = os.environ.get(name)
        if value is not None:
            return value
        if default is not None:
            return default
        raise McpConfigError(f"${{{name}}} is not set and has no default (write ${{{name}:-x}})")

    return _env_ref().sub(one, text)


__getattr__, __dir__ = lazy_names(
    globals(), {"ServerConfig": ".server_config", "OAuthSettings": ".server_config"}
)
"""`ServerConfig` and `OAuthSettings`, imported at first use (they import pydantic)."""
