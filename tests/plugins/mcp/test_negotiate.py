"""Which protocol revision tether speaks with a server: 2026-07-28 where the server has it (over
`server/discover`), the `initialize` handshake's revision otherwise — against the SDK's server in
a subprocess (stdio, and Streamable HTTP on 127.0.0.1), and against scripted peers for the
answers no real server here gives."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from tether.kernel import Context
from tether.plugins import mcp as mcp_plugin
from tether.plugins.mcp.negotiate import negotiate
from tether.tools import ToolRuntime

from ._support import call, events, http_entry, http_toolbox, revision, settled, stdio_entry

pytestmark = pytest.mark.timeout(150)


async def _context(entry: dict[str, Any]) -> Context:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(mcp_plugin, {"servers": {"box": entry}})
    await settled(ctx)
    return ctx


async def test_a_stdio_server_that_speaks_2026_07_28_is_spoken_to_in_it(tmp_path: Path) -> None:
    ctx = await _context(stdio_entry(tmp_path / "record.jsonl"))
    try:
        assert revision(ctx, "box") == "2026-07-28"
        result = await call(ctx, "mcp__box__add", {"a": 1, "b": 2})
        assert result.content == [{"type": "text", "text": "3"}]
    finally:
        await ctx.dispose()


async def test_a_stdio_server_from_before_2026_is_spoken_to_in_2025_11_25(tmp_path: Path) -> None:
    ctx = await _context(stdio_entry(tmp_path / "record.jsonl", legacy=True))
    try:
        assert revision(ctx, "box") == "2025-11-25"
        result = await call(ctx, "mcp__box__add", {"a": 1, "b": 2})
        assert result.content == [{"type": "text", "text": "3"}]
    finally:
        await ctx.dispose()


async def test_every_request_over_http_on_2026_07_28_carries_the_version_and_method_headers(
    tmp_path: Path,
) -> None:
    record = tmp_path / "record.jsonl"
    with http_toolbox(record):
        ctx = await _context(await http_entry(record))
        try:
            assert revision(ctx, "box") == "2026-07-28"
            await call(ctx, "mcp__box__add", {"a": 1, "b": 2})
        finally:
            await ctx.dispose()
    posts = events(record, "post")
    methods = [p["method"] for p in posts if p["method"] != "subscriptions/listen"]
    assert methods == ["server/discover", "tools/list", "tools/call"]
    assert len(posts) == 4  # and one subscriptions/listen, for tool-list changes
    for post in posts:
        assert post["mcp-protocol-version"] == "2026-07-28"
        assert post["mcp-method"] == post["method"]
    [called] = [p for p in posts if p["method"] == "tools/call"]
    assert called["mcp-name"] == "add"


async def test_an_http_server_from_before_2026_is_spoken_to_in_2025_11_25(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    with http_toolbox(record, legacy=True):
        ctx = await _context(await http_entry(record))
        try:
            assert revision(ctx, "box") == "2025-11-25"
            result = await call(ctx, "mcp__box__add", {"a": 1, "b": 2})
            assert result.content == [{"type": "text", "text": "3"}]
        finally:
            await ctx.dispose()
    posts = events(record, "post")
    assert [p["method"] for p in posts[:2]] == ["server/discover", "initialize"]
    assert posts[-1]["method"] == "tools/call"
    assert posts[-1]["mcp-protocol-version"] == "2025-11-25"


# -- scripted peers: one answer each ----------------------------------------------------------

Answer = Callable[[types.JSONRPCRequest], dict[str, Any] | None]
"""A reply's `result` or `error` (None: no reply at all)."""


