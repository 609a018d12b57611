"""`tether mcp serve`'s logging capability, driven by the `mcp` SDK's own client over stdio."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ._serve import serve_args
from ._support import wait_for

pytestmark = pytest.mark.timeout(300)


@asynccontextmanager
async def _session(
    tmp_path: Path, received: list[types.LoggingMessageNotificationParams]
) -> AsyncIterator[ClientSession]:
    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    args, env = serve_args(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(tmp_path))
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, logging_callback=on_log) as session,
    ):
        yield session


async def _set_level(session: ClientSession, level: types.LoggingLevel) -> None:
    request = types.SetLevelRequest(params=types.SetLevelRequestParams(level=level))
    await session.send_request(request, types.EmptyResult)


async def test_the_server_advertises_logging_and_not_completions(tmp_path: Path) -> None:
    async with _session(tmp_path, []) as session:
        result = await session.initialize()
        assert result.capabilities.logging is not None
        assert result.capabilities.completions is None


async def test_records_at_or_above_the_level_arrive_as_log_notifications(tmp_path: Path) -> None:
    received: list[types.LoggingMessageNotificationParams] = []
    async with _session(tmp_path, received) as session:
        await session.initialize()
        await _set_level(session, "info")
        await session.call_tool("shout", {"level": "DEBUG", "text": "too quiet"})
        await session.call_tool("shout", {"level": "INFO", "text": "heard"})
        await session.call_tool("shout", {"level": "ERROR", "text": "loud"})
        await wait_for(lambda: len(received) >= 2)
        mine = [(r.level, r.data) for r in received if r.logger == "tether.serve-tools"]
        assert mine == [("info", "heard"), ("error", "loud")]


async def test_no_log_notification_before_set_level(tmp_path: Path) -> None:
    received: list[types.LoggingMessageNotificationParams] = []
    async with _session(tmp_path, received) as session:
        await session.initialize()
        await session.call_tool("shout", {"level": "ERROR", "text": "unheard"})
        await _set_level(session, "error")
        await session.call_tool("shout", {"level": "ERROR", "text": "heard"})
        await wait_for(lambda: len(received) >= 1)
        assert [r.data for r in received] == ["heard"]
