"""Client-side helpers: start or attach to a session workflow, run a turn, abort it, read its
log, answer its approvals.

Owns how a client talks to `SessionWorkflow` (by name, so no worker code is imported): the
workflow id (`tether-session-<session id>`), `run_turn` as an Update, `abort_turn` as a Signal,
the log as the `log_page` Query over every run of the workflow id (a session that continued as
new keeps its earlier entries in the earlier runs). Handles carry no run id, so every call
reaches the workflow's current run.
"""

from __future__ import annotations

from typing import Any

from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import FailureError

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
    "abort_turn",
    "answer_approval",
    "close_session",
    "log_entries",
    "pending_approvals",
    "refusal",
    "run_turn",
    "start_session",
    "workflow_id",
]


def workflow_id(session_id: str) -> str:
    return f"tether-session-{session_id}"


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


async def run_turn(handle: WorkflowHandle[Any, Any], prompt: str) -> TurnResult:
    """Run one turn (a Workflow Update) and return how it ended."""
    result: TurnResult = await handle.execute_update("run_turn", prompt, result_type=TurnResult)
    return result


async def abort_turn(handle: WorkflowHandle[Any, Any], reason: str = "user") -> None:
    """Abort the running turn (a Signal); its Update still returns the balanced end."""
    await handle.signal("abort_turn", reason)


async def close_session(handle: WorkflowHandle[Any, Any]) -> None:
    await handle.signal("close")


async def log_entries(client: Client, workflow_id: str, start: int = 0) -> list[LogEntry]:
    """The session's log entries from index `start` on, over all its runs (Queries; a run that
    has ended is answered by a worker replaying its history)."""
    return await _entries(client.get_workflow_handle(workflow_id), client, start)


async def _entries(handle: WorkflowHandle[Any, Any], client: Client, start: int) -> list[LogEntry]:
    page: LogPage = await handle.query("log_page", start, result_type=LogPage)
    if start >= page.base or page.previous_run_id is None:
        return page.entries
    earlier = client.get_workflow_handle(handle.id, run_id=page.previous_run_id)
    return [*(await _entries(earlier, client, start))[: page.base - start], *page.entries]


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
