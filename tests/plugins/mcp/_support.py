"""Helpers for the MCP tests: the toolbox server's command line and its record file."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import psutil

from tether import AbortController, AbortSignal, ToolExecutionInput, ToolExecutionResult
from tether.kernel import Context
from tether.tools.arrivals import settle_tools

from ...patience import PATIENCE_S

SERVERS = Path(__file__).parent / "servers"
TOOLBOX = str(SERVERS / "toolbox.py")


LOADED_MACHINE_MS: Final = PATIENCE_S * 1000
"""The start-up bound and the cancel grace of the tests' servers: both end as soon as the server
answers, so only a hang waits this long — not a server slowed down by a loaded machine."""


def stdio_entry(record: Path, *, legacy: bool = False, **extra: Any) -> dict[str, Any]:
    """A `.mcp.json`-style entry for the toolbox over stdio, with the bounds a loaded machine
    needs (`extra` overrides them); `legacy`: the toolbox as a server from before 2026-07-28."""
    return {
        "command": sys.executable,
        "args": [TOOLBOX, str(record), *(["stdio", "legacy"] if legacy else [])],
        "startup_timeout_ms": LOADED_MACHINE_MS,
        "cancel_grace_ms": LOADED_MACHINE_MS,
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


def gone(processes: list[psutil.Process]) -> bool:
    """Whether none of `processes` still runs (a zombie has ended)."""
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                return False
        except psutil.Error:
            continue
    return True


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


async def wait_for(predicate: Any, timeout: float = PATIENCE_S) -> None:
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


async def settled(ctx: Context) -> None:
    """Wait until every configured server started or failed (they start in the background)."""
    await settle_tools(ctx, signal=AbortSignal.never())


@contextlib.contextmanager
def http_toolbox(record: Path, *, legacy: bool = False) -> Iterator[None]:
    """The toolbox over Streamable HTTP on 127.0.0.1 (its `start` event names the port);
    `legacy`: as a server from before 2026-07-28."""
    process = subprocess.Popen(
        [sys.executable, TOOLBOX, str(record), "http", *(["legacy"] if legacy else [])],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        process.terminate()
        process.wait(60)


async def http_entry(record: Path) -> dict[str, Any]:
    """The `.mcp.json`-style entry of the HTTP toolbox writing `record`, once it listens."""
    await wait_for(lambda: events(record, "start") != [])
    [start] = events(record, "start")
    return {
        "type": "http",
        "url": f"http://127.0.0.1:{start['port']}/mcp",
        "startup_timeout_ms": LOADED_MACHINE_MS,
        "cancel_grace_ms": LOADED_MACHINE_MS,
    }


def revision(ctx: Context, server: str) -> str | None:
    """The protocol revision `server`'s session speaks (None: not connected)."""
    session = ctx.get("mcp").connections[server].session  # type: ignore[attr-defined]
    return None if session is None else str(session.protocol_version)
