"""Client-side helpers: start or attach to a session workflow, run a turn, abort it.

Owns how a client talks to `SessionWorkflow` (by name, so no worker code is imported): the
workflow id (`tether-session-<session id>`), `run_turn` as an Update, `abort_turn` as a Signal.
"""

from __future__ import annotations

from typing import Any

from temporalio.client import Client, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy

from .payloads import (
    SESSION_WORKFLOW,
    ApprovalAsk,
    ApprovalDecision,
    LogEntry,
    SessionSpec,
    TurnResult,
)

__all__ = [
    "abort_turn",
    "answer_approval",
    "close_session",
    "log_entries",
    "pending_approvals",
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


async def log_entries(handle: WorkflowHandle[Any, Any], start: int = 0) -> list[LogEntry]:
    """The session's log entries from `start` on (a Query)."""
    entries: list[LogEntry] = await handle.query("log", start, result_type=list[LogEntry])
    return entries


async def pending_approvals(handle: WorkflowHandle[Any, Any]) -> list[ApprovalAsk]:
    """The tool calls waiting for a human's approval (a Query)."""
    asks: list[ApprovalAsk] = await handle.query("approvals", result_type=list[ApprovalAsk])
    return asks


async def answer_approval(handle: WorkflowHandle[Any, Any], call_id: str, answer: str) -> None:
    """Answer a waiting call, `allow-once` or `reject` (an Update; rejected when no such call
    waits)."""
    await handle.execute_update("approve", ApprovalDecision(call_id, answer))
