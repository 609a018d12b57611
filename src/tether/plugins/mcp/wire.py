"""What tether needs to know about the wire under an SDK `ClientSession`, through public seams.

Owns `Outbound` (one `tools/call` as tether tracks it: the id we chose, whether its write
started, how much progress came back), `sending` (the task-local marker that says which
`Outbound` a `tools/call` on this task belongs to), `TetherDispatcher` (a `JSONRPCDispatcher`
that sends such a call under our id with the SDK's courtesy cancel switched off: tether sends the
`notifications/cancelled` itself and waits for the server), `WatchedWrite` (marks an `Outbound`
written when the SDK hands its request to the transport) and `WatchedRead` (reports the end of
the server's stream, i.e. a lost connection, and drops a stdout line that is not JSON-RPC).
Imports the `mcp` SDK: load it lazily.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.shared.dispatcher import CallOptions
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCRequest, RequestId
from pydantic import ValidationError

__all__ = ["Outbound", "TetherDispatcher", "WatchedRead", "WatchedWrite", "sending"]


@dataclass(slots=True)
class Outbound:
    """One `tools/call`. `written` turns True when its request's write to the transport
    started (after that the server may have it, so only a cancel can stop it). A call the
    server answers with an `InputRequiredResult` (2026-07-28) is sent again, each round under
    an id of its own (`next_round`); between rounds nothing is outstanding (`answered`)."""

    request_id: str
    written: bool = False
    progress: int = 0
    last_progress: float = field(default=0.0)
    on_progress: Callable[[], None] | None = None
    rounds: int = 1
    answers: int = 0  # how many of its rounds the server answered (with `InputRequiredResult`)

    def answered(self) -> None:
        """This round's request was answered: nothing of the call is on the wire now."""
        self.written = False
        self.answers += 1

    def next_round(self) -> None:
        """The next round's request: a fresh id (`<first id>.<round>`), not written yet."""
        self.rounds += 1
        self.request_id = f"{self.request_id.split('.')[0]}.{self.rounds}"
        self.written = False

    async def progressed(self, progress: float, total: float | None, message: str | None) -> None:
        """The SDK's progress callback for this request."""
        self.progress += 1
        self.last_progress = time.monotonic()
        if self.on_progress is not None:
            self.on_progress()


sending: ContextVar[Outbound | None] = ContextVar("tether_mcp_sending", default=None)
"""Set on the task that sends one `tools/call`; read by the dispatcher and the write wrapper."""


class TetherDispatcher(JSONRPCDispatcher[Any]):
    """Sends a `tools/call` made under `sending` with our request id and no courtesy cancel;
    everything else exactly as the SDK does."""

    async def send_raw_request(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        opts: CallOptions | None = None,
        *,
        _related_request_id: RequestId | None = None,
    ) -> dict[str, Any]:
        outbound = sending.get()
        if outbound is not None and method == "tools/call":
            chosen: CallOptions = {**(opts or {})}
            chosen["request_id"] = outbound.request_id
            chosen["cancel_on_abandon"] = False
            opts = chosen
        return await super().send_raw_request(
            method, params, opts, _related_request_id=_related_request_id
        )


class WatchedWrite:
    """The transport's write stream; marks the current `Outbound` written as its request goes."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def send(self, item: SessionMessage, /) -> None:
        outbound = sending.get()
        if outbound is not None:
            message = item.message
            if isinstance(message, JSONRPCRequest) and message.id == outbound.request_id:
                outbound.written = True
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class WatchedRead:
    """The transport's read stream; calls `on_end` once when it ends (the server is gone), and
    `on_noise(line)` for a line on the server's stdout that is not JSON-RPC (a banner), which
    it drops: the session never sees it."""

    def __init__(
        self,
        inner: Any,
        on_end: Callable[[], None],
        on_noise: Callable[[str], None] = lambda line: None,
    ) -> None:
        self._inner = inner
        self._on_end: Callable[[], None] | None = on_end
        self._on_noise = on_noise

    def _noise(self, item: SessionMessage | Exception) -> bool:
        if not isinstance(item, ValidationError):
            return False
        errors = item.errors(include_url=False)
        line = errors[0].get("input") if errors else None
        if not errors or errors[0].get("type") != "json_invalid" or not isinstance(line, str):
            return False
        self._on_noise(line)
        return True

    @property
    def last_context(self) -> object:
        return getattr(self._inner, "last_context", None)

    def _ended(self) -> None:
        on_end, self._on_end = self._on_end, None
        if on_end is not None:
            on_end()

    async def receive(self) -> SessionMessage | Exception:
        try:
            while True:
                item: SessionMessage | Exception = await self._inner.receive()
                if not self._noise(item):
                    return item
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._ended()
            raise

    def __aiter__(self) -> WatchedRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            while True:
                item: SessionMessage | Exception = await self._inner.__anext__()
                if not self._noise(item):
                    return item
        except (StopAsyncIteration, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._ended()
            raise

    async def aclose(self) -> None:
        self._ended()
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None
