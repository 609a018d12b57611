"""The client side of `tether run --temporal` and `tether chat --temporal` (also spelled `tether
temporal run|chat`): attach to a durable session, run turns with tether's Ctrl-C policy, keep the
local JSONL log projected.

Owns: opening (or creating) the session's log under `$TETHER_HOME/sessions` and starting or
attaching to its workflow (`attach`); one turn (`Attached.turn`) — the `run_turn` Update; the
first Ctrl-C sends the `abort_turn` Signal and keeps waiting for the turn's balanced end, a
second stops waiting (the workflow still ends the turn; the next turn's projection records it);
calls that wait for a human are reported to `on_ask` as they appear; the whole turn is projected
once it has ended. Not here: printing and exit codes (`tether.cli.commands.temporal`).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal as os_signal
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
)
from temporalio.service import RPCError, RPCStatusCode

from ..agent.session import SessionLog, SessionStore, new_session_id
from .client import (
    abort_turn,
    pending_approvals,
    refusal,
    run_turn,
    start_session,
    workflow_id,
)
from .payloads import ApprovalAsk, SessionSpec, TurnResult
from .projector import project
from .worker import connect

__all__ = ["AskHandler", "Attached", "SessionUnavailable", "Target", "attach"]

AskHandler = Callable[["Attached", ApprovalAsk], Awaitable[None]]
"""Called once for each call that starts waiting for approval during a turn."""


@dataclass(frozen=True)
class Target:
    """Which session on which cluster: `session` None starts a new one; the rest configure a
    new session's workflow (an existing workflow keeps its own)."""

    address: str
    task_queue: str = "tether"
    tool_task_queue: str | None = None
    session: str | None = None
    namespace: str = "default"
    heartbeat_timeout_s: float = 10.0
    turns_per_run: int = 50


class SessionUnavailable(Exception):
    """The session cannot be attached to, or its workflow refused the turn; the message says
    why and what to do."""


@dataclass
class Attached:
    """A session log and its running workflow."""

    target: Target
    client: Client
    handle: WorkflowHandle[Any, Any]
    log: SessionLog
    ask_poll_s: float = 0.5

    @property
    def session_id(self) -> str:
        return self.log.id

    async def turn(
        self,
        prompt: str,
        *,
        on_ask: AskHandler | None = None,
        on_notice: Callable[[str], None] = lambda _: None,
    ) -> TurnResult | None:
        """Run one turn and project it; None when a second Ctrl-C stopped the waiting. Raises
        `SessionUnavailable` when the workflow refuses the turn (one is already running, the
        session was closed)."""
        loop = asyncio.get_running_loop()
        pressed = asyncio.Event()
        loop.add_signal_handler(os_signal.SIGINT, pressed.set)
        running = asyncio.create_task(run_turn(self.handle, prompt))
        watcher = asyncio.create_task(self._watch(on_ask)) if on_ask is not None else None
        presses = 0
        try:
            while not running.done():
                press = asyncio.create_task(pressed.wait())
                await asyncio.wait({running, press}, return_when=asyncio.FIRST_COMPLETED)
                press.cancel()
                if running.done():
                    break
                pressed.clear()
                presses += 1
                if presses > 1:
                    on_notice("stopped waiting; the workflow still ends the turn")
                    running.cancel()
                    return None
                on_notice("aborting the turn (waiting for its balanced end; Ctrl-C again to stop)")
                await abort_turn(self.handle, "user")
            try:
                result = running.result()
            except WorkflowUpdateFailedError as exc:
                raise SessionUnavailable(refusal(exc)) from exc
        finally:
            with contextlib.suppress(RuntimeError):
                loop.remove_signal_handler(os_signal.SIGINT)
            for task in (running, watcher):
                if task is None:
                    continue
                task.cancel()
                await asyncio.wait({task})
                if not task.cancelled():
                    task.exception()  # retrieved: `running`'s was raised above if it matters
        await project(self.client, self.handle.id, self.log, through=result.log_size)
        return result

    async def _watch(self, on_ask: AskHandler) -> None:
        """Polls the `approvals` query (a query that fails is asked again next time)."""
        seen: set[str] = set()
        while True:
            try:
                asks = await pending_approvals(self.handle)
            except (RPCError, WorkflowQueryFailedError):
                asks = []
            for ask in asks:
                if ask.call_id not in seen:
                    seen.add(ask.call_id)
                    await on_ask(self, ask)
            await asyncio.sleep(self.ask_poll_s)


@contextlib.asynccontextmanager
async def attach(target: Target, *, cwd: Path) -> AsyncIterator[Attached]:
    """A new session (`target.session` None): its log is created and its workflow started. An
    existing one: its workflow must be running; the local log is opened, or created (and
    filled by the next turn's projection) when the session was started elsewhere.

    Raises `SessionUnavailable` when the session has no running workflow, or its log has events
    the workflow does not, and `SessionError` for a log that cannot be opened.
    """
    store = SessionStore()
    client = await connect(target.address, target.namespace)
    if target.session is None:
        session_id = new_session_id()
        spec = SessionSpec(
            session_id=session_id,
            tool_task_queue=target.tool_task_queue,
            heartbeat_timeout_s=target.heartbeat_timeout_s,
            turns_per_run=target.turns_per_run,
        )
        with store.create(session_id=session_id, cwd=cwd, origin="temporal") as log:
            handle = await start_session(client, spec, task_queue=target.task_queue)
            yield Attached(target, client, handle, log)
        return
    session_id = target.session
    handle = client.get_workflow_handle(workflow_id(session_id))
    await _check_running(handle, session_id, target.address)
    log = (
        store.open(session_id)
        if store.exists(session_id)
        else store.create(session_id=session_id, cwd=cwd, origin="temporal")
    )
    with log:
        status: dict[str, Any] = await handle.query("status", result_type=dict[str, Any])
        if int(status["log_size"]) < log.next_seq:
            raise SessionUnavailable(
                f"session {session_id} has {log.next_seq} events but its workflow holds "
                f"{status['log_size']}: this log is not that workflow's; start a new session "
                "(without --resume)"
            )
        yield Attached(target, client, handle, log)


async def _check_running(handle: WorkflowHandle[Any, Any], session_id: str, address: str) -> None:
    try:
        description = await handle.describe()
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise
        status = None
    else:
        status = description.status
    if status != WorkflowExecutionStatus.RUNNING:
        shown = "no workflow" if status is None else f"its workflow is {status.name.lower()}"
        raise SessionUnavailable(
            f"session {session_id} cannot be resumed on {address}: {shown}; start a new "
            "session (without --resume)"
        )
