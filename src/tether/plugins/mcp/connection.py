"""One MCP server's connection: start, list, reconnect with backoff, stop, restart.

Owns `ServerConnection`. A runner task holds the SDK transport (`stdio_client` or
`streamable_http_client`) and `ClientSession`, entered and left in that one task. A stdio server
is spawned contained (`contained.py`: its own PID namespace, ended with it and with tether).
Stopping leaves them, so the SDK runs the spec's stdio shutdown (close stdin, wait, SIGTERM the
process group, wait, SIGKILL). When the server's stream ends (it died), in-flight calls end
`MCP_CONNECTION_LOST` (the SDK fails their waiters), and the runner reconnects after a backoff
(0.25 s doubling to 30 s; at once for a `restart`). A server that never connected is `failed`
and is not retried. An HTTP server is connected with OAuth (`oauth.py`) unless its headers carry
an `Authorization`; where a person must authorize, the start fails (or a live session is left,
its calls ending `MCP_CONNECTION_LOST`) with "run `tether mcp login NAME`". A server made with a
`transport` (an SDK application's in-process server) is reached through it. Calls themselves
live in `calls.py`. The revision is the newest both sides speak (`negotiate.py`: 2026-07-28
through `server/discover`, else the `initialize` handshake); on 2026-07-28 tool-list changes
come through a `subscriptions/listen` stream (`changes.py`). Imports the `mcp` SDK: load it lazily.

Starting is in the background (`begin`): nothing waits for a server but what needs its tools
(`settled`, through the `tools/settle` event); stopping a server that is still starting does not
wait for it. Its stderr goes through a `StderrRelay` (one printable line each, named); a line on
its stdout that is not JSON-RPC is dropped with one log line naming the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, TypeAlias

import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from ... import __version__
from ...core.errors import error_message
from ...core.signals import AbortSignal
from ..sandbox.plan import SandboxUnavailable
from .changes import follow_tool_changes
from .config import McpConfigError, ServerConfig
from .contained import contained_command
from .elicit import Ask, elicitation_callback
from .negotiate import negotiate
from .oauth import LoginNeeded, oauth_provider
from .stderr import StderrRelay, printable
from .wire import TetherDispatcher, WatchedRead, WatchedWrite

__all__ = ["ServerConnection", "Status", "Transport"]

_log = logging.getLogger("tether.mcp")

Status: TypeAlias = Literal["starting", "connected", "reconnecting", "failed", "stopped"]
Transport: TypeAlias = Callable[[], AbstractAsyncContextManager[Any]]
"""Opens a session's `(read, write)` streams: given for a server tether does not reach by
itself (an SDK application's in-process server: `tether.plugins.mcp.channel`)."""

_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)
"""The SDK's own defaults for its HTTP client: a response stream may stay quiet for minutes."""
_BACKOFF_FIRST = 0.25
_BACKOFF_MAX = 30.0
_NOISE_SHOWN = 3
_CLIENT_INFO = types.Implementation(name="tether", version=__version__)
"""How tether introduces itself to a server (the SDK's default would be "mcp" 0.1.0)."""


