"""The client side of `tether run|chat --temporal` and `tether temporal attach|abort`: attach to
a durable session, run or follow turns with tether's policy for ending signals, keep the local
JSONL log projected.

Owns: opening (or creating) the session's log under `$TETHER_HOME/sessions` and starting or
attaching to its workflow (`attach`). A new session's log is written at once — its header, and
`temporal.json` beside it naming the cluster — so it is listed (`tether sessions list`, `tether
temporal sessions`) from its first turn on, even when this client is killed before the turn
ends. Running a turn (`Attached.turn`) starts the `run_turn` Update and follows it
(`Attached.follow`, also how `attach` takes over a turn another client started): the first
ending signal (Ctrl-C, SIGTERM, SIGHUP, SIGQUIT) sends the `abort_turn` Signal and keeps
waiting for the turn's balanced end, a second ends the process at once with its status (the
workflow still ends the turn; a later catch-up records it); calls that wait
for a human are reported to `on_ask` as they appear; with `on_entry`, the turn's entries are
delivered as they happen (polled from the running workflow) and, at the end, from the turn's
recorded result; the whole turn is projected once it has ended. Not here: printing and exit
codes (`tether.cli.commands.temporal`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from temporalio.client import (
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateHandle,
)
from temporalio.service import RPCError, RPCStatusCode

from ..agent.session import SessionLog, SessionStore, new_session_id
from ..core.ending import Ended, ProcessEnding
from .client import (
    SessionStatus,
    abort_turn,
    pending_approvals,
    refusal,
    start_session,
    start_turn,
    status,
    turn_handle,
    workflow_id,
    workflow_pollers,
)
from .cluster import Cluster
from .connection import Connection, connected
from .payloads import ApprovalAsk, LogEntry, SessionSpec, TurnResult
from .projector import catch_up, project_turn
from .storage import PayloadStore

__all__ = [
    "CLUSTER_FILE",
    "QUEUE_CHECK_S",
    "AskHandler",
    "Attached",
    "EntryHandler",
    "NoWorker",
    "SessionUnavailable",
    "Target",
    "attach",
    "recorded_cluster",
]

CLUSTER_FILE: Final = "temporal.json"
"""Beside a Temporal session's log: where its workflow runs (address, namespace, queue)."""

AskHandler = Callable[["Attached", ApprovalAsk], Awaitable[None]]
"""Called once for each call that starts waiting for approval during a turn."""

EntryHandler = Callable[[LogEntry, dict[str, Any]], None]
"""Called with each entry of the followed turn (and its data resolved from the store), in order."""


@dataclass(frozen=True)
class Target:
    """Which session on which cluster: `session` None starts a new one; the rest configure a
    new session's workflow (an existing workflow keeps its own)."""

    cluster: Cluster
    task_queue: str = "tether"
    tool_task_queue: str | None = None
    session: str | None = None
    heartbeat_timeout_s: float = 10.0
    turns_per_run: int = 50
    tool_start_timeout_s: float = 60.0
    model_step_timeout_s: float = 900.0
    payload_store: str | None = None
    worker_wait_s: float = 300.0
    """How long a turn waits for a worker of `task_queue` to take it (`NoWorker` after)."""
    terminate_without_worker: bool = False
    """At `worker_wait_s`, terminate a session this client started instead of leaving its
    workflow for a worker that appears later."""

    @property
    def address(self) -> str:
        return self.cluster.address

    @property
    def namespace(self) -> str:
        return self.cluster.namespace


class SessionUnavailable(Exception):
    """The session cannot be attached to, or its workflow refused the turn; the message says
    why and what to do."""


class NoWorker(SessionUnavailable):
    """No worker took the turn within `Target.worker_wait_s`: the message names the task queue
    and the command that starts a worker for it."""


QUEUE_CHECK_S: Final = 2.0
"""How often a turn that no worker has taken yet asks the server who polls its queue."""


def recorded_cluster(store: SessionStore, session_id: str) -> dict[str, str]:
    """What `temporal.json` beside the session's log says (empty when there is none)."""
    path = store.path(session_id).with_name(CLUSTER_FILE)
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


