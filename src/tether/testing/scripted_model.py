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
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

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

# -- script events ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Delta:
    delta: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class _Finish:
    reason: str


@dataclass(frozen=True, slots=True)
class _Usage:
    usage: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class _Delay:
    ms: float


@dataclass(frozen=True, slots=True)
class _Comment:
    text: str


@dataclass(frozen=True, slots=True)
class _Raw:
    data: bytes  # written as one body chunk, verbatim


@dataclass(frozen=True, slots=True)
class _Until:
    event: asyncio.Event


@dataclass(frozen=True, slots=True)
class _Hang:
    pass


@dataclass(frozen=True, slots=True)
class _Drop:
    pass


@dataclass(frozen=True, slots=True)
class _End:
    pass


@dataclass(frozen=True, slots=True)
class _Done:
    pass


ScriptEvent: TypeAlias = (
    _Delta | _Finish | _Usage | _Delay | _Until | _Comment | _Raw | _Hang | _Drop | _End | _Done
)
_TERMINAL: Final = (_Hang, _Drop, _End, _Done)


def delta(fields: Mapping[str, object]) -> ScriptEvent:
    """A chunk whose `choices[0].delta` is exactly `fields`."""
    return _Delta(dict(fields))


def text(content: str) -> ScriptEvent:
    """A chunk with `delta.content`."""
    return _Delta({"content": content})


def reasoning(content: str) -> ScriptEvent:
    """A chunk with DeepSeek's `delta.reasoning_content`."""
    return _Delta({"reasoning_content": content})


def tool_call(
    index: int, *, id: str | None = None, name: str | None = None, arguments: str = ""
) -> ScriptEvent:
    """A `delta.tool_calls` fragment; `id`/`name` are usually sent on the first fragment only."""
    call: dict[str, object] = {"index": index}
    if id is not None:
        call["id"] = id
        call["type"] = "function"
    function: dict[str, object] = {"arguments": arguments}
    if name is not None:
        function = {"name": name, **function}
    call["function"] = function
    return _Delta({"tool_calls": [call]})


def finish(reason: str = "stop") -> ScriptEvent:
    """A chunk with `finish_reason` (`stop`, `tool_calls`, `length`, `content_filter`, ...)."""
    return _Finish(reason)


def usage(
    prompt_tokens: int,
    completion_tokens: int,
    *,
    cached_tokens: int | None = None,
    reasoning_tokens: int | None = None,
) -> ScriptEvent:
    """A trailing usage-only chunk (`choices: []`)."""
    body: dict[str, object] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached_tokens is not None:
        body["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    if reasoning_tokens is not None:
        body["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return _Usage(body)


def delay(ms: float) -> ScriptEvent:
    """Wait `ms` before the next event (ends early if the client disconnects)."""
    return _Delay(ms)


def until(event: asyncio.Event) -> ScriptEvent:
    """Send nothing more until `event` is set (ends early if the client disconnects): a stream
    paused mid-answer for as long as a test needs."""
    return _Until(event)


def comment(content: str = "keep-alive") -> ScriptEvent:
    """An SSE comment line (`: keep-alive`)."""
    return _Comment(content)


def raw(data: str | bytes) -> ScriptEvent:
    """Body bytes written verbatim (e.g. `raw("data: {not json\\n\\n")`)."""
    return _Raw(data.encode() if isinstance(data, str) else data)


def hang() -> ScriptEvent:
    """Send nothing more until the client disconnects."""
    return _Hang()


def drop() -> ScriptEvent:
    """Sever the connection mid-body (the chunked body is left incomplete)."""
    return _Drop()


def end() -> ScriptEvent:
    """End the body cleanly without `data: [DONE]`."""
    return _End()


def done() -> ScriptEvent:
    """`data: [DONE]` and the end of the body."""
    return _Done()


# -- responses ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScriptedResponse:
    """One scripted answer: an SSE stream of `events` (status 200) or an error `body`."""

    status: int = 200
    events: tuple[ScriptEvent, ...] = ()
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None


def reply(*events: ScriptEvent, headers: Mapping[str, str] | None = None) -> ScriptedResponse:
    """A 200 SSE response; `done()` is appended unless the last event is terminal."""
    if not events or not isinstance(events[-1], _TERMINAL):
        events = (*events, _Done())
    return ScriptedResponse(200, events, dict(headers or {}))


def text_reply(
    content: str, *, reasoning_text: str | None = None, pieces: int = 1
) -> ScriptedResponse:
    """Text (split into `pieces` deltas), optionally after reasoning; `stop`; usage."""
    events: list[ScriptEvent] = []
    if reasoning_text is not None:
        events.append(reasoning(reasoning_text))
    step = max(1, -(-len(content) // max(pieces, 1)))
    events.extend(text(content[i : i + step]) for i in range(0, len(content), step))
    return reply(*events, finish("stop"), usage(10, max(1, len(content) // 4)))


def tool_calls_reply(*calls: tuple[str, str, str], content: str | None = None) -> ScriptedResponse:
    """Tool calls `(id, name, arguments_json)`, each streamed in two argument fragments."""
    events: list[ScriptEvent] = []
    if content:
        events.append(text(content))
    for index, (call_id, name, arguments) in enumerate(calls):
        half = len(arguments) // 2
        events.append(tool_call(index, id=call_id, name=name, arguments=arguments[:half]))
        events.append(tool_call(index, arguments=arguments[half:]))
    return reply(*events, finish("tool_calls"), usage(10, 5))


def http_error(
    status: int,
    message: str | None = None,
    *,
    headers: Mapping[str, str] | None = None,
    body: str | bytes | None = None,
    code: str | None = None,
) -> ScriptedResponse:
    """A non-2xx answer; by default the OpenAI error shape `{"error": {"message", ...}}`."""
    if body is None:
        error: dict[str, object] = {"message": message or f"scripted HTTP {status}"}
        error["type"] = "scripted_error"
        if code is not None:
            error["code"] = code
        body = json.dumps({"error": error})
    data = body.encode() if isinstance(body, str) else body
    return ScriptedResponse(status, (), dict(headers or {}), data)


Script: TypeAlias = ScriptedResponse | Callable[["RecordedRequest"], ScriptedResponse]

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
