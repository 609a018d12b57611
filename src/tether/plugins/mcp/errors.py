"""The `mcp` plugin's coded errors, as tool results show them.

MCP_CONNECTION_LOST      the server's connection ended while the call was in flight
MCP_SERVER_UNAVAILABLE   the server is not connected (failed to start, or stopped)
MCP_TOOL_ERROR           the server answered `isError: true` (its text is the message)
MCP_ERROR                the server answered with a JSON-RPC error
MCP_PROGRESS_TIMEOUT     no progress or answer within the server's `progress_timeout_ms`
ABORTED_BEFORE_DISPATCH  the caller aborted before the request was written (`NotSent`)
"""

from __future__ import annotations

from typing import Final

from ...core.errors import HarnessError
from ...tools.results import TOOL_ABORTED_BEFORE_DISPATCH

__all__ = [
    "MCP_CONNECTION_LOST",
    "MCP_ERROR",
    "MCP_PROGRESS_TIMEOUT",
    "MCP_SERVER_UNAVAILABLE",
    "MCP_TOOL_ERROR",
    "McpError",
    "NotSent",
]

MCP_CONNECTION_LOST: Final = "MCP_CONNECTION_LOST"
MCP_SERVER_UNAVAILABLE: Final = "MCP_SERVER_UNAVAILABLE"
MCP_TOOL_ERROR: Final = "MCP_TOOL_ERROR"
MCP_ERROR: Final = "MCP_ERROR"
MCP_PROGRESS_TIMEOUT: Final = "MCP_PROGRESS_TIMEOUT"


class McpError(HarnessError):
    """A call to an MCP server that failed; `code` is one of the table above."""


class NotSent(HarnessError):
    """The caller aborted before the `tools/call` request was written: nothing was sent, so the
    result is the registry's own `ABORTED_BEFORE_DISPATCH` record."""

    name = "AbortError"

    def __init__(self) -> None:
        super().__init__("tool call aborted before dispatch", TOOL_ABORTED_BEFORE_DISPATCH)
