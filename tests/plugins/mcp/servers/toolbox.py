"""A real MCP server (the `mcp` SDK's `MCPServer`) for the plugin's tests, run as a subprocess.

Usage: `python toolbox.py RECORD [stdio|http] [legacy]`. The SDK's server speaks every revision
(2026-07-28 through `server/discover`, the older ones through `initialize`); with `legacy` it is
a server from before 2026: a `server/discover` is answered "Method not found" (stdio) or `400`
(HTTP) before the SDK sees it, as a 2025 SDK's server answers it. Every event the tests assert
on is appended to RECORD as one JSON line, stamped with this process's own wall clock: `start`
(pid, pgid; over HTTP also the `port` of 127.0.0.1 it listens on, picked by the kernel and
bound before `start`), `call` (tool, request id), `cancelled` (tool, request id, `at`),
`finished` (tool), `booked` (the revision, the request state echoed), over HTTP `post` (the
JSON-RPC method of each POST and its `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`
headers). With
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
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import EmbeddedResource, InputRequiredResult, TextResourceContents
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

RECORD = sys.argv[1]
LEGACY = sys.argv[3:4] == ["legacy"]
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
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        await ctx.notify_tools_changed()  # to the client's `subscriptions/listen` stream
    else:
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
async def book(ctx: Context) -> str | InputRequiredResult:
    """Ask the user (elicitation); answers with the action and the content exactly as sent.
    On 2026-07-28 the question is an `InputRequiredResult` with a request state, and the answer
    comes with the retry (SEP-2322); before, an `elicitation/create` request."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        result = await ctx.session.elicit_form("How many guests?", BOOKING, ctx.request_id)
        record("booked", version=ctx.protocol_version, state=None)
        return json.dumps({"action": result.action, "content": result.content})
    answer = (ctx.input_responses or {}).get("guests")
    if not isinstance(answer, types.ElicitResult):
        question = types.ElicitRequest(
            params=types.ElicitRequestFormParams(
                message="How many guests?", requested_schema=BOOKING
            )
        )
        return InputRequiredResult(input_requests={"guests": question}, request_state="table-7")
    record("booked", version=ctx.protocol_version, state=ctx.request_state)
    return json.dumps({"action": answer.action, "content": answer.content})


@server.tool()
async def pester(ctx: Context) -> str | InputRequiredResult:
    """On 2026-07-28: never done, each answer only a new request state (records `pestered`)."""
    record("pestered", state=ctx.request_state)
    return InputRequiredResult(request_state=f"{ctx.request_state or ''}+")


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


class Front:
    """The HTTP app behind a recorder of each POST's method and headers (and, `legacy`, a
    2025 server's `400` for a `server/discover`)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        try:
            parsed = json.loads(body)
            method, params = parsed.get("method"), parsed.get("params") or {}
        except (ValueError, AttributeError):
            method, params = None, {}
        record(
            "post",
            method=method,
            id=parsed.get("id") if isinstance(parsed, dict) else None,
            cancels=params.get("requestId"),
            **{
                name: headers.get(name)
                for name in ("mcp-protocol-version", "mcp-method", "mcp-name")
            },
        )
        if LEGACY and method == "server/discover":
            error = {
                "jsonrpc": "2.0",
                "id": "server-error",
                "error": {"code": -32600, "message": "Bad Request: No valid session ID provided"},
            }
            await send(
                {
                    "type": "http.response.start",
                    "status": 400,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": json.dumps(error).encode()})
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def serve_http() -> None:
    """Listen on a port the kernel picks (no other process can take it first), say which in the
    `start` event, then serve Streamable HTTP at /mcp."""
    import socket

    import uvicorn

    listening = socket.create_server(("127.0.0.1", 0))
    record("start", pid=os.getpid(), pgid=os.getpgid(0), port=listening.getsockname()[1])
    app = Front(server.streamable_http_app())
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listening])


class LegacyRead:
    """stdin as a 2025 server reads it: a `server/discover` is answered "Method not found"
    here and never reaches the SDK's server (which would open a 2026 connection)."""

    def __init__(self, inner: Any, write: Any) -> None:
        self.inner = inner
        self.write = write

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __aiter__(self) -> LegacyRead:
        return self

    async def __anext__(self) -> Any:
        while True:
            item = await self.inner.__anext__()
            message = getattr(item, "message", None)
            if isinstance(message, types.JSONRPCRequest) and message.method == "server/discover":
                error = types.JSONRPCError(
                    jsonrpc="2.0",
                    id=message.id,
                    error=types.ErrorData(code=types.METHOD_NOT_FOUND, message="Method not found"),
                )
                await self.write.send(SessionMessage(error))
                continue
            return item

    async def receive(self) -> Any:
        return await self.__anext__()


async def serve_stdio() -> None:
    async with stdio_server() as (stdin, write):
        read = LegacyRead(stdin, write) if LEGACY else stdin
        lowlevel = server._lowlevel_server  # the SDK's run_stdio_async, with our read stream
        await lowlevel.run(read, write, lowlevel.create_initialization_options())


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "http":
        serve_http()
    else:
        record("start", pid=os.getpid(), pgid=os.getpgid(0))
        hold_a_restart()
        anyio.run(serve_stdio)
