"""MCP both ways (issue 15): configured servers' tools through tether's pipeline, and tether's
tools served over MCP. Mount as plugin `tether.plugins.mcp` (dotted path) with
`config: {servers: {...}, project_dir: ..., mcp_json: [...]}`; see `docs/mcp.md`. With no server
configured it does nothing (no `mcp` service is provided).

This module is the plugin (`name`, `inject`, `Config`, `apply`) and imports nothing from the `mcp`
SDK: `apply` loads the client lazily, so tether without the `mcp` extra imports and boots, and
mounting this plugin then fails with one line naming the extra.

Modules: `config` (server entries, `.mcp.json`), `names` (`mcp__<server>__<tool>`), `content`
(content blocks), `errors` (codes), `wire` (the SDK seams), `calls` (one call and its cancel),
`connection` (one server's lifecycle), `client` (the registry side), `serve` (server mode).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ...core.lazy import lazy_names
from ...kernel import Context
from .config import McpConfig

if TYPE_CHECKING:
    from .client import McpClients
    from .server_config import ServerConfig

__all__ = ["Config", "McpConfig", "ServerConfig", "apply", "inject", "name"]

name: Final = "mcp"
inject: Final = ("tools",)
Config = McpConfig


async def apply(ctx: Context, config: McpConfig) -> None:
    """Start every configured server (in parallel), register their tools, provide `mcp`, and
    stop them all when the plugin is disposed."""
    if not config.all_servers():
        return  # nothing to start: the plugin costs nothing (and needs no SDK)
    try:
        from .client import McpClients
    except ImportError as exc:
        raise RuntimeError(
            f"MCP servers are configured but the mcp SDK cannot be imported ({exc});"
            ' install the optional extra: pip install "tether[mcp]"'
        ) from None

    clients: McpClients = McpClients(ctx, config)
    ctx.effect(clients.stop)
    await clients.start()
    ctx.provide("mcp", clients)


__getattr__, __dir__ = lazy_names(globals(), {"ServerConfig": ".server_config"})
"""`ServerConfig`, imported at first use (a pydantic model: only a configured server needs it)."""
