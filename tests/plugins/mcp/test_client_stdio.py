"""The `mcp` client plugin over stdio against the SDK's own server (a real subprocess)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest

from tether import ToolFailure, ToolSuccess
from tether.kernel import Context
from tether.plugins import mcp as mcp_plugin
from tether.plugins import timeout_policy
from tether.tools import ToolRuntime

from ._support import call, settled, stdio_entry


async def _context(servers: dict[str, Any]) -> Context:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(timeout_policy)
    await ctx.plugin(mcp_plugin, {"servers": servers})
    await settled(ctx)
    return ctx


@pytest.fixture
async def ctx(tmp_path: Path) -> AsyncIterator[Context]:
    ctx = await _context({"box": stdio_entry(tmp_path / "record.jsonl")})
    yield ctx
    await ctx.dispose()


async def test_tools_are_registered_as_mcp_server_tool_with_the_servers_schema(
    ctx: Context,
) -> None:
    assert "mcp__box__echo" in ctx.tools.names()
    schema = ctx.tools.get("mcp__box__add").parameters
    assert schema["properties"] == {
        "a": {"title": "A", "type": "integer"},
        "b": {"title": "B", "type": "integer"},
    }
    assert schema["required"] == ["a", "b"]


async def test_a_call_returns_the_servers_text_and_structured_content(ctx: Context) -> None:
    result = await call(ctx, "mcp__box__add", {"a": 2, "b": 3})
    assert isinstance(result, ToolSuccess)
    assert result.content == [{"type": "text", "text": "5"}]
    assert result.value == {
        "content": [{"type": "text", "text": "5"}],
        "structuredContent": {"result": 5},
    }


async def test_an_is_error_result_stays_a_tool_failure(ctx: Context) -> None:
    result = await call(ctx, "mcp__box__broken", {})
    assert isinstance(result, ToolFailure)
    assert result.code == "MCP_TOOL_ERROR"
    assert result.error.message == "Error executing tool broken: the broken tool broke"


async def test_an_image_maps_to_an_image_block(ctx: Context) -> None:
    result = await call(ctx, "mcp__box__picture", {})
    assert isinstance(result, ToolSuccess)
    [block] = result.content
    assert block["type"] == "image"
    assert block["mime_type"] == "image/png"
    assert str(block["data"]).startswith("iVBORw0KGgo")


async def test_an_embedded_resource_maps_to_a_resource_block(ctx: Context) -> None:
    result = await call(ctx, "mcp__box__document", {})
    assert isinstance(result, ToolSuccess)
    assert list(result.content) == [
        {"type": "text", "text": "see the attachment"},
        {"type": "resource", "uri": "file:///notes.txt", "mime_type": "text/plain", "text": "hi"},
    ]


async def test_tool_timeout_ms_ends_a_slow_call_tool_timeout(tmp_path: Path) -> None:
    ctx = await _context({"box": stdio_entry(tmp_path / "record.jsonl", tool_timeout_ms=600)})
    try:
        assert ctx.tools.get("mcp__box__slow").timeout_ms == 600
        result = await call(ctx, "mcp__box__slow", {"seconds": 30})
        assert isinstance(result, ToolFailure)
        assert result.code == "TOOL_TIMEOUT"
        assert cast(dict[str, Any], result.meta)["mcp"]["cancel"] == "confirmed"
    finally:
        await ctx.dispose()
