"""The `mcp` client plugin over Streamable HTTP (the SDK's server in a subprocess, 127.0.0.1)."""

from __future__ import annotations

import asyncio
import socket
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

from ._support import TOOLBOX, call, events, settled, wait_for

pytestmark = pytest.mark.timeout(150)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _accepting(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    record = tmp_path / "record.jsonl"
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, TOOLBOX, str(record), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"http://127.0.0.1:{port}/mcp", record
    finally:
        process.terminate()
        process.wait(10)


async def _context(url: str) -> Context:
    port = int(url.split(":")[2].split("/", maxsplit=1)[0])
    await wait_for(lambda: _accepting(port), timeout=60)
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(mcp_plugin, {"servers": {"web": {"type": "http", "url": url}}})
    await settled(ctx)
    return ctx


async def test_list_and_call_over_streamable_http(http_server: tuple[str, Path]) -> None:
    url, _ = http_server
    ctx = await _context(url)
    try:
        assert "mcp__web__add" in ctx.tools.names()
        result = await call(ctx, "mcp__web__add", {"a": 20, "b": 22})
        assert result.content == [{"type": "text", "text": "42"}]
    finally:
        await ctx.dispose()


async def test_an_abort_over_streamable_http_is_observed_by_the_server(
    http_server: tuple[str, Path],
) -> None:
    url, record = http_server
    ctx = await _context(url)
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
