"""Client-side helpers: start or attach to a session workflow, run a turn, follow it, abort it,
read its recorded turns, answer its approvals, list the running sessions.

Owns how a client talks to `SessionWorkflow` (by name, so no worker code is imported): the
workflow id (`tether-session-<session id>`), `run_turn` as an Update with an id of the client's
choosing (so anyone can wait for the same turn's result later: `turn_handle`), `abort_turn` as
a Signal, the `status` and `log_page` Queries, and the durable record of a turn: the `run_turn`
Update's result in the workflow's history (`recorded_turns`), read back as it was produced.
Handles carry no run id, so every call reaches the workflow's current run.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from temporalio.api.enums.v1 import EventType
from temporalio.client import (
    Client,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateHandle,
    WorkflowUpdateRPCTimeoutOrCancelledError,
    WorkflowUpdateStage,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import FailureError
from temporalio.service import RPCError

from .payloads import (
    SESSION_WORKFLOW,
    ApprovalAsk,
    ApprovalDecision,
    LogEntry,
    LogPage,
    SessionSpec,
    TurnResult,
)

__all__ = [
    "RUNNING_SESSIONS",
    "TASK_RETRY_S",
    "SessionStatus",
    "abort_turn",
    "answer_approval",
    "close_session",
    "live_entries",
    "log_entries",
    "pending_approvals",
    "recorded_turns",
    "refusal",
    "run_turn",
    "running_sessions",
    "session_of",
    "start_session",
    "start_turn",
    "status",
    "turn_handle",
    "workflow_id",
    "workflow_pollers",
]

_PREFIX: Final = "tether-session-"

TASK_RETRY_S: Final = 120.0
"""How long a turn is offered again while the workflow's last task is failed (see `start_turn`)."""
_TASK_FAILED: Final = "Workflow Task in failed state"
RUNNING_SESSIONS: Final = f"WorkflowType = '{SESSION_WORKFLOW}' AND ExecutionStatus = 'Running'"
"""The visibility query of `running_sessions`."""


def workflow_id(session_id: str) -> str:
    return f"{_PREFIX}{session_id}"


def session_of(workflow_id: str) -> str:
    """The session id of a session workflow's id."""
    return workflow_id.removeprefix(_PREFIX)


async def start_session(
    client: Client, spec: SessionSpec, *, task_queue: str
) -> WorkflowHandle[Any, Any]:
    """Start the session's workflow on `task_queue`, or attach to it when it already runs."""
    return await client.start_workflow(
        SESSION_WORKFLOW,
        spec,
        id=workflow_id(spec.session_id),
        task_queue=task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )


async def start_turn(
    handle: WorkflowHandle[Any, Any], prompt: str
) -> WorkflowUpdateHandle[TurnResult]:
    """Start one turn (a Workflow Update with id `turn-<uuid>`), returning once the workflow
    accepted it; raises `WorkflowUpdateFailedError` when it refuses (see `refusal`).

    While the workflow's last task failed (a worker died or timed out mid-task; the server
    retries it), the server refuses updates, and while no worker processes the task in time the
    request times out: either way the same update (same id, so it is taken at most once) is
    sent again, for up to `TASK_RETRY_S`, before the refusal or timeout is raised."""
    update_id = f"turn-{uuid.uuid4().hex}"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TASK_RETRY_S
    while True:
        try:
            return await handle.start_update(
                "run_turn",
                prompt,
                id=update_id,
                wait_for_stage=WorkflowUpdateStage.ACCEPTED,
                result_type=TurnResult,
            )
        except WorkflowUpdateRPCTimeoutOrCancelledError:
            task = asyncio.current_task()  # a cancellation looks the same: never retried
            if loop.time() >= deadline or (task is not None and task.cancelling()):
                raise
        except RPCError as exc:
            if _TASK_FAILED not in exc.message or loop.time() >= deadline:
                raise
            await asyncio.sleep(0.5)


async def run_turn(handle: WorkflowHandle[Any, Any], prompt: str) -> TurnResult:
    """Run one turn and return how it ended."""
    return await (await start_turn(handle, prompt)).result()


def turn_handle(
    handle: WorkflowHandle[Any, Any], update_id: str
) -> WorkflowUpdateHandle[TurnResult]:
    """The running turn `update_id` (from `status`), to wait for its result."""
    return handle.get_update_handle(update_id, result_type=TurnResult)


async def abort_turn(handle: WorkflowHandle[Any, Any], reason: str = "user") -> None:
    """Abort the running turn (a Signal); its Update still returns the balanced end."""
    await handle.signal("abort_turn", reason)


async def close_session(handle: WorkflowHandle[Any, Any]) -> None:
    await handle.signal("close")


@dataclass(frozen=True)
class SessionStatus:
    """The `status` query's answer (see `SessionWorkflow.status`)."""

    turn: int
    busy: bool
    state: str
    last_activity: datetime | None
    approvals: int
    update_id: str | None
    prompt: str
    log_size: int
    turn_start: int
    model: str | None

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> SessionStatus:
        """From the query's JSON; a workflow older than some fields answers without them."""
        last = value.get("last_activity")
        return cls(
            turn=int(value["turn"]),
            busy=bool(value["busy"]),
            state=str(value.get("state") or ("running" if value["busy"] else "idle")),
            last_activity=datetime.fromisoformat(last) if isinstance(last, str) else None,
            approvals=int(value.get("approvals") or 0),
            update_id=value.get("update_id"),
            prompt=str(value.get("prompt") or ""),
            log_size=int(value["log_size"]),
            turn_start=int(value.get("turn_start", value["log_size"])),
            model=value.get("model"),
        )


