"""What the `mcp` plugin is configured with: one entry per server, in Claude Code's format.

Owns `ServerConfig` (a `.mcp.json` / `mcpServers` entry, read unchanged: `command`/`args`/`env`/
`cwd` for stdio, `type: "http"` + `url`/`headers` for Streamable HTTP, `type: "sdk"` for a Claude
Agent SDK application's in-process server (served over its control channel:
`tether.plugins.mcp.channel`), plus tether's own keys),
`McpConfig` (the plugin config: `servers`, and which `.mcp.json` files to read) and
`load_mcp_json` (one file's `mcpServers` as `ServerConfig`s; a bad file is one clear line).
Imports nothing from the `mcp` SDK.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ...kernel.errors import describe_validation_error
from ..sandbox.policy import SandboxMode, SandboxSettings

__all__ = [
    "DEFAULT_CANCEL_GRACE_MS",
    "McpConfig",
    "McpConfigError",
    "OAuthSettings",
    "ServerConfig",
    "load_mcp_json",
]

DEFAULT_CANCEL_GRACE_MS: Final = 2000.0
_SERVER_NAME: Final = re.compile(r"^[A-Za-z0-9_-]+$")
_ENV_REF: Final = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class McpConfigError(ValueError):
    """A `.mcp.json` or server entry tether cannot use; the message is one line."""


class OAuthSettings(BaseModel):
    """An http server's `oauth` entry: a pre-registered client (else tether registers itself
    dynamically, or uses its client id metadata document's URL), the scopes to ask for, the
    callback port `tether mcp login` listens on (0: one the kernel picks; a pre-registered
    client's redirect URI usually fixes it). Claude Code's camelCase keys are read too."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    client_id: str | None = Field(default=None, alias="clientId")
    client_secret: str | None = Field(default=None, alias="clientSecret")
    scope: str | None = None
    callback_port: int = Field(default=0, ge=0, le=65535, alias="callbackPort")
    token_endpoint_auth_method: (
        Literal["none", "client_secret_basic", "client_secret_post"] | None
    ) = Field(default=None, alias="tokenEndpointAuthMethod")
    client_metadata_url: str | None = Field(default=None, alias="clientMetadataUrl")
    """An HTTPS URL where tether's client metadata document is published (CIMD, SEP-991): used
    as the client id where the authorization server supports it, instead of registering."""


class ServerConfig(BaseModel):
    """One MCP server. Unknown keys are ignored, as Claude Code does, so a `.mcp.json` written
    for it is read unchanged."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    type: Literal["stdio", "http", "streamable-http", "sse", "sdk"] | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] | None = None
    """Sent with every request: a static token goes here (`"Authorization": "Bearer ${TOKEN}"`);
    with an `Authorization` header tether does no OAuth for the server."""
    oauth: OAuthSettings | None = None
    disabled: bool = False
    tool_timeout_ms: float | None = Field(default=None, gt=0)
    """Put on every tool's `timeout_ms`: the timeout policy turns its expiry into TOOL_TIMEOUT."""
    startup_timeout_ms: float = Field(default=10_000.0, gt=0)
    cancel_grace_ms: float = Field(default=DEFAULT_CANCEL_GRACE_MS, ge=0)
    on_unconfirmed_cancel: Literal["keep", "restart"] = "keep"
    progress_timeout_ms: float | None = Field(default=None, gt=0)
    """With it, a call ends MCP_PROGRESS_TIMEOUT after this long without progress or answer."""
    sandbox: SandboxSettings = SandboxSettings(mode=SandboxMode.DANGER_FULL_ACCESS.value)
    """A stdio server is always contained; by default not sandboxed (docs/sandbox.md)."""

    @model_validator(mode="after")
    def _transport(self) -> ServerConfig:
        if self.transport == "stdio" and not self.command:
            raise ValueError('a stdio server needs "command" (or "type": "http" with "url")')
        if self.transport == "http" and not self.url:
            raise ValueError('an http server needs "url"')
        if "env" in self.sandbox.model_fields_set:  # the SDK passes only its own few variables
            raise ValueError(
                'a server gets its "env" and HOME, LOGNAME, PATH, SHELL, TERM, USER; '
                '"sandbox.env" is for the shell\'s commands: put the variables in "env"'
            )
        return self

    @property
    def transport(self) -> Literal["stdio", "http", "sse", "sdk"]:
        if self.type == "sse":
            return "sse"
        if self.type == "sdk":
            return "sdk"
        if self.type in ("http", "streamable-http"):
            return "http"
        if self.type is None and self.command is None and self.url is not None:
            return "http"
        return "stdio"

    def expanded(self) -> ServerConfig:
        """A copy with `${VAR}` / `${VAR:-default}` expanded in command, args, env, url and
        headers (Claude Code's `.mcp.json` expansion); an unset variable without a default is an
        error naming it."""
        return self.model_copy(
            update={
                "command": None if self.command is None else _expand(self.command),
                "args": tuple(_expand(arg) for arg in self.args),
                "env": None if self.env is None else {k: _expand(v) for k, v in self.env.items()},
                "url": None if self.url is None else _expand(self.url),
                "headers": None
                if self.headers is None
                else {k: _expand(v) for k, v in self.headers.items()},
                "oauth": None
                if self.oauth is None
                else self.oauth.model_copy(
                    update={
                        "client_secret": None
                        if self.oauth.client_secret is None
                        else _expand(self.oauth.client_secret)
                    }
                ),
            }
        )


class McpConfig(BaseModel):
    """The plugin config. `servers` wins over a `.mcp.json` server of the same name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: Mapping[str, ServerConfig] = Field(default_factory=dict)
    project_dir: str | None = None
    """Where `.mcp.json` is looked for (the workspace); None reads no `.mcp.json`."""
    mcp_json: tuple[str, ...] = ()
    """More `.mcp.json` files (or files with `mcpServers`) to read, in order."""

    @model_validator(mode="after")
    def _names(self) -> McpConfig:
        for name in self.servers:
            _check_name(name)
        return self

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
    if not _SERVER_NAME.match(name):
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


def _expand(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = os.environ.get(name)
        if value is not None:
            return value
        if default is not None:
            return default
        raise McpConfigError(f"${{{name}}} is not set and has no default (write ${{{name}:-x}})")

    return _ENV_REF.sub(one, text)
