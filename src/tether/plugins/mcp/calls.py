"""One `tools/call` with tether's cancellation carried across the wire.

Owns `call_tool` and `CancelNote`. The call is sent from a task of its own (the body never awaits
the SDK directly, so nothing interrupts the body). Then, whichever comes first:

- the answer (after any `InputRequiredResult` rounds: `input_required.py`): an `isError` result
  is a tool failure (`MCP_TOOL_ERROR`), a JSON-RPC error is `MCP_ERROR`, a closed connection is
  `MCP_CONNECTION_LOST`, a result is the success value;
- the caller's signal aborts (or `progress_timeout_ms` passes without progress) before the
  request's write started: the send is cancelled, nothing reached the wire, `NotSent`
  (`ABORTED_BEFORE_DISPATCH`); while an `InputRequiredResult` is being answered, or before a
  later round's write started, the call ends `ABORTED` and no cancel is sent (nothing of it is
  outstanding);
- it aborts after that: tether sends `notifications/cancelled` with our request id and waits up to
  `cancel_grace_ms` for the server to answer or go quiet. *Confirmed*: the request was answered
  (a v1 server's "Request cancelled" error, or a late result), or a `ping` sent after the cancel
  was answered and no progress for the request came in the quiet window after it (on stdio the
  ping is read after the cancel, so the server had read it). 2026-07-28 removed `ping`: there
  the request after the cancel is `server/discover` (`_probe`); over HTTP that revision's cancel
  is the request's own stream closing (the SDK's transport turns the notification into that).
  *Unconfirmed*: neither within the grace. The call ends `ABORTED` either way
  (`MCP_PROGRESS_TIMEOUT` for the idle timer) and the `CancelNote` is handed to `note` (the
  plugin puts it on the result's `meta`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import CONNECTION_CLOSED

from ...core.json import JsonValue
from ...core.signals import AbortSignal
from ...core.timeout import LOOP_SCHEDULER, IdleWatchdog, timeout_of
from ...tools.errors import ToolCallAborted
from .content import from_mcp, text_of
from .errors import (
    MCP_CONNECTION_LOST,
    MCP_ERROR,
    MCP_PROGRESS_TIMEOUT,
    MCP_SERVER_UNAVAILABLE,
    MCP_TOOL_ERROR,
    McpError,
    NotSent,
)
from .input_required import call_until_answered
from .negotiate import is_modern
from .wire import Outbound, sending

__all__ = ["QUIET_MS", "CancelNote", "call_tool", "done_or_aborted", "unavailable"]

QUIET_MS: Final = 250.0
"""How long a server must send no progress for a cancelled request, after answering the ping,
to count as quiet."""


@dataclass(frozen=True, slots=True)
class CancelNote:
    """What happened to a cancel tether sent: recorded as the result's `meta.mcp`."""

    server: str
    request_id: str
    cancel: Literal["confirmed", "unconfirmed"]
    cancel_sent_at: float  # time.time() when the notification was written

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "server": self.server,
            "request_id": self.request_id,
            "cancel": self.cancel,
            "cancel_sent_at": self.cancel_sent_at,
        }


async def call_tool(
    *,
    server: str,
    session: ClientSession,
    request_id: str,
    tool: str,
    arguments: Mapping[str, Any],
    signal: AbortSignal,
    cancel_grace_ms: float,
    progress_timeout_ms: float | None,
    note: Callable[[CancelNote], None],
) -> dict[str, JsonValue]:
    """Call `tool` on `session`; the success value is `{"content": [...]}` (plus
    `structuredContent` when the server sent one). See the module note for every other end."""
    outbound = Outbound(request_id)
    watch = (
        None
        if progress_timeout_ms is None
        else IdleWatchdog(signal, progress_timeout_ms, MCP_PROGRESS_TIMEOUT, LOOP_SCHEDULER)
    )
    if watch is not None:
        outbound.on_progress = watch.pulse
    stop = signal if watch is None else watch.signal

    async def send() -> types.CallToolResult:
        sending.set(outbound)
        return await call_until_answered(session, server, tool, arguments, outbound, stop)

    loop = asyncio.get_running_loop()
    task = loop.create_task(send(), name=f"mcp {server} {tool} {request_id}")
    try:
        if watch is None:
            await done_or_aborted(task, stop)
        else:
            await watch.next(_Once(task, stop))
        if task.done():
            return _value(server, task)
        if not outbound.written:
            task.cancel()
            await _quiescent(task)
            if not outbound.written:
                if outbound.answers == 0:
                    raise NotSent()
                raise ToolCallAborted()  # earlier rounds were answered; nothing is outstanding
        sent_at = time.time()
        await session.send_notification(
            types.CancelledNotification(
                params=types.CancelledNotificationParams(
                    request_id=request_id, reason="cancelled by the caller"
                )
            )
        )
        confirmed = await _confirm(session, task, outbound, cancel_grace_ms)
        if not task.done():
            task.cancel()
        await _quiescent(task)
        note(CancelNote(server, request_id, "confirmed" if confirmed else "unconfirmed", sent_at))
    except BaseException:
        if not task.done():
            task.cancel()
            await _quiescent(task)
        raise
    finally:
        if watch is not None:
            watch.dispose()
    if not signal.aborted and timeout_of(stop, MCP_PROGRESS_TIMEOUT) is not None:
        raise McpError(
            f'MCP server "{server}" sent no progress for {progress_timeout_ms:g} ms',
            MCP_PROGRESS_TIMEOUT,
        )
    raise ToolCallAborted()


