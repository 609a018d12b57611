"""A cancel on each protocol revision and transport: the abort reaches the server's handler, the
call ends `ABORTED` (confirmed) with exactly one result. On 2026-07-28 the cancel is confirmed
with `server/discover` (that revision removed `ping`), and over HTTP it is the request's own
stream closing (that revision has no client notifications over HTTP)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest

from tether import AbortController, ToolExecutionInput, ToolFailure
from tether.kernel import Context
from tether.plugins import mcp as mcp_plugin
from tether.tools import ToolRuntime
from tether.tools.execution import ToolExecution
from tether.tools.results import ToolExecutionResult

from ._support import events, http_entry, http_toolbox, revision, settled, stdio_entry, wait_for

pytestmark = pytest.mark.timeout(150)

REVISIONS = [
    pytest.param("stdio", False, "2026-07-28", id="stdio-2026-07-28"),
    pytest.param("stdio", True, "2025-11-25", id="stdio-2025-11-25"),
    pytest.param("http", False, "2026-07-28", id="http-2026-07-28"),
    pytest.param("http", True, "2025-11-25", id="http-2025-11-25"),
]


@contextlib.asynccontextmanager
async def _connected(record: Path, transport: str, legacy: bool) -> AsyncIterator[Context]:
    with contextlib.ExitStack() as stack:
        if transport == "http":
            stack.enter_context(http_toolbox(record, legacy=legacy))
            entry = await http_entry(record)
        else:
            entry = stdio_entry(record, legacy=legacy)
        ctx = Context()
        await ctx.plugin(ToolRuntime)
        await ctx.plugin(mcp_plugin, {"servers": {"box": entry}})
        try:
            await settled(ctx)
            yield ctx
        finally:
            await ctx.dispose()


async def _aborted_mid_call(ctx: Context, record: Path) -> ToolExecutionResult:
    """Call the server's `slow` tool, abort it once the server's handler runs, and return the
    call's result."""
    controller = AbortController()
    running = asyncio.ensure_future(
        ctx.tools.execute(
            ToolExecutionInput(
                call_id="c1",
                name="mcp__box__slow",
                arguments={"seconds": 3600},
                signal=controller.signal,
            )
        )
    )
    await wait_for(lambda: len(events(record, "call")) == 1)
    controller.abort()
    return await running


@pytest.mark.parametrize(("transport", "legacy", "version"), REVISIONS)
async def test_a_cancel_reaches_the_handler_and_the_call_ends_aborted_with_one_result(
    tmp_path: Path, transport: str, legacy: bool, version: str
) -> None:
    record = tmp_path / "record.jsonl"
    async with _connected(record, transport, legacy) as ctx:
        assert revision(ctx, "box") == version
        results: list[ToolExecutionResult] = []

        def published(exec: ToolExecution, result: ToolExecutionResult) -> None:
            if exec.call_id == "c1":
                results.append(result)

        ctx.on("tools/result", published)
        result = await _aborted_mid_call(ctx, record)
        await wait_for(lambda: len(events(record, "cancelled")) == 1)
        [seen] = events(record, "cancelled")
        [called] = events(record, "call")
        assert seen["request_id"] == called["request_id"]
        assert isinstance(result, ToolFailure)
        assert result.code == "ABORTED"
        meta = cast(dict[str, Any], result.meta)["mcp"]
        assert meta["cancel"] == "confirmed"
        assert results == [result]
        assert events(record, "finished") == []


async def test_over_http_on_2026_07_28_a_cancel_is_the_stream_closing_then_a_discover(
    tmp_path: Path,
) -> None:
    record = tmp_path / "record.jsonl"
    async with _connected(record, "http", False) as ctx:
        await _aborted_mid_call(ctx, record)
    methods = [post["method"] for post in events(record, "post")]
    methods.remove("subscriptions/listen")  # tool-list changes come on it, at any point
    assert methods == ["server/discover", "tools/list", "tools/call", "server/discover"]


async def test_over_http_on_2025_11_25_a_cancel_is_a_notification_then_a_ping(
    tmp_path: Path,
) -> None:
    record = tmp_path / "record.jsonl"
    async with _connected(record, "http", True) as ctx:
        await _aborted_mid_call(ctx, record)
    methods = [post["method"] for post in events(record, "post")]
    posts = events(record, "post")
    after = [(p["method"], p["cancels"]) for p in posts][methods.index("tools/call") :]
    # (a 2025 SDK server answers the cancelled call with -32800 before the ping's answer, which
    # ends the wait; the ping is then abandoned, with a cancel of its own)
    assert after[:3] == [
        ("tools/call", None),
        ("notifications/cancelled", "tether-1"),
        ("ping", None),
    ]
