"""`tether mcp serve --http` on the wire: what it says and what it leaves unsaid (raw HTTP)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

import tether

from ._serve import serving_http
from ._support import events, wait_for

pytestmark = pytest.mark.timeout(300)

_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _messages(body: str) -> list[dict[str, Any]]:
    return [
        json.loads(line[5:].strip())
        for line in body.splitlines()
        if line.startswith("data:") and line[5:].strip()
    ]


async def _initialize(http: httpx2.AsyncClient, url: str) -> tuple[dict[str, str], Any]:
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    response = await http.post(url, json=request, headers=_HEADERS)
    [answer] = _messages(response.text)
    headers = {
        **_HEADERS,
        "Mcp-Session-Id": response.headers["mcp-session-id"],
        "MCP-Protocol-Version": answer["result"]["protocolVersion"],
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await http.post(url, json=initialized, headers=headers)
    return headers, answer["result"]


async def test_the_server_introduces_itself_as_tether_with_its_version(tmp_path: Path) -> None:
    async with serving_http(tmp_path) as url, httpx2.AsyncClient(timeout=120) as http:
        _, result = await _initialize(http, url)
        assert result["serverInfo"]["name"] == "tether"
        assert result["serverInfo"]["version"] == tether.__version__


async def test_a_cancelled_request_gets_no_reply_and_its_stream_ends(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    async with serving_http(tmp_path) as url, httpx2.AsyncClient(timeout=120) as http:
        headers, _ = await _initialize(http, url)
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "sleepy", "arguments": {"seconds": 60}},
        }
        async with http.stream("POST", url, json=call, headers=headers) as response:
            await wait_for(lambda: len(events(record, "started")) == 1)
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 7, "reason": "test"},
            }
            accepted = await http.post(url, json=cancel, headers=headers)
            assert accepted.status_code == 202
            body = (await response.aread()).decode()
        assert [m for m in _messages(body) if m.get("id") == 7] == []
        await wait_for(lambda: len(events(record, "drained")) == 1)