async def _negotiated(
    answer: Answer, probe_s: float = 60.0
) -> tuple[str | MCPError | None, list[str]]:
    """Run `negotiate` against a peer that answers each request with `answer(request)`; the
    revision settled (or the error it raised) and the methods the peer was sent."""
    outcome: str | MCPError | None = None
    to_client, client_read = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    client_write, from_client = anyio.create_memory_object_stream[SessionMessage](16)
    methods: list[str] = []

    async def peer() -> None:
        async for item in from_client:
            message = item.message
            if isinstance(message, types.JSONRPCRequest):
                methods.append(message.method)
                answered = answer(message)
                if answered is None:
                    continue
                reply = {"jsonrpc": "2.0", "id": message.id, **answered}
                parsed = types.jsonrpc_message_adapter.validate_python(reply)
                await to_client.send(SessionMessage(parsed))

    async with (
        to_client,
        client_read,
        client_write,
        from_client,
        anyio.create_task_group() as tasks,
    ):
        tasks.start_soon(peer)
        try:
            async with ClientSession(client_read, client_write) as session:
                try:
                    await negotiate(session, probe_s=probe_s)
                    outcome = session.protocol_version
                except MCPError as exc:
                    outcome = exc
        finally:
            tasks.cancel_scope.cancel()
    return outcome, methods


def _initialized(version: str) -> dict[str, Any]:
    return {
        "result": {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "peer", "version": "1"},
        }
    }


def _unsupported(*versions: str) -> dict[str, Any]:
    error = {"code": types.UNSUPPORTED_PROTOCOL_VERSION, "message": "Unsupported protocol version"}
    return {"error": {**error, "data": {"supported": list(versions), "requested": "2026-07-28"}}}


async def test_a_server_answering_method_not_found_to_discover_is_initialized() -> None:
    def answer(request: types.JSONRPCRequest) -> dict[str, Any]:
        if request.method == "server/discover":
            return {"error": {"code": types.METHOD_NOT_FOUND, "message": "Method not found"}}
        return _initialized("2025-06-18")

    assert await _negotiated(answer) == ("2025-06-18", ["server/discover", "initialize"])


async def test_a_server_naming_only_handshake_revisions_to_discover_is_initialized() -> None:
    def answer(request: types.JSONRPCRequest) -> dict[str, Any]:
        if request.method == "server/discover":
            return _unsupported("2025-06-18", "2025-11-25")
        return _initialized("2025-11-25")

    assert await _negotiated(answer) == ("2025-11-25", ["server/discover", "initialize"])


async def test_a_server_speaking_only_a_2026_revision_tether_lacks_fails_the_negotiation() -> None:
    def answer(request: types.JSONRPCRequest) -> dict[str, Any]:
        return _unsupported("2027-03-01")

    failure, methods = await _negotiated(answer)
    assert isinstance(failure, MCPError)
    assert failure.code == types.UNSUPPORTED_PROTOCOL_VERSION
    assert methods == ["server/discover"]


async def test_a_discover_result_naming_no_2026_revision_falls_back_to_initialize() -> None:
    def answer(request: types.JSONRPCRequest) -> dict[str, Any]:
        if request.method == "server/discover":
            caps = {"tools": {}}
            return {"result": {"supportedVersions": ["2025-11-25"], "capabilities": caps}}
        return _initialized("2025-11-25")

    assert await _negotiated(answer) == ("2025-11-25", ["server/discover", "initialize"])


async def test_an_initialize_refused_in_favour_of_2026_is_discovered_again() -> None:
    discovers: list[str] = []

    def answer(request: types.JSONRPCRequest) -> dict[str, Any]:
        if request.method == "server/discover":
            discovers.append(json.dumps(request.params))
            if len(discovers) == 1:
                return {"error": {"code": -32001, "message": "Request timed out"}}
            caps = {"tools": {}}
            return {"result": {"supportedVersions": ["2026-07-28"], "capabilities": caps}}
        return _unsupported("2026-07-28")

    assert await _negotiated(answer) == (
        "2026-07-28",
        ["server/discover", "initialize", "server/discover"],
    )


async def test_a_server_that_never_answers_discover_is_initialized_after_the_probe() -> None:
    def answer(request: types.JSONRPCRequest) -> dict[str, Any] | None:
        if request.method == "server/discover":
            return None  # a 2025 server dropping a request it does not know
        return _initialized("2025-11-25")

    outcome = await _negotiated(answer, probe_s=0.2)
    assert outcome == ("2025-11-25", ["server/discover", "initialize"])
