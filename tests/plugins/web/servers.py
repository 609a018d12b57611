"""A scriptable HTTP/1.1 server on 127.0.0.1 for the web tests and benchmark (no other address).

Each route is a coroutine `handler(exchange)` that writes the response through the `Exchange`:
`respond()` for a whole response, or `send_head()` + `write()` to stream. A handler can end with
`await exchange.until_closed()`, which returns when the *client* closes the connection and records
when that happened (`closed_at`, loop time) — how tests observe that a cancelled fetch really
closed its stream. Keep-alive works for handlers that finish a response normally.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType

__all__ = ["Exchange", "LocalServer", "Request"]


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> object:
        return json.loads(self.body)


@dataclass
class Exchange:
    """One request on one connection, and the means to answer it."""

    request: Request
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    started: asyncio.Event = field(default_factory=asyncio.Event)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    closed_at: float | None = None
    keep_alive: bool = True

    async def respond(
        self, status: int = 200, headers: dict[str, str] | None = None, body: bytes = b""
    ) -> None:
        all_headers = {"content-length": str(len(body)), **(headers or {})}
        await self.send_head(status, all_headers)
        await self.write(body)

    async def send_head(self, status: int, headers: dict[str, str]) -> None:
        lines = [f"HTTP/1.1 {status} X"] + [f"{k}: {v}" for k, v in headers.items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await self.writer.drain()

    async def write(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def write_chunk(self, data: bytes) -> None:
        await self.write(b"%x\r\n%s\r\n" % (len(data), data))

    async def until_closed(self) -> None:
        """Return once the client has closed the connection (reads and discards until EOF)."""
        self.keep_alive = False
        with contextlib.suppress(ConnectionError):
            while await self.reader.read(65536):
                pass
        self.closed_at = asyncio.get_running_loop().time()
        self.closed.set()


Handler = Callable[[Exchange], Awaitable[None]]


class LocalServer:
    """`async with LocalServer() as server:`; `server.route("/x")(handler)`; `server.url("/x")`."""

    def __init__(self) -> None:
        self.routes: dict[str, Handler] = {}
        self.exchanges: list[Exchange] = []
        self.connections = 0
        self.arrived = asyncio.Event()  # set on every request
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._port = 0

    @property
    def port(self) -> int:
        """The listening port (still known after the server stopped: then nothing listens)."""
        return self._port

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def route(self, path: str) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            self.routes[path] = handler
            return handler

        return register

    def hits(self, path: str) -> int:
        return sum(1 for exchange in self.exchanges if exchange.request.path == path)

    async def __aenter__(self) -> LocalServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self._port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):  # idle keep-alive readers see EOF and end
            writer.transport.abort()
        if self._tasks:
            await asyncio.wait(self._tasks)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        self.connections += 1
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                exchange = Exchange(request, reader, writer)
                self.exchanges.append(exchange)
                self.arrived.set()
                handler = self.routes.get(request.path.split("?")[0], _not_found)
                await handler(exchange)
                if not exchange.keep_alive:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


async def _not_found(exchange: Exchange) -> None:
    await exchange.respond(404, {"content-type": "text/plain"}, b"not found")


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            key, _, value = line.partition(":")
            headers[key.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = await reader.readexactly(length) if length else b""
    return Request(method, path, headers, body)