@dataclass
class Attached:
    """A session log and its running workflow."""

    target: Target
    connection: Connection
    handle: WorkflowHandle[Any, Any]
    log: SessionLog
    poll_s: float = 0.25
    ended: Ended | None = None
    """The signal that aborted the followed turn (its exit status is `ended.exit_code`)."""

    @property
    def session_id(self) -> str:
        return self.log.id

    async def status(self) -> SessionStatus:
        return await status(self.handle)

    async def catch_up(self) -> int:
        """Project every turn the workflow recorded that the log lacks; how many entries."""
        client, blobs = self.connection.client, self.connection.blobs
        return await catch_up(client, blobs, self.handle.id, self.log)

    async def turn(
        self,
        prompt: str,
        *,
        on_ask: AskHandler | None = None,
        on_notice: Callable[[str], None] = lambda _: None,
        on_entry: EntryHandler | None = None,
    ) -> TurnResult:
        """Run one turn and project it (see `follow` for signals). Raises
        `SessionUnavailable` when the workflow refuses the turn (one is already running, the
        session was closed)."""
        start = self.log.next_seq
        try:
            update = await self._taken(start_turn(self.handle, prompt), on_notice)
        except WorkflowUpdateFailedError as exc:
            raise SessionUnavailable(refusal(exc)) from exc
        return await self.follow(
            update, start, on_ask=on_ask, on_notice=on_notice, on_entry=on_entry
        )

    async def _taken(
        self,
        starting: Awaitable[WorkflowUpdateHandle[TurnResult]],
        on_notice: Callable[[str], None],
    ) -> WorkflowUpdateHandle[TurnResult]:
        """`starting` (the turn's Update, which returns once a worker accepted it), watched: a
        queue no worker polls is named at once, with the command that starts one; past
        `worker_wait_s` the turn is given up (`NoWorker`)."""
        loop = asyncio.get_running_loop()
        accepting = asyncio.ensure_future(starting)
        deadline = loop.time() + self.target.worker_wait_s
        queue = self.target.task_queue
        told = False
        try:
            while True:
                left = deadline - loop.time()
                await asyncio.wait({accepting}, timeout=max(0.0, min(QUEUE_CHECK_S, left)))
                if accepting.done():
                    return accepting.result()
                if not told:
                    with contextlib.suppress(RPCError):
                        if await workflow_pollers(self.connection.client, queue) == 0:
                            on_notice(
                                f"no worker polls the task queue {queue!r} on "
                                f"{self.target.cluster.describe()}; the turn waits for one "
                                f"(up to {self.target.worker_wait_s:g} s): "
                                f"{self._worker_command()}"
                            )
                            told = True
                if loop.time() >= deadline:
                    break
        finally:
            if not accepting.done():
                accepting.cancel()
            await asyncio.wait({accepting})
            if not accepting.cancelled():
                accepting.exception()  # retrieved: a result or failure was returned/raised above
        if self.target.terminate_without_worker and self.target.session is None:
            with contextlib.suppress(RPCError):
                await self.handle.terminate(reason="no worker took the session's first turn")
            ended = "; its workflow was terminated"
        else:
            ended = (
                f"; the session's workflow waits for one: start it, then follow the turn "
                f"with tether temporal attach {self.session_id}"
            )
        raise NoWorker(
            f"no worker took the turn in {self.target.worker_wait_s:g} s on the task queue "
            f"{queue!r} ({self.target.cluster.describe()}): {self._worker_command()}{ended}"
        )

    def _worker_command(self) -> str:
        cluster = self.target.cluster
        namespace = "" if cluster.namespace == "default" else f" --namespace {cluster.namespace}"
        return (
            f"tether worker --address {cluster.address}{namespace} "
            f"--task-queue {self.target.task_queue}"
        )

    async def follow(
        self,
        update: WorkflowUpdateHandle[TurnResult],
        start: int,
        *,
        on_ask: AskHandler | None = None,
        on_notice: Callable[[str], None] = lambda _: None,
        on_entry: EntryHandler | None = None,
    ) -> TurnResult:
        """Wait for the turn `update` (whose entries start at session-log index `start`) with
        the policy of the module note, then project it. Any ending signal (SIGINT, SIGTERM,
        SIGHUP, SIGQUIT: `tether.core.ending`) aborts the turn and keeps waiting for its
        balanced end (`ended` says which); a second one ends the process at once, with its
        status (the workflow still ends the turn; a later catch-up records it)."""
        pressed = asyncio.Event()

        def ending(reason: Ended) -> None:
            self.ended = reason
            pressed.set()

        process_ending = ProcessEnding(on_end=ending)
        process_ending.install()
        delivered = start
        running = asyncio.create_task(update.result())
        helpers: list[asyncio.Task[None]] = []
        if on_ask is not None:
            helpers.append(asyncio.create_task(self._watch_asks(on_ask)))
        if on_entry is not None:

            async def live() -> None:
                nonlocal delivered
                while True:
                    with contextlib.suppress(RPCError, WorkflowQueryFailedError):
                        for entry in await self._live(delivered):
                            on_entry(entry, await self.connection.blobs.resolve(entry))
                            delivered += 1
                    await asyncio.sleep(self.poll_s)

            helpers.append(asyncio.create_task(live()))
        try:
            while not running.done():
                press = asyncio.create_task(pressed.wait())
                await asyncio.wait({running, press}, return_when=asyncio.FIRST_COMPLETED)
                press.cancel()
                if running.done():
                    break
                pressed.clear()
                name = "" if self.ended is None else f" ({self.ended.name})"
                on_notice(
                    f"aborting the turn{name} (waiting for its balanced end; again to stop "
                    "waiting: the workflow still ends the turn)"
                )
                await abort_turn(self.handle, "user")
            try:
                result = running.result()
            except WorkflowUpdateFailedError as exc:  # the workflow refused the turn
                raise SessionUnavailable(refusal(exc)) from exc
        finally:
            process_ending.uninstall()
            for task in (running, *helpers):
                task.cancel()
                await asyncio.wait({task})
                if not task.cancelled():
                    task.exception()  # retrieved: `running`'s was raised above if it matters
        entries = result.entries
        if entries is None:  # a workflow older than recorded entries: its log, by query
            await catch_up(
                self.connection.client,
                self.connection.blobs,
                self.handle.id,
                self.log,
                through=result.log_size,
            )
            return result
        if self.log.next_seq < start:
            await self.catch_up()
        await project_turn(self.log, result, self.connection.blobs)
        if on_entry is not None:
            first = result.log_size - len(entries)
            for entry in entries[max(0, delivered - first) :]:
                on_entry(entry, await self.connection.blobs.resolve(entry))
        return result

    async def _live(self, start: int) -> list[LogEntry]:
        from .client import live_entries

        return await live_entries(self.handle, start)

    async def _watch_asks(self, on_ask: AskHandler) -> None:
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
            await asyncio.sleep(max(self.poll_s, 0.5))

    async def running_turn(self) -> tuple[WorkflowUpdateHandle[TurnResult], int] | None:
        """The turn the workflow is running (its Update and where its entries start), or None."""
        now = await self.status()
        if not now.busy or now.update_id is None:
            return None
        return turn_handle(self.handle, now.update_id), now.turn_start


