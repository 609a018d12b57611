"""A 2026-07-28 server's tool-list changes, followed through `subscriptions/listen`.

Owns `follow_tool_changes(server, session, changed)`. Before 2026 a server sends
`notifications/tools/list_changed` on its own (the connection's message handler sees it); on
2026-07-28 a client must ask for change events with a `subscriptions/listen` request whose
response is the stream (SEP-2575). This opens one, for tool-list changes only, with the SDK's
public `mcp.client.subscriptions.listen`, when the session speaks 2026-07-28 and the server
advertises `tools.listChanged`; each event calls `changed()`. It returns when there is nothing
to follow, when the server closes the stream, or (one log line) when the stream is refused or
lost; the connection cancels it when the session ends. Imports the `mcp` SDK: load it lazily.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from mcp.client.session import ClientSession
from mcp.client.subscriptions import SubscriptionLost, ToolsListChanged, listen
from mcp.shared.exceptions import MCPError

from .negotiate import is_modern

__all__ = ["follow_tool_changes"]

_log = logging.getLogger("tether.mcp")


async def follow_tool_changes(
    server: str, session: ClientSession, changed: Callable[[], None]
) -> None:
    """Call `changed()` for each tool-list change `session`'s server announces (see above)."""
    capabilities = session.server_capabilities
    tools = None if capabilities is None else capabilities.tools
    if not is_modern(session) or tools is None or not tools.list_changed:
        return
    try:
        async with listen(session, tools_list_changed=True) as events:
            async for event in events:
                if isinstance(event, ToolsListChanged):
                    changed()
    except (MCPError, SubscriptionLost, TimeoutError) as exc:
        _log.warning(
            'mcp server "%s": no tool-list changes will be seen (subscriptions/listen: %s)',
            server,
            exc,
        )
