"""Lifecycle of the `mcp` client plugin: boot with a failing server, list_changed, .mcp.json,
dispose stops every server."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from tether import ToolSuccess
from tether.kernel import Context
from tether.plugins import mcp as mcp_plugin
from tether.plugins.mcp.client import McpClients
from tether.tools import ToolRuntime

from ._support import TOOLBOX, call, server_processes, settled, stdio_entry, wait_for

pytestmark = pytest.mark.timeout(150)


async def _context(config: dict[str, Any]) -> Context:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(mcp_plugin, config)
    await settled(ctx)
    return ctx


async def test_a_server_that_fails_to_start_does_not_stop_boot(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = str(tmp_path / "no-such-server")
    ctx = await _context(
        {"servers": {"gone": {"command": missing}, "box": stdio_entry(tmp_path / "r.jsonl")}}
    )
    try:
        clients = cast(McpClients, ctx.get("mcp"))
        views = {view.name: view for view in clients.servers()}
        assert views["gone"].status == "failed"
        assert views["gone"].error == f"command not found: {missing}"
        assert views["box"].status == "connected"
        assert "mcp__box__echo" in ctx.tools.names()
        failed = [r.getMessage() for r in caplog.records if r.name == "tether.mcp"]
        assert failed == [f'mcp server "gone" failed to start: command not found: {missing}']
    finally:
        await ctx.dispose()


async def test_a_server_that_does_not_answer_initialize_in_time_fails_alone(
    tmp_path: Path,
) -> None:
    silent = {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"]}
    silent["startup_timeout_ms"] = 500  # type: ignore[assignment]
    ctx = await _context({"servers": {"silent": silent, "box": stdio_entry(tmp_path / "r.jsonl")}})
    try:
        views = {view.name: view for view in cast(McpClients, ctx.get("mcp")).servers()}
        assert views["silent"].status == "failed"
        assert views["silent"].error == "did not answer initialize within 500 ms"
        assert views["box"].status == "connected"
    finally:
        await ctx.dispose()


async def test_tools_list_changed_updates_the_registry(tmp_path: Path) -> None:
    ctx = await _context({"servers": {"box": stdio_entry(tmp_path / "r.jsonl")}})
    changes: list[str] = []
    ctx.on("tools/change", lambda: changes.append("change"))
    try:
        assert "mcp__box__late" not in ctx.tools.names()
        result = await call(ctx, "mcp__box__grow", {})
        assert isinstance(result, ToolSuccess)
        await wait_for(lambda: "mcp__box__late" in ctx.tools.names())
        assert changes
        late = await call(ctx, "mcp__box__late", {})
        assert late.content == [{"type": "text", "text": "late"}]
    finally:
        await ctx.dispose()


async def test_a_list_changed_notification_from_a_server_before_2026_updates_the_registry(
    tmp_path: Path,
) -> None:
    ctx = await _context({"servers": {"box": stdio_entry(tmp_path / "r.jsonl", legacy=True)}})
    try:
        result = await call(ctx, "mcp__box__grow", {})
        assert isinstance(result, ToolSuccess)
        await wait_for(lambda: "mcp__box__late" in ctx.tools.names())
    finally:
        await ctx.dispose()


async def test_servers_are_read_unchanged_from_the_projects_mcp_json(tmp_path: Path) -> None:
    record = tmp_path / "r.jsonl"
    box = {"command": "${PY}", "args": [TOOLBOX, str(record)], "startup_timeout_ms": 60_000}
    document = {"mcpServers": {"box": box}}
    (tmp_path / ".mcp.json").write_text(json.dumps(document))
    os.environ["PY"] = sys.executable
    try:
        ctx = await _context({"project_dir": str(tmp_path)})
    finally:
        del os.environ["PY"]
    try:
        result = await call(ctx, "mcp__box__echo", {"text": "from .mcp.json"})
        assert result.content == [{"type": "text", "text": "from .mcp.json"}]
    finally:
        await ctx.dispose()


async def test_dispose_stops_every_server_process_group(tmp_path: Path) -> None:
    record = tmp_path / "r.jsonl"
    ctx = await _context({"servers": {"box": stdio_entry(record)}})
    assert len(server_processes(record)) == 3  # bwrap, its init, the server
    await ctx.dispose()
    assert server_processes(record) == []