@contextlib.asynccontextmanager
async def attach(
    target: Target, *, cwd: Path, instead: str = "start a new session (without --resume)"
) -> AsyncIterator[Attached]:
    """A new session (`target.session` None): its log is created and written at once (header,
    and `temporal.json` naming the cluster) and its workflow started. An existing one: its
    workflow must be running; the local log is opened, or created when the session was started
    elsewhere, and caught up with every turn the workflow recorded.

    Raises `SessionUnavailable` (ending with `instead`, what to do) when the session has no
    running workflow, or its log has events
    the workflow does not, `SessionError` for a log that cannot be opened, ValueError for a bad
    payload store and RuntimeError when the store or the cluster cannot be reached.
    """
    store = SessionStore()
    payloads = PayloadStore.parse(target.payload_store)
    async with connected(target.cluster, None, payloads) as connection:
        client = connection.client
        if target.session is None:
            session_id = new_session_id()
            spec = SessionSpec(
                session_id=session_id,
                tool_task_queue=target.tool_task_queue,
                heartbeat_timeout_s=target.heartbeat_timeout_s,
                turns_per_run=target.turns_per_run,
                tool_schedule_to_start_s=target.tool_start_timeout_s,
                llm_start_to_close_s=target.model_step_timeout_s,
            )
            with store.create(session_id=session_id, cwd=cwd, origin="temporal") as log:
                _record_cluster(store, log, target)
                handle = await start_session(client, spec, task_queue=target.task_queue)
                yield Attached(target, connection, handle, log)
            return
        session_id = target.session
        handle = client.get_workflow_handle(workflow_id(session_id))
        await _check_running(handle, session_id, target.address, instead)
        log = (
            store.open(session_id)
            if store.exists(session_id)
            else store.create(session_id=session_id, cwd=cwd, origin="temporal")
        )
        with log:
            _record_cluster(store, log, target)
            now = await status(handle)
            if now.log_size < log.next_seq:
                raise SessionUnavailable(
                    f"session {session_id} has {log.next_seq} events but its workflow holds "
                    f"{now.log_size}: this log is not that workflow's; start a new session "
                    "(without --resume)"
                )
            attached = Attached(target, connection, handle, log)
            await attached.catch_up()
            yield attached


def _record_cluster(store: SessionStore, log: SessionLog, target: Target) -> None:
    log.publish()
    path = store.path(log.id).with_name(CLUSTER_FILE)
    if path.exists():
        return
    cluster = {
        "address": target.address,
        "namespace": target.namespace,
        "task_queue": target.task_queue,
        "workflow_id": workflow_id(log.id),
    }
    if target.payload_store is not None:
        cluster["payload_store"] = target.payload_store
    temp = path.with_name(f".{CLUSTER_FILE}.tmp")
    temp.write_text(json.dumps(cluster, indent=2) + "\n")
    temp.replace(path)


async def _check_running(
    handle: WorkflowHandle[Any, Any], session_id: str, address: str, instead: str
) -> None:
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
            f"session {session_id} cannot be resumed on {address}: {shown}; {instead}"
        )
