"""The Claude Agent SDK application's in-process MCP servers (`create_sdk_mcp_server`, `@tool`)
as servers of the session (issue 35).

The SDK names them in `--mcp-config` as `{"type": "sdk", "name": ...}` and serves them itself,
over the control channel (`mcp_message`). Owns `SdkServers`: `split` takes them out of the
`--mcp-config` values before the agent boots (the `mcp` plugin reaches the others itself), and
`attach` adds each to the session's `mcp` service once the channel exists, through
`tether.plugins.mcp.channel`; from then on they are MCP servers like the others: their tools
are `mcp__<server>__<tool>`, dispatched through the same pipeline (permission rules, hooks,
the timeout policy, one result), an aborted call cancelled with `notifications/cancelled` over
the channel. Does not own the channel (`tether.cli.stream_input`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from ..kernel import Context

if TYPE_CHECKING:
    from ..plugins.mcp.channel import Send

__all__ = ["SdkServers"]


@dataclass(frozen=True, slots=True)
class SdkServers:
    """The SDK servers `--mcp-config` named, and the values left for the `mcp` plugin."""

    names: tuple[str, ...]
    configs: tuple[str, ...]

    @classmethod
    def split(cls, configs: tuple[str, ...]) -> SdkServers:
        """Take the `"type": "sdk"` servers out of the JSON values of `--mcp-config` (a file,
        or a value that is not JSON, is left as it is: the `mcp` plugin names its error)."""
        names: list[str] = []
        rest: list[str] = []
        for config in configs:
            document: dict[str, object] | None = None
            if config.lstrip().startswith("{"):
                try:
                    parsed = json.loads(config)
                except ValueError:
                    parsed = None
                document = parsed if isinstance(parsed, dict) else None
            servers = None if document is None else document.get("mcpServers")
            if document is None or not isinstance(servers, dict):
                rest.append(config)
                continue
            sdk = [n for n, s in servers.items() if isinstance(s, dict) and s.get("type") == "sdk"]
            names += sdk
            if not sdk:
                rest.append(config)
                continue
            kept = {n: s for n, s in servers.items() if n not in sdk}
            rest.append(json.dumps({**document, "mcpServers": kept}))
        return cls(tuple(names), tuple(rest))

    def attach(self, ctx: Context, send: Send) -> None:
        """Start each server over the channel (`send`: one control request and its answer), in
        the background, on the context's `mcp` service (made here when no other server is
        configured). Raises ValueError for a name another server already has."""
        if not self.names:
            return
        from ..plugins.mcp.channel import channel_transport
        from ..plugins.mcp.client import McpClients
        from ..plugins.mcp.config import McpConfig, ServerConfig

        clients = ctx.get("mcp")
        if not isinstance(clients, McpClients):
            clients = McpClients(ctx, McpConfig())
            ctx.effect(clients.stop)
            ctx.provide("mcp", clients)
        for name in self.names:
            clients.add(name, ServerConfig(type="sdk"), partial(channel_transport, name, send))
