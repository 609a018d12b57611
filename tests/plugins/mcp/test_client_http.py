"""The `mcp` client plugin over Streamable HTTP (the SDK's server in a subprocess, 127.0.0.1)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from tether import AbortController, ToolExecutionInput, ToolFailure
from tether.kernel import Context
from tether.plugins import mcp as mcp_plugin
from tether.tools import ToolRuntime

from ._support import LOADED_MACHINE_MS, TOOLBOX, call, events, settled, wait_for

pytestmark = pytest.mark.timeout(150)


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[Path]:
    """The toolbox over Streamable HTTP; its `start` event names its port."""
    record = tmp_path / "record.jsonl"
    process = subprocess.Popen(
        [sys.executable, TOOLBOX, str(record), "http"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield record
    finally:
        process.terminate()
        process.wait(60)


async def _context(record: Path) -> Context:
    await wait_for(lambda: events(record, "start") != [])
    [start] = events(record, "start")
    url = f"http://127.0.0.1:{start['port']}/mcp"
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    server = {"type": "http", "url": url, "cancel_grace_ms": LOADED_MACHINE_MS}
    await ctx.plugin(mcp_plugin, {"servers": {"web": server}})
    await settled(ctx)
    return ctx


async def test_list_and_call_over_streamable_http(http_server: Path) -> None:
    ctx = await _context(http_server)
    try:
        assert "mcp__web__add" in ctx.tools.names()
        result = await call(ctx, "mcp__web__add", {"a": 20, "b": 22})
        assert result.content == [{"type": "text", "text": "42"}]
    finally:
        await ctx.dispose()


async def test_an_abort_over_streamable_http_is_observed_by_the_server(
    http_server: Path,
) -> None:
    record = http_server
    ctx = await _context(record)
    try:
        controller = AbortController()
        running = asyncio.ensure_future(
            ctx.tools.execute(
                ToolExecutionInput(
                    call_id="c1",
                    name="mcp__web__slow",
                    arguments={"seconds": 30},
                    signal=controller.signal,
                )
            )
        )
        await wait_for(lambda: len(events(record, "call")) == 1)
        controller.abort()
        result = await running
        assert isinstance(result, ToolFailure)
        assert result.code == "ABORTED"
        assert cast(dict[str, Any], result.meta)["mcp"]["cancel"] == "confirmed"
        await wait_for(lambda: len(events(record, "cancelled")) == 1)
    finally:
        await ctx.dispose()


async def test_the_client_introduces_itself_as_tether_with_its_version(http_server: Path) -> None:
    import json

    import tether

    ctx = await _context(http_server)
    try:
        result = await call(ctx, "mcp__web__whoami", {})
        [block] = result.content
        assert json.loads(str(block["text"])) == {"name": "tether", "version": tether.__version__}
    finally:
        await ctx.dispose()