async def status(handle: WorkflowHandle[Any, Any], *, timeout_s: float = 10.0) -> SessionStatus:
    """What the session is doing (a Query a worker answers: raises `RPCError` when none does
    within `timeout_s`)."""
    value: dict[str, Any] = await handle.query(
        "status", result_type=dict[str, Any], rpc_timeout=timedelta(seconds=timeout_s)
    )
    return SessionStatus.from_json(value)


async def live_entries(handle: WorkflowHandle[Any, Any], start: int) -> list[LogEntry]:
    """The current run's entries from session-log index `start` on (every page of the
    `log_page` query): what the running code holds, for following a turn that still runs."""
    entries: list[LogEntry] = []
    while True:
        page: LogPage = await handle.query("log_page", start + len(entries), result_type=LogPage)
        entries += page.entries
        if page.complete or not page.entries:
            return entries


async def log_entries(client: Client, workflow_id: str, start: int = 0) -> list[LogEntry]:
    """The session's log entries from index `start` on, over all its runs, by `log_page`
    Queries — a run that has ended is answered by a worker replaying its history, so this is for
    runs recorded before turns carried their entries (`recorded_turns` is the durable record)."""
    return await _entries(client.get_workflow_handle(workflow_id), client, start)


async def _entries(handle: WorkflowHandle[Any, Any], client: Client, start: int) -> list[LogEntry]:
    page: LogPage = await handle.query("log_page", start, result_type=LogPage)
    entries = list(page.entries)
    while not page.complete and page.entries:
        page = await handle.query(
            "log_page", max(start, page.base) + len(entries), result_type=LogPage
        )
        entries += page.entries
    if start >= page.base or page.previous_run_id is None:
        return entries
    earlier = client.get_workflow_handle(handle.id, run_id=page.previous_run_id)
    return [*(await _entries(earlier, client, start))[: page.base - start], *entries]


async def recorded_turns(client: Client, workflow_id: str, since: int) -> list[TurnResult]:
    """The turns recorded in the workflow's histories (every run of the id, oldest first) that
    end after session-log index `since`, as their `run_turn` results were recorded. A turn
    recorded before results carried entries has `entries` None."""
    runs: list[list[TurnResult]] = []
    run_id: str | None = None
    while True:
        turns, previous = await _run_turns(client, workflow_id, run_id)
        runs.append(turns)
        first = turns[0] if turns else None
        covered = first is not None and first.log_size - len(first.entries or ()) <= since
        if covered or previous is None or (first is not None and first.entries is None):
            break
        run_id = previous
    ordered = [turn for run in reversed(runs) for turn in run]
    return [turn for turn in ordered if turn.log_size > since]


async def _run_turns(
    client: Client, workflow_id: str, run_id: str | None
) -> tuple[list[TurnResult], str | None]:
    """One run's recorded turns and the run it continued (None for the first)."""
    history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
    turns: set[int] = set()
    results: list[TurnResult] = []
    previous: str | None = None
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
            continued = event.workflow_execution_started_event_attributes.continued_execution_run_id
            previous = continued or None
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
            request = event.workflow_execution_update_accepted_event_attributes.accepted_request
            if request.input.name == "run_turn":
                turns.add(event.event_id)
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
            completed = event.workflow_execution_update_completed_event_attributes
            if completed.accepted_event_id in turns and completed.outcome.HasField("success"):
                (result,) = await client.data_converter.decode(
                    completed.outcome.success.payloads, [TurnResult]
                )
                results.append(result)
    return results, previous


async def running_sessions(client: Client) -> AsyncIterator[WorkflowHandle[Any, Any]]:
    """The handles of the session workflows that are running (visibility; eventually
    consistent: a session started a moment ago may be missing)."""
    async for execution in client.list_workflows(RUNNING_SESSIONS):
        yield client.get_workflow_handle(execution.id)


async def pending_approvals(handle: WorkflowHandle[Any, Any]) -> list[ApprovalAsk]:
    """The tool calls waiting for a human's approval (a Query)."""
    asks: list[ApprovalAsk] = await handle.query("approvals", result_type=list[ApprovalAsk])
    return asks


async def answer_approval(
    handle: WorkflowHandle[Any, Any], call_id: str, answer: str, reason: str | None = None
) -> None:
    """Answer a waiting call, `allow-once` or `reject` (with an optional `reason` the model
    reads). An Update: it fails (`WorkflowUpdateFailedError`) when no such call waits."""
    await handle.execute_update("approve", ApprovalDecision(call_id, answer, reason))


def refusal(error: WorkflowUpdateFailedError) -> str:
    """What the workflow said when it refused an Update (its validator's message)."""
    cause = error.cause
    return cause.message if isinstance(cause, FailureError) else str(cause or error)


async def workflow_pollers(client: Client, task_queue: str) -> int:
    """How many workers polled `task_queue` for workflow tasks recently (the server's view;
    a worker that just died stays listed for a few minutes)."""
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    request = DescribeTaskQueueRequest(
        namespace=client.namespace,
        task_queue=TaskQueue(name=task_queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    )
    response = await client.workflow_service.describe_task_queue(request)
    return len(response.pollers)
