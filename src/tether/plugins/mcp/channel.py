"""An in-process SDK MCP server, reached over the control channel of the Claude Agent SDK
application that started tether (issue 35).

Owns `channel_transport(server, send)`: the `(read, write)` streams of an MCP `ClientSession`
whose every JSON-RPC message goes to the application as the control request

    {"subtype": "mcp_message", "server_name": <server>, "message": <the JSON-RPC message>}

The SDK hands it to the server `create_sdk_mcp_server` made and answers `{"mcp_response":
<JSON-RPC>}`: a request's answer goes back to the session as the server's message; the ack a
notification gets (`{"jsonrpc": "2.0", "result": {}}`, no id) is dropped. An error response, or
an answer that is not JSON-RPC, becomes the request's JSON-RPC error (-32603, naming it), so the
request fails instead of hanging. Messages leave in the order the session wrote them (each is
written at once; only the wait for its answer runs beside the others).

Cancellation is the session's: `calls.call_tool` sends `notifications/cancelled` for an aborted
call, which goes over the channel like any message (the SDK cancels the server's handler and
answers the call with "Request cancelled"), then a `ping` (`server/discover` on 2026-07-28).
Closing the transport aborts the control requests still waiting (the channel sends a
`control_cancel_request` for each) and ends the read stream: whatever still waits on the session
fails `MCP_CONNECTION_LOST`. Imports the `mcp` SDK: load it lazily.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Final

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ...core.errors import error_message
from ...core.signals import AbortController, AbortError

__all__ = ["Send", "channel_transport"]

Send = Callable[..., Awaitable[Mapping[str, object]]]
"""`(request, *, timeout_ms, signal) -> response`: one control request to the application and
its answer (raises for an error response or the abort of `signal`)."""

_NO_TIMEOUT_MS: Final = 24 * 3600 * 1000.0
"""A tool may take long; its own cancellation (and the transport's closing) ends the wait."""
_INTERNAL_ERROR: Final = -32603


@contextlib.asynccontextmanager
async def channel_transport(server: str, send: Send) -> AsyncIterator[tuple[Any, Any]]:
    """The session's `(read, write)` streams for SDK MCP server `server` (see the module note)."""
    to_session, read = anyio.create_memory_object_stream[SessionMessage | Exception](math.inf)
    write, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    closing = AbortController()

    def deliver(payload: object, request_id: types.RequestId) -> None:
        try:
            message = types.jsonrpc_message_adapter.validate_python(payload, by_name=False)
        except ValidationError:
            text = f"the application's answer is not JSON-RPC: {payload!r}"
            message = types.jsonrpc_message_adapter.validate_python(_error(request_id, text))
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            to_session.send_nowait(SessionMessage(message))

    async def forward(request: dict[str, object], request_id: types.RequestId | None) -> None:
        try:
            answer = await send(request, timeout_ms=_NO_TIMEOUT_MS, signal=closing.signal)
        except AbortError:
            return  # the transport closed: the session fails what still waits
        except Exception as exc:
            if request_id is not None:
                why = f'the application did not deliver it to SDK MCP server "{server}"'
                deliver(_error(request_id, f"{why}: {error_message(exc)}"), request_id)
            return
        if request_id is not None:
            deliver(answer.get("mcp_response"), request_id)

    async def pump(tasks: anyio.abc.TaskGroup) -> None:
        async with from_session:
            async for item in from_session:
                message = item.message
                request_id = message.id if isinstance(message, types.JSONRPCRequest) else None
                request: dict[str, object] = {
                    "subtype": "mcp_message",
                    "server_name": server,
                    "message": message.model_dump(mode="json", by_alias=True, exclude_unset=True),
                }
                tasks.start_soon(forward, request, request_id)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(pump, tasks)
        try:
            yield read, write
        finally:
            closing.abort(AbortError(None, f'SDK MCP server "{server}" closed'))
            write.close()
            to_session.close()


def _error(request_id: types.RequestId, text: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": _INTERNAL_ERROR, "message": text}}
