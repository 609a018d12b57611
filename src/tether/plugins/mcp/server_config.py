"""One MCP server's entry: `ServerConfig` (a `.mcp.json` / `mcpServers` entry, read unchanged:
`command`/`args`/`env`/`cwd` for stdio, `type: "http"` + `url`/`headers` for Streamable HTTP,
`type: "sdk"` for a Claude Agent SDK application's in-process server, plus tether's own keys) and
its `oauth` entry (`OAuthSettings`). Pydantic models: this module is imported when a server is
configured (`tether.plugins.mcp.config` names them lazily), so a boot without MCP servers does not
import pydantic. Does not own the plugin config or reading `.mcp.json` (`config.py`). Imports
nothing from the `mcp` SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ...kernel.config_models import fields_given
from ..sandbox.policy import SandboxMode, SandboxSettings
from .config import DEFAULT_CANCEL_GRACE_MS, expand_variables

__all__ = ["OAuthSettings", "ServerConfig"]


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
        if "env" in fields_given(self.sandbox):  # the SDK passes only its own few variables
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
                "command": None if self.command is None else expand_variables(self.command),
                "args": tuple(expand_variables(arg) for arg in self.args),
                "env": None
                if self.env is None
                else {k: expand_variables(v) for k, v in self.env.items()},
                "url": None if self.url is None else expand_variables(self.url),
                "headers": None
                if self.headers is None
                else {k: expand_variables(v) for k, v in self.headers.items()},
                "oauth": None
                if self.oauth is None
                else self.oauth.model_copy(
                    update={
                        "client_secret": None
                        if self.oauth.client_secret is None
                        else expand_variables(self.oauth.client_secret)
                    }
                ),
            }
        )