def _value(server: str, task: asyncio.Task[types.CallToolResult]) -> dict[str, JsonValue]:
    try:
        result = task.result()
    except (McpError, ToolCallAborted):
        raise
    except MCPError as exc:
        if exc.error.code == CONNECTION_CLOSED:
            raise McpError(
                f'MCP server "{server}" connection lost during the call', MCP_CONNECTION_LOST
            ) from exc
        raise McpError(
            f'MCP server "{server}" answered with error {exc.error.code}: {exc.error.message}',
            MCP_ERROR,
        ) from exc
    except Exception as exc:
        raise McpError(f'MCP server "{server}": {type(exc).__name__}: {exc}', MCP_ERROR) from exc
    dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    blocks = dumped.get("content") or []
    if result.is_error:
        raise McpError(text_of(blocks), MCP_TOOL_ERROR)
    value: dict[str, JsonValue] = {"content": from_mcp(blocks)}  # type: ignore[dict-item]
    if "structuredContent" in dumped:
        value["structuredContent"] = dumped["structuredContent"]
    return value


def unavailable(server: str, error: str | None) -> McpError:
    """The failure of a call to a server that is not connected."""
    why = f": {error}" if error else ""
    return McpError(f'MCP server "{server}" is not connected{why}', MCP_SERVER_UNAVAILABLE)


async def done_or_aborted(task: asyncio.Future[Any], signal: AbortSignal) -> None:
    """Return when `task` is done or `signal` aborted."""
    if task.done() or signal.aborted:
        return
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[None] = loop.create_future()

    def wake(_: object) -> None:
        if not waiter.done():
            waiter.set_result(None)

    task.add_done_callback(wake)
    remove = signal.add_listener(wake)
    try:
        await waiter
    finally:
        remove()
        task.remove_done_callback(wake)


class _Once:
    """An async iterator whose one item is "`task` done or `signal` aborted", so the wait runs
    under `IdleWatchdog.next` (armed while it is outstanding, re-armed by each progress)."""

    def __init__(self, task: asyncio.Future[Any], signal: AbortSignal) -> None:
        self._task = task
        self._signal = signal

    def __aiter__(self) -> _Once:
        return self

    async def __anext__(self) -> None:
        await done_or_aborted(self._task, self._signal)


async def _confirm(
    session: ClientSession, task: asyncio.Task[Any], outbound: Outbound, grace_ms: float
) -> bool:
    """Whether the server answered or went quiet within `grace_ms` (see the module note)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace_ms / 1000
    ping = loop.create_task(_probe(session))
    try:
        await _until(deadline, task, ping)
        if task.done():
            return True
        if not ping.done() or ping.cancelled() or ping.exception() is not None:
            return False
        seen = outbound.progress
        quiet_until = min(deadline, loop.time() + QUIET_MS / 1000)
        await _until(quiet_until, task)
        return task.done() or outbound.progress == seen
    finally:
        if not ping.done():
            ping.cancel()
        await _quiescent(ping)


async def _probe(session: ClientSession) -> object:
    """The request sent after a cancel to learn the server read it: the revision's cheapest,
    `ping` up to 2025-11-25 and `server/discover` on 2026-07-28 (which removed `ping`)."""
    version = session.protocol_version
    if version is not None and is_modern(session):
        return await session.send_discover(version)
    return await session.send_ping()


async def _until(deadline: float, *futures: asyncio.Future[Any]) -> None:
    """Wait until any of `futures` is done or the loop clock reaches `deadline`."""
    remaining = deadline - asyncio.get_running_loop().time()
    if remaining <= 0 or any(f.done() for f in futures):
        return
    await asyncio.wait(futures, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)


async def _quiescent(task: asyncio.Future[Any]) -> None:
    """Wait for our own send/ping task to finish, whatever it ends with."""
    with contextlib.suppress(BaseException):
        await asyncio.shield(task)
    if not task.done():
        return
    if not task.cancelled():
        task.exception()  # retrieved: its outcome is already accounted for
