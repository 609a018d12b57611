"""MCP both ways (issue 15): configured servers' tools through tether's pipeline, and tether's
tools served over MCP. Mount as plugin `tether.plugins.mcp` (dotted path) with
`config: {servers: {...}, project_dir: ..., mcp_json: [...]}`; see `docs/mcp.md`.

This module is the plugin (`name`, `inject`, `Config`, `apply`) and imports nothing from the `mcp`
SDK: `apply` loads the client lazily, so tether without the `mcp` extra imports and boots, and
mounting this plugin then fails with one line naming the extra.

Modules: `config` (server entries, `.mcp.json`), `names` (`mcp__<server>__<tool>`), `content`
(content blocks), `errors` (codes), `wire` (the SDK seams), `calls` (one call and its cancel),
`connection` (one server's lifecycle), `client` (the registry side), `serve` (server mode).
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Final

from ...kernel import Context
from .config import McpConfig, ServerConfig

if TYPE_CHECKING:
    from .client import McpClients

__all__ = ["Config", "McpConfig", "ServerConfig", "apply", "inject", "name"]

name: Final = "mcp"
inject: Final = ("tools",)
Config = McpConfig


async def apply(ctx: Context, config: McpConfig) -> None:
    """Start every configured server (in parallel), register their tools, provide `mcp`, and
    stop them all when the plugin is disposed."""
    if importlib.util.find_spec("mcp") is None:
        raise RuntimeError('the "mcp" plugin needs the optional extra: pip install "tether[mcp]"')
    from .client import McpClients

    clients: McpClients = McpClients(ctx, config)
    ctx.effect(clients.stop)
    await clients.start()
    ctx.provide("mcp", clients)
