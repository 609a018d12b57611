"""The `mcp` SDK's log records that tether reports itself, or that carry no news: filtered out.

Owns `quiet_sdk_logs`, which installs (once) two filters on the SDK's client loggers:

- stdio: the SDK logs a full traceback for each stdout line that is not JSON-RPC; the connection
  reports such a line itself, in one line naming the server (`ServerConnection._noise`);
- Streamable HTTP: when a session closes while a response stream still delivers (an aborted call's
  stream, at dispose or reconnect), the SDK logs "Error parsing SSE message" with a
  `BrokenResourceError`/`ClosedResourceError` traceback: the reader is gone, nothing was lost;
- OAuth: the SDK logs "OAuth flow error" with a traceback when tether stops a flow that needs a
  person (`oauth.LoginNeeded`); the server's status says `run tether mcp login NAME` instead.

Any other record passes. Imports nothing from the `mcp` SDK (the loggers are named).
"""

from __future__ import annotations

import logging
from typing import Final

import anyio

__all__ = ["quiet_sdk_logs"]

_SDK_PARSE_FAILURE: Final = "Failed to parse JSONRPC message from server"
_CLOSED: Final = (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream)


class _DropParseFailures(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != _SDK_PARSE_FAILURE


class _DropClosedStreams(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, _CLOSED)


class _DropLoginNeeded(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return type(error).__name__ != "LoginNeeded"


def quiet_sdk_logs() -> None:
    """Install the filters on `mcp.client.stdio` and `mcp.client.streamable_http` (idempotent)."""
    for name, kind in (
        ("mcp.client.stdio", _DropParseFailures),
        ("mcp.client.streamable_http", _DropClosedStreams),
        ("mcp.client.auth.oauth2", _DropLoginNeeded),
    ):
        logger = logging.getLogger(name)
        if not any(isinstance(f, kind) for f in logger.filters):
            logger.addFilter(kind())
