"""Helpers for the MCP tests: the toolbox server's command line and its record file."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from tether import AbortController, ToolExecutionInput, ToolExecutionResult
from tether.kernel import Context

SERVERS = Path(__file__).parent / "servers"
TOOLBOX = str(SERVERS / "toolbox.py")


def stdio_entry(record: Path, **extra: Any) -> dict[str, Any]:
    """A `.mcp.json`-style entry for the toolbox over stdio (a start-up bound that holds on a
    loaded machine)."""
    return {
        "command": sys.executable,
        "args": [TOOLBOX, str(record)],
        "startup_timeout_ms": 60_000,
        **extra,
    }


def server_processes(record: Path) -> list[psutil.Process]:
    """The live processes of the toolbox server that writes `record` (bwrap's included), as the
    host sees them: a contained server's own pid (in `record`) is its namespace's."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.status() != psutil.STATUS_ZOMBIE and str(record) in process.cmdline():
                found.append(process)
        except psutil.Error:
            continue
    return found


def server_process(record: Path) -> psutil.Process:
    """The toolbox's Python process itself (not the bwrap around it)."""
    (found,) = [p for p in server_processes(record) if p.cmdline()[1:2] == [TOOLBOX]]
    return found


def events(record: Path, kind: str | None = None) -> list[dict[str, Any]]:
    """The toolbox's recorded events (optionally only one kind)."""
    if not record.exists():
        return []
    lines = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    return [line for line in lines if kind is None or line["event"] == kind]


async def wait_for(predicate: Any, timeout: float = 60.0) -> None:
    """Poll `predicate()` until it is true (a generous backstop, not a timing assert)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.02)


async def call(
    ctx: Context, name: str, arguments: dict[str, Any], controller: AbortController | None = None
) -> ToolExecutionResult:
    controller = controller or AbortController()
    return await ctx.tools.execute(
        ToolExecutionInput(call_id="c1", name=name, arguments=arguments, signal=controller.signal)
    )
