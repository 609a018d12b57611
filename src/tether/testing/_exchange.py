"""One exchange of the scripted model server: the request it recorded, and writing its answer.

Owns `RecordedRequest` (a request the server received, and how its exchange ended) and the
writing of one scripted response on the connection — the HTTP head, an error body or the chunked
SSE stream of the script events — while watching for the client closing the connection. Does not
own reading requests, the script or the server (`tether.testing.scripted_model`).
`RecordedRequest` is public from `tether.testing.scripted_model` and `tether.testing`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .script import (
    ScriptedResponse,
    ScriptEvent,
    _Comment,
    _Delay,
    _Delta,
    _Done,
    _Drop,
    _End,
    _Finish,
    _Hang,
    _Raw,
    _Until,
    _Usage,
)

__all__ = ["RecordedRequest"]

# -- recording ----------------------------------------------------------------------------------


@dataclass(eq=False)
class RecordedRequest:
    """A request the server received, and how its exchange ended."""

    index: int
    method: str
    path: str
    headers: Mapping[str, str]  # lower-case names
    body: Any  # the parsed JSON body (like httpx's `Response.json()`); raw text if not JSON
    client_disconnected: bool = False  # the client closed before the response was complete
    completed: bool = False  # the whole scripted response was written
    _ended: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    @property
    def messages(self) -> list[dict[str, object]]:
        """`body["messages"]` (empty when absent)."""
        body = self.body
        found = body.get("messages") if isinstance(body, dict) else None
        return list(found) if isinstance(found, list) else []

    async def ended(self) -> RecordedRequest:
        """Wait until the exchange is over (completed, or the client disconnected)."""
        await self._ended.wait()
        return self


class _Exchange:
    """Writes one scripted response while watching for the client closing the connection."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, record: RecordedRequest
    ) -> None:
        self._writer = writer
        self._record = record
        self._eof: asyncio.Future[bytes] = asyncio.ensure_future(reader.read(1))
        body = record.body
        model = body.get("model") if isinstance(body, dict) else None
        self._model = model if isinstance(model, str) else "scripted"
        self._id = f"chatcmpl-scripted-{record.index}"

    async def run(self, response: ScriptedResponse) -> None:
        try:
            if response.status != 200 or response.body is not None:
                await self._error(response)
            else:
                await self._stream(response)
        finally:
            eof = self._eof
            if eof.done():
                if not eof.cancelled():
                    eof.exception()  # retrieved, so a reset connection is not logged
            else:
                eof.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await eof

    def _client_gone(self) -> bool:
        if self._eof.done():
            self._record.client_disconnected = True
            return True
        return False

    async def _error(self, response: ScriptedResponse) -> None:
        body = response.body or b""
        head = _head(
            response.status,
            {"content-type": "application/json", "content-length": str(len(body))},
            response.headers,
        )
        self._writer.write(head + body)
        await self._writer.drain()
        self._record.completed = True

    async def _stream(self, response: ScriptedResponse) -> None:
        base = {
            "content-type": "text/event-stream",
            "cache-control": "no-cache",
            "transfer-encoding": "chunked",
        }
        self._writer.write(_head(200, base, response.headers))
        await self._writer.drain()
        for event in response.events:
            match event:
                case _Delay(ms=ms):
                    if not await self._pause(ms / 1000):
                        return
                case _Until(event=gate):
                    if not await self._until(gate):
                        return
                case _Hang():
                    await self._pause(None)
                    return
                case _Drop():
                    self._writer.transport.abort()
                    return
                case _End():
                    await self._send(b"", last=True)
                    return
                case _Done():
                    await self._send(b"data: [DONE]\n\n", last=True)
                    return
                case _:
                    if not await self._send(self._encode(event)):
                        return
        await self._send(b"", last=True)

    async def _until(self, gate: asyncio.Event) -> bool:
        """Wait for `gate`; False when the client disconnected first."""
        waiter = asyncio.ensure_future(gate.wait())
        either: set[asyncio.Future[Any]] = {self._eof, waiter}
        try:
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not waiter.done():
                waiter.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await waiter
        return not self._client_gone()

    async def _pause(self, seconds: float | None) -> bool:
        """Wait (forever with None); False when the client disconnected meanwhile."""
        await asyncio.wait({self._eof}, timeout=seconds)
        return not self._client_gone()

    async def _send(self, data: bytes, *, last: bool = False) -> bool:
        if self._client_gone():
            return False
        frame = f"{len(data):x}\r\n".encode() + data + b"\r\n" if data else b""
        if last:
            frame += b"0\r\n\r\n"
        self._writer.write(frame)
        await self._writer.drain()
        if last:
            self._record.completed = True
        return True

    def _encode(self, event: ScriptEvent) -> bytes:
        match event:
            case _Comment(text=content):
                return f": {content}\n\n".encode()
            case _Raw(data=data):
                return data
            case _Usage(usage=counts):
                return self._data({"choices": [], "usage": dict(counts)})
            case _Finish(reason=reason):
                return self._data({"choices": [_choice({}, reason)]})
            case _Delta(delta=fields):
                return self._data({"choices": [_choice(dict(fields), None)]})
        raise TypeError(f"not a streamable script event: {event!r}")

    def _data(self, payload: dict[str, object]) -> bytes:
        chunk = {
            "id": self._id,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": self._model,
            **payload,
        }
        return f"data: {json.dumps(chunk)}\n\n".encode()


def _choice(fields: dict[str, object], reason: str | None) -> dict[str, object]:
    return {"index": 0, "delta": fields, "finish_reason": reason}


_REASONS: Final = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


def _head(status: int, base: Mapping[str, str], extra: Mapping[str, str]) -> bytes:
    headers = {**base, **{k.lower(): v for k, v in extra.items()}, "connection": "close"}
    lines: Sequence[str] = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