class ServerConnection:
    """A configured server and its live session (None while not connected)."""

    def __init__(
        self,
        name: str,
        config: ServerConfig,
        on_tools: Callable[[ServerConnection], None],
        *,
        workspace: str | None = None,
        elicit: Ask | None = None,
        transport: Transport | None = None,
    ) -> None:
        self.name = name
        self._given_transport = transport
        self._elicit = elicit
        self.config = config
        self.workspace = workspace
        """Where a relative `cwd` starts, and what a `workspace-write` sandbox keeps writable."""
        self.status: Status = "starting"
        self.error: str | None = None
        self.tools: tuple[types.Tool, ...] = ()
        self.session: ClientSession | None = None
        self.generation = 0
        self._on_tools = on_tools
        self._ids = itertools.count(1)
        self._runner: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()  # the first start succeeded or failed
        self._connected = asyncio.Event()  # set while a session is usable
        self._wake = asyncio.Event()  # leave the current session (stop or restart)
        self._ended = asyncio.Event()  # the current session's transport is closed
        self._stopping = False
        self._restart = False
        self._relist: asyncio.Task[None] | None = None
        self._starting: asyncio.Task[bool] | None = None
        self._stderr: StderrRelay | None = None
        self._noise_lines = 0
        self._login = asyncio.Event()  # set when the server needs `tether mcp login`

    def next_request_id(self) -> str:
        """A request id unique for this connection's life (a string no integer parses as)."""
        return f"tether-{next(self._ids)}"

    # -- lifecycle ---------------------------------------------------------------------------

    def begin(self) -> None:
        """Start connecting in the background, bounded by `startup_timeout_ms` (see
        `settled`). A failure is `failed` with one log line."""
        loop = asyncio.get_running_loop()
        self._stderr = StderrRelay(self.name)
        self._runner = loop.create_task(self._run(), name=f"mcp server {self.name}")
        self._starting = loop.create_task(self._first_start(), name=f"mcp start {self.name}")

    async def start(self) -> bool:
        """`begin`, then wait until the first start succeeded or failed; whether it connected."""
        self.begin()
        assert self._starting is not None
        return await self._starting

    async def settled(self, signal: AbortSignal) -> None:
        """Wait until the first start succeeded or failed; return at once when `signal`
        aborts. Never raises."""
        starting = self._starting
        if starting is None or starting.done() or signal.aborted:
            return
        aborted = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait({starting, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()

    async def _first_start(self) -> bool:
        timeout = self.config.startup_timeout_ms / 1000
        try:
            async with asyncio.timeout(timeout):
                await self._settled.wait()
        except TimeoutError:
            self.error = f"did not answer initialize within {self.config.startup_timeout_ms:g} ms"
            await self._abandon_start()
        if self.status != "connected":
            if not self._stopping or self.error is not None:
                _log.warning('mcp server "%s" failed to start: %s', self.name, self.error)
            return False
        return True

    async def _abandon_start(self) -> None:
        self._stopping = True
        self._wake.set()
        runner = self._runner
        if runner is not None and not runner.done():
            runner.cancel()  # our own runner, stuck in the SDK's connect; its exit is shielded
            with contextlib.suppress(BaseException):
                await runner
        self.status = "failed"
        self._settled.set()

    async def stop(self) -> None:
        """Leave the session (the SDK's shutdown sequence) and wait until the transport closed;
        a server still starting is not waited for: its start is abandoned (the process ends)."""
        self._stopping = True
        self._wake.set()
        starting = self._starting
        if not self._settled.is_set():
            await self._abandon_start()
            self.status = "stopped"
        runner = self._runner
        if runner is not None:
            with contextlib.suppress(BaseException):
                await asyncio.shield(runner)
        if starting is not None:
            with contextlib.suppress(BaseException):
                await starting
        if self._stderr is not None:
            await self._stderr.close()
        if self.status != "failed":
            self.status = "stopped"

    def _noise(self, line: str) -> None:
        """A stdout line that is not JSON-RPC: one log line for the first few, then silence."""
        self._noise_lines += 1
        if self._noise_lines <= _NOISE_SHOWN:
            more = "; later ones are dropped silently" if self._noise_lines == _NOISE_SHOWN else ""
            _log.warning(
                'mcp server "%s" wrote a line on stdout that is not JSON-RPC (dropped%s): %s',
                self.name,
                more,
                printable(line),
            )

    async def restart(self) -> None:
        """Stop the current server (its process group is gone when this returns) and let the
        runner start a new one at once."""
        if self._stopping or self.session is None:
            return
        ended = self._ended
        self._restart = True
        self._wake.set()
        await ended.wait()

    async def usable(self) -> ClientSession | None:
        """The session, waiting while the server reconnects (at most `startup_timeout_ms`);
        None when it is not back by then, or cannot come back."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.config.startup_timeout_ms / 1000):
                while True:
                    if self.session is not None and self.status == "connected":
                        return self.session
                    if self.status in ("failed", "stopped") or self._stopping:
                        return None
                    await self._connected.wait()
        return None

    async def _run(self) -> None:
        try:
            await self._connect_loop()
        finally:
            self._connected.set()  # wake `usable` waiters: they see the final status

    async def _connect_loop(self) -> None:
        attempt = 0
        while not self._stopping:
            self._wake = asyncio.Event()
            self._ended = asyncio.Event()
            self._login = asyncio.Event()
            lost = asyncio.Event()
            connected = False
            try:
                async with self._transport() as streams:
                    read, write = streams[0], streams[1]
                    watched = WatchedRead(read, lost.set, self._noise)
                    dispatcher = TetherDispatcher(watched, WatchedWrite(write))
                    async with ClientSession(
                        dispatcher=dispatcher,
                        message_handler=self._on_message,
                        client_info=_CLIENT_INFO,
                        elicitation_callback=None
                        if self._elicit is None
                        else elicitation_callback(self.name, self._elicit),
                    ) as session:
                        await self._initialize(session)
                        self.tools = await _list_tools(session)
                        self.session = session
                        self.generation += 1
                        self.status = "connected"
                        self.error = None
                        connected = True
                        attempt = 0
                        self._connected.set()
                        self._settled.set()
                        self._on_tools(self)
                        follow = asyncio.get_running_loop().create_task(
                            follow_tool_changes(self.name, session, self._tools_changed)
                        )
                        try:
                            await _first_of(lost, self._wake, self._login)
                        finally:
                            follow.cancel()  # our own listener, before the session closes
                            with contextlib.suppress(BaseException):
                                await follow
                        self._connected.clear()
                        self.session = None
            except Exception as exc:  # the SDK's connect/initialize failures, a dead transport
                self.error = _describe(exc)
            finally:
                self.session = None
                self._connected.clear()
                self._ended.set()
            if not connected and not self._settled.is_set():
                self.status = "failed"
                self._settled.set()
                return
            if self._stopping:
                return
            self.status = "reconnecting"
            if self._login.is_set() and connected:
                self.error = str(LoginNeeded(self.name))
                _log.warning('mcp server "%s": %s; reconnecting', self.name, self.error)
            elif lost.is_set() and not self._restart:
                _log.warning('mcp server "%s": connection lost; reconnecting', self.name)
            if self._restart:
                self._restart = False
                continue
            delay = min(_BACKOFF_FIRST * 2**attempt, _BACKOFF_MAX)
            attempt += 1
            wake = self._wake
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await wake.wait()

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[Any]:
        if self._given_transport is not None:
            async with self._given_transport() as streams:
                yield streams
            return
        config = self.config.expanded()
        if config.transport == "sdk":
            raise McpConfigError(
                'an in-process SDK MCP server ("type": "sdk") is served only by the Claude Agent '
                "SDK application that started tether (--input-format stream-json)"
            )
        if config.transport == "sse":
            raise McpConfigError('the legacy SSE transport is not supported; use "type": "http"')
        if config.transport == "http":
            assert config.url is not None
            headers = dict(config.headers or {})
            static = any(key.lower() == "authorization" for key in headers)
            auth = None if static else self._oauth(config)
            async with (
                httpx2.AsyncClient(headers=headers, timeout=_HTTP_TIMEOUT, auth=auth) as client,
                streamable_http_client(config.url, http_client=client) as streams,
            ):
                yield streams
            return
        assert config.command is not None
        with contained_command(
            config.command,
            config.args,
            cwd=config.cwd,
            env=config.env,
            sandbox=config.sandbox,
            workspace=self.workspace,
        ) as spawned:
            errlog = sys.stderr if self._stderr is None else self._stderr.file
            params = StdioServerParameters(
                command=spawned.command,
                args=list(spawned.args),
                env=None if config.env is None else dict(config.env),
                cwd=spawned.cwd,
            )
            async with stdio_client(params, errlog=errlog) as streams:
                yield streams

    def _oauth(self, config: ServerConfig) -> Any:
        """The SDK's OAuth provider for this server, unattended: where a person must authorize,
        `_login` is set and `LoginNeeded` raised (the start fails naming `tether mcp login`)."""
        login = self._login

        def needed() -> LoginNeeded:
            login.set()
            return LoginNeeded(self.name)

        async def redirect(url: str) -> None:
            raise needed()

        async def callback() -> Any:
            raise needed()

        return oauth_provider(
            self.name,
            config,
            redirect_uri="http://127.0.0.1/callback",
            redirect=redirect,
            callback=callback,
            login_needed=needed,
        )

    async def _initialize(self, session: ClientSession) -> None:
        """Settle the protocol revision (`negotiate`: `server/discover`, else `initialize`),
        unless the server needs a login first (then `LoginNeeded`)."""
        probe_s = self.config.startup_timeout_ms / 1000 / 3  # room for `initialize` after it
        init = asyncio.ensure_future(negotiate(session, probe_s=probe_s))
        login = asyncio.ensure_future(self._login.wait())
        try:
            await asyncio.wait({init, login}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            login.cancel()
            pending = not init.done()
            init.add_done_callback(_retrieved)
            if pending:
                init.cancel()
        if pending:
            raise LoginNeeded(self.name)
        init.result()

    async def _on_message(self, message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._tools_changed()

    def _tools_changed(self) -> None:
        """The server's tool list changed (a 2025 notification, a 2026 listen event)."""
        previous = self._relist
        if previous is None or previous.done():
            self._relist = asyncio.get_running_loop().create_task(self._relisted())

    async def _relisted(self) -> None:
        session = self.session
        if session is None:
            return
        try:
            self.tools = await _list_tools(session)
        except Exception as exc:
            _log.warning('mcp server "%s": tools/list failed: %s', self.name, _describe(exc))
            return
        self._on_tools(self)


async def _list_tools(session: ClientSession) -> tuple[types.Tool, ...]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        params = None if cursor is None else types.PaginatedRequestParams(cursor=cursor)
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tuple(tools)


async def _first_of(*events: asyncio.Event) -> None:
    waits = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Marks a finished task's outcome as seen (it was abandoned, its error is not news)."""
    if not task.cancelled():
        task.exception()


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        inner = exc.exceptions[0] if exc.exceptions else exc
        return _describe(inner)
    if isinstance(exc, LoginNeeded):
        return str(exc)
    if isinstance(exc, McpConfigError | SandboxUnavailable):
        return exc.message if isinstance(exc, SandboxUnavailable) else str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename}"
    return f"{type(exc).__name__}: {error_message(exc)}"
