"""The client side of the `mcp` plugin: every configured server's tools in tether's registry.

Owns `McpClients` (provided as the `mcp` service): starting every server in the background at
boot — boot does not wait; the agent loop, `tether tools list` and a call of a tool not yet
registered wait through `tools/settle` (`tether.tools.arrivals`), so only what needs a server's
tools waits for it (a server that fails gets one log line) — registering each server's tools as
`mcp__<server>__<tool>` with the server's JSON Schema and the server's `tool_timeout_ms` as the
definition's `timeout_ms`, re-registering them on `notifications/tools/list_changed` (the
registry emits `tools/change`), the `tools/execute` wrapper that puts a cancel's `CancelNote` on
the result's `meta.mcp`, restarting a server after an unconfirmed cancel when it asks for that,
adding a server after boot (`add`: an SDK application's in-process server, reached through the
transport its front end gives) and stopping every server at dispose. Imports the `mcp` SDK:
load it lazily.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...core.json import JsonValue, thaw
from ...core.signals import AbortSignal
from ...kernel import Context
from ...tools.arrivals import TOOLS_SETTLE
from ...tools.definition import ToolDefinition, ToolOutput
from ...tools.execution import ToolDispatchExecution, ToolExecutionToken, ToolRunContext
from ...tools.results import ContentBlock, ToolExecutionResult, ToolFailure
from ..approval.elicitation import ElicitationQuestion, ElicitationReply
from .calls import CancelNote, call_tool, done_or_aborted, unavailable
from .config import McpConfig, ServerConfig
from .connection import ServerConnection, Status, Transport
from .errors import NotSent
from .names import tool_name
from .sdklogs import quiet_sdk_logs

__all__ = ["McpClients", "ServerView"]

_log = logging.getLogger("tether.mcp")


@dataclass(frozen=True, slots=True)
class ServerView:
    """What `tether mcp list` shows of one server."""

    name: str
    transport: str
    status: Status
    error: str | None
    tools: tuple[str, ...]


def _render(_args: object, value: JsonValue) -> Sequence[ContentBlock]:
    content = value.get("content") if isinstance(value, dict) else None
    return content if isinstance(content, list) else []  # type: ignore[return-value]


_OUTPUT = ToolOutput(schema=None, render=_render)


class McpClients:
    """The `mcp` service."""

    def __init__(self, ctx: Context, config: McpConfig) -> None:
        self._ctx = ctx
        self._config = config
        self.connections: dict[str, ServerConnection] = {}
        self._registered: dict[str, list[Callable[[], None]]] = {}
        self._notes: dict[ToolExecutionToken, CancelNote] = {}
        self._listening = False

    def server_config(self, name: str) -> ServerConfig | None:
        """The configured entry of server `name` (None: there is none)."""
        connection = self.connections.get(name)
        if connection is not None:
            return connection.config
        return self._config.all_servers().get(name)

    def servers(self) -> list[ServerView]:
        return [
            ServerView(
                name=c.name,
                transport=c.config.transport,
                status=c.status,
                error=c.error,
                tools=tuple(tool_name(c.name, t.name) for t in c.tools),
            )
            for c in self.connections.values()
        ]

    async def start(self) -> None:
        """Start every server in the background and return: a server's tools are registered
        when it connects, and what needs them waits through `tools/settle` (`settled`)."""
        servers = self._config.all_servers()
        if not servers:
            return
        self._listen()
        for name, server in servers.items():
            self.connections[name] = ServerConnection(
                name,
                server,
                self._publish,
                workspace=self._config.project_dir,
                elicit=self._elicit,
            )
        for connection in self.connections.values():
            connection.begin()

    def add(self, name: str, config: ServerConfig, transport: Transport) -> None:
        """Start one more server in the background, reached through `transport`; its tools are
        registered when it connects, like a configured server's. Raises ValueError when a
        server of that name exists."""
        if name in self.connections:
            raise ValueError(f'an MCP server named "{name}" is already configured')
        self._listen()
        connection = ServerConnection(
            name, config, self._publish, elicit=self._elicit, transport=transport
        )
        self.connections[name] = connection
        connection.begin()

    def _listen(self) -> None:
        if self._listening:
            return
        self._listening = True
        quiet_sdk_logs()
        self._ctx.on("tools/execute", self._record_cancel, prepend=True)
        self._ctx.on(TOOLS_SETTLE, self.settled)

    async def _elicit(self, question: ElicitationQuestion) -> ElicitationReply:
        """A server's form, through the `approval` service (decline without one)."""
        approval = self._ctx.get("approval")
        elicit = getattr(approval, "elicit", None)
        if not callable(elicit):
            return ElicitationReply("decline")
        reply: ElicitationReply = await elicit(question, signal=AbortSignal.never())
        return reply

    async def settled(self, signal: AbortSignal) -> None:
        """Wait until every server's first start succeeded or failed (or `signal` aborts)."""
        await asyncio.gather(*(c.settled(signal) for c in self.connections.values()))

    async def stop(self) -> None:
        """Stop every server (the spec's shutdown sequence, in parallel) and drop its tools."""
        await asyncio.gather(*(c.stop() for c in self.connections.values()))
        for name in list(self._registered):
            self._unregister(name)

    # -- registration ------------------------------------------------------------------------

    def _publish(self, connection: ServerConnection) -> None:
        self._unregister(connection.name)
        removers: list[Callable[[], None]] = []
        for tool in connection.tools:
            definition = self._definition(
                connection, tool.name, tool.description, tool.input_schema
            )
            try:
                removers.append(self._ctx.tools.register(definition))
            except Exception as exc:
                _log.warning(
                    'mcp server "%s": tool "%s" not registered: %s', connection.name, tool.name, exc
                )
        self._registered[connection.name] = removers

    def _unregister(self, server: str) -> None:
        for remove in self._registered.pop(server, []):
            remove()

    def _definition(
        self, connection: ServerConnection, tool: str, description: str | None, schema: Any
    ) -> ToolDefinition:
        config = connection.config

        async def execute(arguments: object, exec: ToolRunContext) -> object:
            return await self._call(connection, tool, arguments, exec)

        parameters = dict(schema) if isinstance(schema, dict) else {"type": "object"}
        return ToolDefinition(
            name=tool_name(connection.name, tool),
            description=description or f"{tool} (MCP server {connection.name})",
            parameters=parameters,
            output=_OUTPUT,
            execute=execute,
            timeout_ms=config.tool_timeout_ms,
        )

    # -- calls -------------------------------------------------------------------------------

    async def _call(
        self, connection: ServerConnection, tool: str, arguments: object, exec: ToolRunContext
    ) -> object:
        signal = exec.signal
        session = connection.session if connection.status == "connected" else None
        if session is None:
            session = await _abortable(connection.usable(), signal)
        if session is None:
            raise unavailable(connection.name, connection.error)
        config: ServerConfig = connection.config
        plain = thaw(arguments) if arguments is not None else {}  # type: ignore[arg-type]
        cancel: list[CancelNote] = []
        try:
            return await call_tool(
                server=connection.name,
                session=session,
                request_id=connection.next_request_id(),
                tool=tool,
                arguments=plain if isinstance(plain, dict) else {},
                signal=signal,
                cancel_grace_ms=config.cancel_grace_ms,
                progress_timeout_ms=config.progress_timeout_ms,
                note=cancel.append,
            )
        finally:
            if cancel:
                self._notes[exec.token] = cancel[0]
                if cancel[0].cancel == "unconfirmed" and config.on_unconfirmed_cancel == "restart":
                    _log.warning(
                        'mcp server "%s" did not confirm a cancel; restarting it', connection.name
                    )
                    await connection.restart()

    async def _record_cancel(
        self, exec: ToolDispatchExecution, next: Callable[[], Awaitable[ToolExecutionResult]]
    ) -> ToolExecutionResult:
        result = await next()
        note = self._notes.pop(exec.token, None) if self._notes else None
        if note is None or not isinstance(result, ToolFailure):
            return result
        return replace(result, meta={"mcp": note.to_json()})


async def _abortable(waiting: Awaitable[Any], signal: Any) -> Any:
    """Await `waiting` (a wait for the connection); if `signal` aborts first, nothing was sent:
    `NotSent`."""
    if signal.aborted:
        raise NotSent()
    task = asyncio.ensure_future(waiting)
    if task.done():
        return task.result()
    await done_or_aborted(task, signal)
    if task.done():
        return task.result()
    task.cancel()
    raise NotSent()
