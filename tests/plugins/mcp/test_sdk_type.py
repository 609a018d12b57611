"""A `"type": "sdk"` server outside a Claude Agent SDK session: only the application that made it
serves it, so its start fails naming that (tether's other servers still start)."""

from __future__ import annotations

from tether.plugins.mcp.config import ServerConfig
from tether.plugins.mcp.connection import ServerConnection


async def test_an_sdk_server_without_its_application_fails_to_start_naming_why() -> None:
    connection = ServerConnection("calc", ServerConfig(type="sdk"), lambda _: None)

    started = await connection.start()

    assert (started, connection.status) == (False, "failed")
    assert connection.error == (
        'an in-process SDK MCP server ("type": "sdk") is served only by the Claude Agent SDK '
        "application that started tether (--input-format stream-json)"
    )
    await connection.stop()
