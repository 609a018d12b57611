"""Server mode: tether's registered tools served over MCP (stdio, or Streamable HTTP on 127.0.0.1).

Owns `ToolServer` (the SDK's low-level `Server` with `tools/list` and `tools/call` answered from
`ctx.tools`, and `logging/setLevel` relaying tether's log records: `serve_logs.LogRelay`; no
`completion/complete`: tether serves no prompts or resource templates, so it has nothing to
complete and does not advertise the capability), `exposed` (the allow/deny filter) and the two
ways to run it, `serve_stdio` and `serve_http`.

Each `tools/call` runs `ctx.tools.execute` with an `AbortController` of its own, as a task of its
own. A client's `notifications/cancelled` reaches the handler as the SDK's cancellation: the call's
controller is aborted and the handler waits, shielded (no CPU), until the call has published its
one result; per spec nothing is sent back for a cancelled request (over HTTP the SDK's `-32800`
is dropped by `unanswered.Unanswered`: the request's stream just ends). Results are written to the
`log` (one JSON line per call: call id, tool, result) by a `tools/result` observer. Calls carry
the agent `MCP_CLIENT`, so an `Ask` goes to the `approval` service, whose prompter while serving
is the MCP client of the call (`serve_ask.ClientPrompter`: a form elicitation, when the client
advertised elicitation); a client that cannot be asked gets a denial (no approval channel). When
stdin reaches EOF, every call in flight is aborted and drained, then `serve_stdio` returns.
Imports the `mcp` SDK: load it lazily.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import json
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

from ... import __version__
from ...core.signals import AbortController, AbortSignal
from ...kernel import Context
from ...tools.execution import ToolExecution, ToolExecutionInput
from ...tools.results import ToolExecutionResult, ToolSuccess
from .content import to_mcp
from .serve_ask import ClientPrompter
from .serve_logs import LogRelay
from .unanswered import Unanswered
from .wire import WatchedRead

__all__ = ["MCP_CLIENT", "McpClientAgent", "ToolServer", "exposed", "serve_http", "serve_stdio"]

_log = logging.getLogger("tether.mcp")


@dataclass(frozen=True, slots=True)
class McpClientAgent:
    """The agent every served call carries: the MCP client on the other end."""

    name: str = "mcp-client"


MCP_CLIENT: Final = McpClientAgent()


def exposed(name: str, allow: Sequence[str], deny: Sequence[str]) -> bool:
    """Whether tool `name` is served: it matches an `allow` glob and no `deny` glob."""
    matches = fnmatch.fnmatchcase
    return any(matches(name, p) for p in allow) and not any(matches(name, p) for p in deny)


class ToolServer:
    """The MCP server over one tether context."""

    def __init__(
        self,
        ctx: Context,
        *,
        allow: Sequence[str] = ("*",),
        deny: Sequence[str] = (),
        log: IO[str] | None = None,
    ) -> None:
        self._ctx = ctx
        self._allow = tuple(allow)
        self._deny = tuple(deny)
        self._log = log
        self._inflight: dict[str, AbortController] = {}
        self._executions: set[asyncio.Task[ToolExecutionResult]] = set()
        self._calls = 0
        self.server: Server[Any] = Server(
            "tether",
            version=__version__,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        self._relay: LogRelay | None = None
        self._prompter = ClientPrompter()
        self._detach: Callable[[], None] | None = None
        approval = ctx.get("approval")
        attach = getattr(approval, "attach", None)
        if callable(attach) and not getattr(approval, "interactive", True):
            self._detach = attach(self._prompter)
        self.server.add_request_handler(
            "logging/setLevel", types.SetLevelRequestParams, self._set_level
        )
        if log is not None:
            ctx.on("tools/result", self._record)

    def _record(self, exec: ToolExecution, result: ToolExecutionResult) -> None:
        if self._log is None or not exec.call_id.startswith("mcp-"):
            return
        line = {"call_id": exec.call_id, "tool": exec.name, "result": result.to_json()}
        self._log.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._log.flush()

    async def _set_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        if self._relay is None:
            self._relay = LogRelay()
        return await self._relay.set_level(ctx, params)

    async def close(self) -> None:
        """Stop relaying log records and asking the clients (the server stopped serving)."""
        detach, self._detach = self._detach, None
        if detach is not None:
            detach()
        relay, self._relay = self._relay, None
        if relay is not None:
            await relay.close_relay()

    def abort_all(self) -> None:
        """Abort every call in flight (stdin reached EOF, or the server is stopping)."""
        for controller in list(self._inflight.values()):
            controller.abort()

    async def drained(self) -> None:
        """Return once every call in flight has published its one result (logged)."""
        while self._executions:
            await asyncio.wait(set(self._executions))

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = []
        for schema in self._ctx.tools.schemas():
            name = str(schema["name"])
            if not exposed(name, self._allow, self._deny):
                continue
            parameters = schema.get("parameters")
            tools.append(
                types.Tool(
                    name=name,
                    description=str(schema.get("description") or ""),
                    input_schema=json.loads(json.dumps(parameters))
                    if isinstance(parameters, dict)
                    else {"type": "object"},
                )
            )
        return types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name = params.name
        if not exposed(name, self._allow, self._deny):
            return _error(f'unknown tool "{name}"')
        self._calls += 1
        call_id = f"mcp-{ctx.request_id if ctx.request_id is not None else self._calls}"
        controller = AbortController()
        self._inflight[call_id] = controller
        self._prompter.calls[call_id] = ctx
        execution = asyncio.get_running_loop().create_task(
            self._ctx.tools.execute(
                ToolExecutionInput(
                    call_id=call_id,
                    name=name,
                    arguments=params.arguments or {},
                    signal=controller.signal,
                    agent=MCP_CLIENT,
                )
            ),
            name=f"mcp serve {call_id}",
        )
        self._executions.add(execution)
        execution.add_done_callback(self._executions.discard)
        try:
            try:
                result = await asyncio.shield(execution)
            except BaseException:
                # The client cancelled the request (or the server is stopping): abort the call's
                # own signal and wait, shielded, until it published its one result.
                controller.abort()
                with anyio.CancelScope(shield=True):
                    await _settled(execution)
                raise
        finally:
            del self._inflight[call_id]
            self._prompter.calls.pop(call_id, None)
        return _answer(result)


async def _settled(task: asyncio.Task[Any]) -> None:
    waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def wake(_: object) -> None:
        if not waiter.done():
            waiter.set_result(None)

    task.add_done_callback(wake)
    await waiter
    with contextlib.suppress(BaseException):
        task.result()


def _answer(result: ToolExecutionResult) -> types.CallToolResult:
    content = to_mcp(list(result.content))
    if isinstance(result, ToolSuccess):
        structured = result.value if isinstance(result.value, dict) else None
        return types.CallToolResult.model_validate(
            {"content": content, "isError": False}
            | ({} if structured is None else {"structuredContent": _plain(structured)})
        )
    return types.CallToolResult.model_validate({"content": content, "isError": True})


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult.model_validate(
        {"content": [{"type": "text", "text": f"Error: {message}"}], "isError": True}
    )


def _plain(value: object) -> Any:
    return json.loads(json.dumps(value))


async def serve_stdio(server: ToolServer) -> None:
    """Serve on stdin/stdout until stdin reaches EOF; then abort and drain every call."""
    async with stdio_server() as (read, write):
        watched = WatchedRead(read, server.abort_all)
        await server.server.run(watched, write, server.server.create_initialization_options())
    server.abort_all()
    await server.close()


async def serve_http(server: ToolServer, port: int, *, stop: AbortSignal) -> None:
    """Serve Streamable HTTP on 127.0.0.1:`port` (path `/mcp`; port 0: one the kernel picks)
    until `stop` aborts (the command's `tether.core.ending`: a terminating signal); then every
    call still in flight is aborted, uvicorn shuts down gracefully and the calls are drained.
    Says on stderr where it listens (connections queue from then on)."""
    import socket
    import sys

    import uvicorn

    class _Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield  # the command's are installed; uvicorn's would re-raise the signal at the end

    app = Unanswered(server.server.streamable_http_app(host="127.0.0.1"))
    http = _Server(uvicorn.Config(app, log_level="warning"))
    listening = socket.create_server(("127.0.0.1", port))
    bound = listening.getsockname()[1]
    sys.stderr.write(f"tether: serving MCP at http://127.0.0.1:{bound}/mcp\n")
    sys.stderr.flush()

    def stopping(_: object) -> None:
        server.abort_all()
        http.should_exit = True

    remove = stop.add_listener(stopping)
    try:
        await http.serve(sockets=[listening])
    finally:
        remove()
        listening.close()
        server.abort_all()
        await server.drained()
        await server.close()


def open_log(path: Path) -> IO[str]:
    """The result log, appended to (its directory is created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("a", encoding="utf-8")
