"""A real MCP server (the `mcp` SDK's `MCPServer`) for the plugin's tests, run as a subprocess.

Usage: `python toolbox.py RECORD [stdio|http]`. Every event the tests assert on is appended
to RECORD as one JSON line, stamped with this process's own wall clock: `start` (pid, pgid; over
HTTP also the `port` of 127.0.0.1 it listens on, picked by the kernel and bound before `start`),
`call` (tool, request id), `cancelled` (tool, request id, `at`), `finished` (tool). With
`TOOLBOX_RESTART_GATE=PATH` in the environment, a restart (a start after the first one in RECORD)
records its `start`, then waits until PATH exists before it serves.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import EmbeddedResource, TextResourceContents

RECORD = sys.argv[1]
server = MCPServer("toolbox")


def record(event: str, **fields: Any) -> None:
    with open(RECORD, "a", encoding="utf-8") as out:
        out.write(json.dumps({"event": event, "at": time.time(), **fields}) + "\n")
        out.flush()


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Sleep, observing cancellation (records when it saw it)."""
    record("call", tool="slow", request_id=ctx.request_id)
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        record("cancelled", tool="slow", request_id=ctx.request_id)
        raise
    record("finished", tool="slow")
    return "slept"


@server.tool()
async def stubborn(seconds: float, ctx: Context) -> str:
    """Ignore cancellation: keep working and reporting progress for `seconds`."""
    record("call", tool="stubborn", request_id=ctx.request_id)
    with anyio.CancelScope(shield=True):
        deadline = time.monotonic() + seconds
        step = 0
        while time.monotonic() < deadline:
            step += 1
            await ctx.report_progress(step)
            await anyio.sleep(0.05)
    record("finished", tool="stubborn")
    return "done anyway"


@server.tool()
async def ticking(seconds: float, ctx: Context) -> str:
    """Report progress every 50 ms for `seconds`, then answer."""
    deadline = time.monotonic() + seconds
    step = 0
    while time.monotonic() < deadline:
        step += 1
        await ctx.report_progress(step)
        await anyio.sleep(0.05)
    return "ticked"


@server.tool()
def broken() -> str:
    """Always fail (the SDK reports an isError result)."""
    raise ToolError("the broken tool broke")


@server.tool()
def picture() -> Image:
    """Return a tiny PNG."""
    return Image(data=base64.b64decode(PNG), format="png")


@server.tool()
def document() -> list[Any]:
    """Return some text and an embedded text resource."""
    return [
        "see the attachment",
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(
                uri="file:///notes.txt", mime_type="text/plain", text="hi"
            ),
        ),
    ]


def late() -> str:
    """A tool that appears only after `grow` ran."""
    return "late"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the `late` tool and tell the client its tool list changed."""
    server.add_tool(late, name="late")
    await ctx.session.send_tool_list_changed()
    return "grown"


@server.tool()
def whoami(ctx: Context) -> str:
    """How the client introduced itself: its clientInfo as JSON."""
    params = ctx.session.client_params
    info = None if params is None else params.client_info.model_dump(exclude_none=True)
    return json.dumps(info)


BOOKING = {
    "type": "object",
    "properties": {
        "guests": {"type": "integer", "description": "How many guests", "default": 2},
        "note": {"type": "string", "title": "A wish", "default": "window seat"},
        "terrace": {"type": "boolean"},
    },
    "required": ["guests"],
}


@server.tool()
async def book(ctx: Context) -> str:
    """Ask the user (elicitation); answers with the action and the content exactly as sent."""
    result = await ctx.session.elicit_form("How many guests?", BOOKING, ctx.request_id)
    return json.dumps({"action": result.action, "content": result.content})


PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9a"
    "wAAAABJRU5ErkJggg=="
)


def hold_a_restart() -> None:
    gate = os.environ.get("TOOLBOX_RESTART_GATE")
    with open(RECORD, encoding="utf-8") as log:
        starts = sum(json.loads(line)["event"] == "start" for line in log if line.strip())
    if gate is not None and starts > 1:
        while not os.path.exists(gate):
            time.sleep(0.01)


def serve_http() -> None:
    """Listen on a port the kernel picks (no other process can take it first), say which in the
    `start` event, then serve Streamable HTTP at /mcp."""
    import socket

    import uvicorn

    listening = socket.create_server(("127.0.0.1", 0))
    record("start", pid=os.getpid(), pgid=os.getpgid(0), port=listening.getsockname()[1])
    app = server.streamable_http_app()
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listening])


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "http":
        serve_http()
    else:
        record("start", pid=os.getpid(), pgid=os.getpgid(0))
        hold_a_restart()
        server.run("stdio")
