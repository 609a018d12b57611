"""MCP stdio servers run contained (issue 24 §1): a server's children end with it.

Contract: a server is spawned in its own PID namespace that ends when the server exits, when it
is stopped and when tether dies. So a child of the server that closed its stdio does not outlive
it, and a child that holds the server's stdout open keeps neither stopping nor a failed start
waiting for it: the SDK reads end of file as soon as the server is gone.

Each child is `sleep 60.<9 random digits>`, found on the host by its exact argv.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, cast

import pytest

from tether.kernel import Context
from tether.plugins import mcp as mcp_plugin
from tether.plugins.mcp.client import McpClients
from tether.tools import ToolRuntime

from ..shell._support import marker, sleeping
from ._support import TOOLBOX, settled, wait_for

pytestmark = pytest.mark.timeout(150)


async def _context(servers: dict[str, Any]) -> Context:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(mcp_plugin, {"servers": servers})
    await settled(ctx)  # servers start in the background
    return ctx


def server(script: str, *, startup_timeout_ms: float = 60_000) -> dict[str, Any]:
    return {"command": "bash", "args": ["-c", script], "startup_timeout_ms": startup_timeout_ms}


def toolbox(record: Path) -> str:
    return f"exec {sys.executable} {TOOLBOX} {record}"


async def test_a_child_that_closed_its_stdio_ends_when_the_server_is_stopped(
    tmp_path: Path,
) -> None:
    duration = marker()
    script = f"setsid -f sleep {duration} < /dev/null > /dev/null 2>&1; {toolbox(tmp_path / 'r')}"
    ctx = await _context({"box": server(script)})
    clients = cast(McpClients, ctx.get("mcp"))
    assert clients.connections["box"].status == "connected"
    await wait_for(lambda: len(sleeping(duration)) == 1)

    await ctx.dispose()

    # the kernel ends it with the server's namespace; stopping a server does not yet wait for the
    # namespace's init (bash commands do), so it may take a moment longer on a loaded machine
    await wait_for(lambda: sleeping(duration) == [])


async def test_a_child_holding_the_servers_stdout_does_not_hold_up_stopping_it(
    tmp_path: Path,
) -> None:
    duration = marker()
    ctx = await _context({"box": server(f"sleep {duration} & {toolbox(tmp_path / 'r')}")})
    await wait_for(lambda: len(sleeping(duration)) == 1)
    began = time.monotonic()

    await ctx.dispose()

    assert sleeping(duration) == []
    assert time.monotonic() - began < 30  # the child would hold stdout for 60 s


async def test_a_server_that_fails_at_start_is_failed_at_once_despite_a_child_on_its_stdout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    duration = marker()
    began = time.monotonic()

    ctx = await _context({"broken": server(f"sleep {duration} & echo broken >&2; exit 1")})
    try:
        clients = cast(McpClients, ctx.get("mcp"))
        assert clients.connections["broken"].status == "failed"
        assert time.monotonic() - began < 30  # not when the child lets go of stdout (60 s)
        assert sleeping(duration) == []
    finally:
        await ctx.dispose()
