"""`tether mcp serve` on protocol revision 2026-07-28, driven by the `mcp` SDK's own `Client`
(`mode="auto"`: `server/discover` first) over stdio and Streamable HTTP (127.0.0.1)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from ._serve import serve_args, serving_http
from ._support import events, wait_for

pytestmark = pytest.mark.timeout(300)


def _log(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "log.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@asynccontextmanager
async def _client(tmp_path: Path, transport: str) -> AsyncIterator[Client]:
    if transport == "http":
        async with serving_http(tmp_path) as url, Client(url) as client:
            yield client
        return
    args, env = serve_args(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(tmp_path))
    async with Client(params) as client:
        yield client


TRANSPORTS = [pytest.param("stdio", id="stdio"), pytest.param("http", id="http")]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_sdk_client_speaks_2026_07_28_with_tether_and_calls_a_tool(
    tmp_path: Path, transport: str
) -> None:
    async with _client(tmp_path, transport) as client:
        assert client.session.protocol_version == "2026-07-28"
        listing = await client.list_tools()
        assert sorted(tool.name for tool in listing.tools) == ["asky", "read", "shout", "sleepy"]
        result = await client.call_tool("sleepy", {"seconds": 0.01})
        assert result.is_error is False
        assert [block.model_dump(exclude_none=True) for block in result.content] == [
            {"type": "text", "text": "rested"}
        ]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_2026_cancel_aborts_the_bodys_signal_and_one_result_is_logged(
    tmp_path: Path, transport: str
) -> None:
    record = tmp_path / "record.jsonl"
    async with _client(tmp_path, transport) as client:
        async with anyio.create_task_group() as group:

            async def call() -> None:
                await client.call_tool("sleepy", {"seconds": 3600})

            group.start_soon(call)
            await wait_for(lambda: len(events(record, "started")) == 1)
            group.cancel_scope.cancel()  # stdio: notifications/cancelled; HTTP: the POST closes
        await wait_for(lambda: len(events(record, "drained")) == 1)
        await wait_for(lambda: len(_log(tmp_path)) == 1)
        [entry] = _log(tmp_path)
        [started] = events(record, "started")
        assert entry["call_id"] == started["call_id"]
        assert entry["result"]["error"]["info"]["code"] == "ABORTED"
        assert len(events(record, "aborted")) == 1
        still = await client.call_tool("sleepy", {"seconds": 0.01})  # the server goes on
        assert still.is_error is False


async def test_an_ask_from_a_2026_client_gets_the_non_interactive_answer(tmp_path: Path) -> None:
    asked: list[str] = []

    async def elicit(context: object, params: Any) -> Any:
        asked.append(params.message)
        raise AssertionError("a 2026 client is not sent elicitation/create")

    args, env = serve_args(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(tmp_path))
    async with Client(params, elicitation_callback=elicit) as client:
        assert client.session.protocol_version == "2026-07-28"
        result = await client.call_tool("asky", {})
    assert result.is_error is True
    text = result.content[0].model_dump()["text"]
    assert text == 'Error: tool "asky" requires approval, but no approval channel is available'
    assert asked == []
