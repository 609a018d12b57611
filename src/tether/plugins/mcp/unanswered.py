"""`tether mcp serve` over HTTP: a cancelled request gets no reply.

Owns `Unanswered`, an ASGI wrapper around the SDK's Streamable HTTP app. The spec says a server
SHOULD NOT answer a request its client cancelled; the SDK's 2025-era transport ends such a
request's SSE stream with a `-32800` "Request cancelled" error. The wrapper drops that one event,
so the stream ends with no message for the request (the SDK client resolves its own waiter with a
local "stream ended" error). Everything else passes through unchanged. Imports nothing from the
`mcp` SDK.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

__all__ = ["REQUEST_CANCELLED", "Unanswered", "is_cancel_answer"]

REQUEST_CANCELLED: Final = -32800

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_cancel_answer(chunk: bytes) -> bool:
    """Whether an SSE chunk is one event carrying only a JSON-RPC `-32800` error."""
    if b"-32800" not in chunk:
        return False
    data = [
        line[5:].strip()
        for line in chunk.decode("utf-8", "replace").splitlines()
        if line.startswith("data:")
    ]
    if len(data) != 1:
        return False
    try:
        message = json.loads(data[0])
    except ValueError:
        return False
    error = message.get("error") if isinstance(message, dict) else None
    return isinstance(error, dict) and error.get("code") == REQUEST_CANCELLED


class Unanswered:
    """The wrapped app, minus the answer to a cancelled request."""

    def __init__(self, app: App) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self._app(scope, receive, send)
            return

        async def filtered(message: Message) -> None:
            if message.get("type") == "http.response.body" and is_cancel_answer(
                bytes(message.get("body", b""))
            ):
                message = {**message, "body": b""}
            await send(message)

        await self._app(scope, receive, filtered)
