"""Tools that are still arriving: the `tools/settle` event.

A plugin whose tools arrive after its mount — an MCP server connecting in the background —
listens on `tools/settle` (parallel, `async (signal: AbortSignal) -> None`): the listener returns
once its pending tools are registered or will not come (the server failed, or its start-up
budget ran out), and at once when `signal` aborts. Whoever is about to read the tool list awaits
`settle_tools` first: the agent loop before each model request, `tether tools list`, a call of a
name that is not registered (yet). Nothing else waits: a call of a registered tool (`tether
tools call bash`) runs at once while a server is still starting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from ..core.signals import AbortSignal
    from ..kernel import Context

__all__ = ["TOOLS_SETTLE", "settle_tools"]

TOOLS_SETTLE: Final = "tools/settle"


async def settle_tools(ctx: Context, *, signal: AbortSignal) -> None:
    """Wait for the tools still arriving (see the module note); returns when `signal` aborts."""
    await ctx.parallel(TOOLS_SETTLE, signal)
