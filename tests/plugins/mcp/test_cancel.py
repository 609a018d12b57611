"""Cancellation across the wire: the caller's abort reaches a real MCP server (subprocess)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

from tether import AbortController, ToolExecutionInput, ToolFailure
from tether.kernel import Context
from tether.plugins import mcp as mcp_plugin
from tether.plugins import timeout_policy
from tether.plugins.mcp.client import McpClients
from tether.tools import ToolRuntime

from ._support import (
    LOADED_MACHINE_MS,
    events,
    gone,
    server_process,
    server_processes,
    settled,
    stdio_entry,
    wait_for,
)

pytestmark = pytest.mark.timeout(150)


async def _context(servers: dict[str, Any]) -> Context:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(timeout_policy)
    await ctx.plugin(mcp_plugin, {"servers": servers})
    await settled(ctx)
    return ctx


@pytest.fixture
def record(tmp_path: Path) -> Path:
    return tmp_path / "record.jsonl"


async def _abort_once_called(
    ctx: Context, record: Path, name: str, arguments: dict[str, Any]
) -> ToolFailure:
    controller = AbortController()
    running = asyncio.ensure_future(
        ctx.tools.execute(
            ToolExecutionInput(
                call_id="c1", name=name, arguments=arguments, signal=controller.signal
            )
        )
    )
    await wait_for(lambda: len(events(record, "call")) == 1)
    controller.abort()
    result = await running
    assert isinstance(result, ToolFailure)
    return result


async def test_an_abort_after_the_write_sends_a_cancel_the_server_observes(record: Path) -> None:
    ctx = await _context({"box": stdio_entry(record)})
    try:
        result = await _abort_once_called(ctx, record, "mcp__box__slow", {"seconds": 30})
        assert result.code == "ABORTED"
        meta = cast(dict[str, Any], result.meta)["mcp"]
        assert meta["cancel"] == "confirmed"
        assert meta["server"] == "box"
        [call] = events(record, "call")
        assert call["request_id"] == meta["request_id"]
        await wait_for(lambda: len(events(record, "cancelled")) == 1)
        [seen] = events(record, "cancelled")
        # Seen after it was sent (the server's clock vs the client's send time); how soon is
        # bench/README.md's to measure (typically well under 100 ms), not a loaded machine's.
        assert seen["at"] >= meta["cancel_sent_at"]
        assert events(record, "finished") == []
    finally:
        await ctx.dispose()


async def test_an_abort_before_the_write_is_aborted_before_dispatch_and_sends_nothing(
    record: Path, tmp_path: Path
) -> None:
    gate = tmp_path / "serve"  # the restarted server waits for it: the call cannot be written
    entry = stdio_entry(record, env={"TOOLBOX_RESTART_GATE": str(gate)})
    ctx = await _context({"box": entry})
    try:
        clients = cast(McpClients, ctx.get("mcp"))
        connection = clients.connections["box"]
        server_process(record).kill()
        await wait_for(lambda: connection.status == "reconnecting")
        controller = AbortController()
        running = asyncio.ensure_future(
            ctx.tools.execute(
                ToolExecutionInput(
                    call_id="c1",
                    name="mcp__box__echo",
                    arguments={"text": "x"},
                    signal=controller.signal,
                )
            )
        )
        await wait_for(lambda: len(events(record, "start")) == 2)  # held at the gate
        assert connection.status == "reconnecting"  # the call is waiting for the connection
        controller.abort()
        result = await running
        assert isinstance(result, ToolFailure)
        assert result.code == "ABORTED_BEFORE_DISPATCH"
        gate.touch()
        await wait_for(lambda: connection.status == "connected")
        assert events(record, "call") == []
    finally:
        await ctx.dispose()


async def test_a_server_ignoring_a_cancel_is_restarted_and_its_process_group_is_gone(
    record: Path,
) -> None:
    entry = stdio_entry(record, cancel_grace_ms=500, on_unconfirmed_cancel="restart")
    ctx = await _context({"box": entry})
    try:
        first = server_processes(record)
        result = await _abort_once_called(ctx, record, "mcp__box__stubborn", {"seconds": 60})
        assert result.code == "ABORTED"
        assert cast(dict[str, Any], result.meta)["mcp"]["cancel"] == "unconfirmed"
        await wait_for(lambda: gone(first))
        clients = cast(McpClients, ctx.get("mcp"))
        await wait_for(lambda: clients.connections["box"].status == "connected")
        assert len(events(record, "start")) == 2
    finally:
        await ctx.dispose()


async def test_a_server_killed_mid_call_ends_the_call_connection_lost_and_reconnects(
    record: Path,
) -> None:
    ctx = await _context({"box": stdio_entry(record)})
    try:
        clients = cast(McpClients, ctx.get("mcp"))
        controller = AbortController()
        running = asyncio.ensure_future(
            ctx.tools.execute(
                ToolExecutionInput(
                    call_id="c1",
                    name="mcp__box__slow",
                    arguments={"seconds": 3600},  # it ends with the connection, or never
                    signal=controller.signal,
                )
            )
        )
        await wait_for(lambda: len(events(record, "call")) == 1)
        server_process(record).kill()
        async with asyncio.timeout(LOADED_MACHINE_MS / 1000):  # not the hour the call asked for
            result = await running
        assert isinstance(result, ToolFailure)
        assert result.code == "MCP_CONNECTION_LOST"
        await wait_for(lambda: clients.connections["box"].generation == 2)
        again = await ctx.tools.execute(
            ToolExecutionInput(
                call_id="c2",
                name="mcp__box__echo",
                arguments={"text": "back"},
                signal=controller.signal,
            )
        )
        assert again.content == [{"type": "text", "text": "back"}]
    finally:
        await ctx.dispose()


async def test_progress_keeps_a_call_alive_past_progress_timeout_ms(record: Path) -> None:
    # Progress comes every 50 ms; the timeout is long enough that a process starved of CPU on a
    # loaded machine still hears from the server in time.
    ctx = await _context({"box": stdio_entry(record, progress_timeout_ms=3000)})
    try:
        controller = AbortController()
        result = await ctx.tools.execute(
            ToolExecutionInput(
                call_id="c1",
                name="mcp__box__ticking",
                arguments={"seconds": 4},
                signal=controller.signal,
            )
        )
        assert result.content == [{"type": "text", "text": "ticked"}]
    finally:
        await ctx.dispose()


async def test_no_progress_for_progress_timeout_ms_ends_the_call(record: Path) -> None:
    ctx = await _context({"box": stdio_entry(record, progress_timeout_ms=300)})
    try:
        controller = AbortController()
        result = await ctx.tools.execute(
            ToolExecutionInput(
                call_id="c1",
                name="mcp__box__slow",
                arguments={"seconds": 30},
                signal=controller.signal,
            )
        )
        assert isinstance(result, ToolFailure)
        assert result.code == "MCP_PROGRESS_TIMEOUT"
        assert result.error.message == 'MCP server "box" sent no progress for 300 ms'
        await wait_for(lambda: len(events(record, "cancelled")) == 1)
    finally:
        await ctx.dispose()
