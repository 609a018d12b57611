"""The SDK log records tether drops: a closed reader's traceback, a stdout banner's traceback."""

from __future__ import annotations

import logging

import anyio
import pytest

from tether.plugins.mcp.sdklogs import quiet_sdk_logs


def _record(name: str, message: str, error: BaseException | None) -> logging.LogRecord:
    exc_info = None if error is None else (type(error), error, None)
    return logging.LogRecord(name, logging.ERROR, __file__, 1, message, None, exc_info)


@pytest.mark.parametrize(
    "error", [anyio.BrokenResourceError(), anyio.ClosedResourceError(), anyio.EndOfStream()]
)
def test_a_closed_readers_traceback_from_the_http_client_is_dropped(error: Exception) -> None:
    quiet_sdk_logs()
    logger = logging.getLogger("mcp.client.streamable_http")
    assert not logger.filter(_record(logger.name, "Error parsing SSE message", error))


def test_any_other_http_client_error_still_logs() -> None:
    quiet_sdk_logs()
    logger = logging.getLogger("mcp.client.streamable_http")
    record = _record(logger.name, "Error parsing SSE message", ValueError("bad json"))
    assert logger.filter(record)


def test_installing_twice_adds_each_filter_once() -> None:
    quiet_sdk_logs()
    quiet_sdk_logs()
    for name in ("mcp.client.stdio", "mcp.client.streamable_http", "mcp.client.auth.oauth2"):
        assert len(logging.getLogger(name).filters) == 1
