"""A scripted OpenAI-compatible model server: real HTTP and real SSE on 127.0.0.1, no network.

Owns: an asyncio HTTP/1.1 server that answers `POST <base>/chat/completions` with the next
scripted response (streamed `chat.completion.chunk` events, delays, pauses until the test says
so, hangs, comments, dropped connections, or an HTTP error), and records every request body it
received and whether the client disconnected before the response was complete. Used by the test
suite, by users' tests and by `tether demo`; it knows nothing about tether's own types.

    async with ScriptedModelServer(
        reply(reasoning("Let me look."), text("Hello"), finish("stop"), usage(12, 3)),
        tool_calls_reply(("call_1", "read", '{"path": "a.txt"}')),
        http_error(429, "slow down", headers={"retry-after": "1"}),
    ) as server:
        ...  # point a client at server.base_url ("http://127.0.0.1:<port>/v1")
        first = server.requests[0]
        first.body["messages"]; await first.ended(); first.client_disconnected

Each response is consumed by one request, in order; a callable entry builds the response from the
recorded request. When the script is exhausted, `fallback` answers (default: HTTP 500 saying so).
Every response carries `Connection: close`, so one request is one connection and a disconnect is
unambiguous. `reply(...)` appends `data: [DONE]` unless the events end with `hang()`, `drop()`,
`end()` or `done()`.

The script events and responses live in `tether.testing.script`, the recorded request and the
writing of one response in `tether.testing._exchange`; this module serves them and re-exports
every name (its public import path).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import TypeAlias

from ._exchange import RecordedRequest, _Exchange
from .script import (
    ScriptedResponse,
    ScriptEvent,
    comment,
    delay,
    delta,
    done,
    drop,
    end,
    finish,
    hang,
    http_error,
    raw,
    reasoning,
    reply,
    text,
    text_reply,
    tool_call,
    tool_calls_reply,
    until,
    usage,
)

__all__ = [
    "RecordedRequest",
    "Script",
    "ScriptEvent",
    "ScriptedModelServer",
    "ScriptedResponse",
    "comment",
    "delay",
    "delta",
    "done",
    "drop",
    "end",
    "finish",
    "hang",
    "http_error",
    "raw",
    "reasoning",
    "reply",
    "text",
    "text_reply",
    "tool_call",
    "tool_calls_reply",
    "until",
    "usage",
]


Script: TypeAlias = ScriptedResponse | Callable[["RecordedRequest"], ScriptedResponse]

# -- the server ---------------------------------------------------------------------------------


class ScriptedModelServer:
    """Serves the scripted responses on 127.0.0.1 (an ephemeral port) until closed."""

    def __init__(
        self,
        *responses: Script,
        fallback: Callable[[RecordedRequest], ScriptedResponse] | None = None,
    ) -> None:
        self._script: list[Script] = list(responses)
        self._fallback = fallback
        self.requests: list[RecordedRequest] = []
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._port = 0
        self._changed: asyncio.Event | None = None

    # lifecycle

    async def start(self) -> ScriptedModelServer:
        """Listen on 127.0.0.1:0. Returns self."""
        self._changed = asyncio.Event()
        # A deep accept queue: a thousand agents in one process may all connect at once
        # (asyncio's default of 100 would refuse the rest; bench/scale.py).
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=4096)
        self._port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        """Stop listening and end open exchanges (as client disconnects if unfinished)."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if server is not None:
            await server.wait_closed()

    async def __aenter__(self) -> ScriptedModelServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # scripting and inspection

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`, what `AsyncOpenAI(base_url=...)` expects."""
        return f"http://127.0.0.1:{self._port}/v1"

    @property
    def remaining(self) -> int:
        """How many scripted responses have not been used yet."""
        return len(self._script)

    def push(self, *responses: Script) -> None:
        """Append responses to the script."""
        self._script.extend(responses)

    async def request(self, index: int) -> RecordedRequest:
        """Wait until request number `index` (0-based) has arrived, and return it."""
        while len(self.requests) <= index:
            changed = self._changed
            if changed is None:
                raise RuntimeError("ScriptedModelServer is not started")
            await changed.wait()
        return self.requests[index]

    # serving

    def _next(self, record: RecordedRequest) -> ScriptedResponse:
        if self._script:
            entry = self._script.pop(0)
            return entry if isinstance(entry, ScriptedResponse) else entry(record)
        if self._fallback is not None:
            return self._fallback(record)
        return http_error(
            500,
            f"scripted model: no response scripted for request #{record.index}"
            f" ({record.method} {record.path})",
        )

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        record: RecordedRequest | None = None
        try:
            record = await self._read_request(reader)
            if record is None:
                return
            await _Exchange(reader, writer, record).run(self._route(record))
        except (ConnectionError, asyncio.IncompleteReadError):
            if record is not None and not record.completed:
                record.client_disconnected = True
        except asyncio.CancelledError:
            if record is not None and not record.completed:
                record.client_disconnected = True
        finally:
            if not writer.transport.is_closing():
                writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()
            if record is not None:
                record._ended.set()
            if task is not None:
                self._tasks.discard(task)

    def _route(self, record: RecordedRequest) -> ScriptedResponse:
        if record.method != "POST" or not record.path.rstrip("/").endswith("/chat/completions"):
            return http_error(404, f"scripted model: no route for {record.method} {record.path}")
        return self._next(record)

    async def _read_request(self, reader: asyncio.StreamReader) -> RecordedRequest | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _version = [*lines[0].split(" "), "", ""][:3]
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        payload = await reader.readexactly(length) if length else b""
        body: object
        try:
            body = json.loads(payload) if payload else None
        except ValueError:
            body = payload.decode("utf-8", "replace")
        record = RecordedRequest(len(self.requests), method, path, headers, body)
        self.requests.append(record)
        if self._changed is not None:
            self._changed.set()
            self._changed = asyncio.Event()
        return record
