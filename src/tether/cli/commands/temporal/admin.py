"""`tether temporal sessions|attach|abort|approve`: finding the running sessions of a cluster,
following or aborting a turn whose client is gone, and answering calls that wait for a human.
Does not own the queries and updates themselves (`tether.temporal.client`).
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import cyclopts

from ....agent.session import SessionStore
from ...temporal_cluster import ClusterFlags
from ...temporal_output import OutputFormat, TurnOutput
from .shared import (
    CLUSTER,
    OutputFormatOpt,
    PayloadStoreOpt,
    app,
    failed,
    have_temporalio,
    notice,
    problems,
)

if TYPE_CHECKING:
    from temporalio.client import WorkflowHandle

    from ....temporal.client import SessionStatus
    from ....temporal.cluster import Cluster

__all__ = ["abort", "approve", "attach_", "sessions_"]


def _cluster(
    session: str | None, cluster: ClusterFlags, payload_store: str | None
) -> tuple[Cluster, str | None]:
    """The cluster (flags, then temporalio's environment configuration, then what the session's
    log records) and the payload store (the flag, else the recorded one)."""
    recorded: dict[str, str] = {}
    if session is not None:
        from ....temporal.frontend import recorded_cluster

        recorded = recorded_cluster(SessionStore(), session)
    return cluster.resolve(recorded=recorded), payload_store or recorded.get("payload_store")


def _ago(when: datetime | None, now: datetime) -> str:
    if when is None:
        return "?"
    seconds = max(0, int((now - when).total_seconds()))
    if seconds < 120:
        return f"{seconds} s ago"
    if seconds < 7200:
        return f"{seconds // 60} min ago"
    return f"{seconds // 3600} h ago"


@app.command(name="sessions")
async def sessions_(
    *,
    cluster: ClusterFlags = CLUSTER,
    payload_store: PayloadStoreOpt = None,
    as_json: Annotated[bool, cyclopts.Parameter(name="--json", negative=())] = False,
) -> int:
    """List the running sessions of the cluster: id, turn, what the turn is doing (idle, model,
    tools, approval, aborting), its last activity, the calls waiting for approval and the
    running turn's prompt. A session no worker answers for shows `unknown`."""
    if not have_temporalio():
        return 2
    from ....temporal import client as sessions
    from ....temporal.connection import connected
    from ....temporal.storage import PayloadStore

    try:
        where, store = _cluster(None, cluster, payload_store)
        async with connected(where, None, PayloadStore.parse(store)) as connection:
            handles = [h async for h in sessions.running_sessions(connection.client)]
            statuses = await asyncio.gather(*(_status_or_none(h) for h in handles))
            found = [
                (sessions.session_of(h.id), status)
                for h, status in zip(handles, statuses, strict=True)
            ]
    except problems() as exc:
        return failed(exc)
    now = datetime.now(UTC)
    if as_json:
        rows = [_status_json(session, status) for session, status in found]
        sys.stdout.write(json.dumps(rows, ensure_ascii=False) + "\n")
        return 0
    if not found:
        notice(f"no running sessions on {where.describe()}")
        return 0
    sys.stdout.write(
        f"{'SESSION':<28} {'TURN':>4}  {'STATE':<9} {'LAST ACTIVITY':<14} ASK  PROMPT\n"
    )
    for session, status in found:
        if status is None:
            sys.stdout.write(f"{session:<28} {'?':>4}  {'unknown':<9} {'?':<14} {'?':>3}  \n")
            continue
        prompt = " ".join(status.prompt.split())[:48] if status.busy else ""
        sys.stdout.write(
            f"{session:<28} {status.turn:>4}  {status.state:<9} "
            f"{_ago(status.last_activity, now):<14} {status.approvals:>3}  {prompt}\n"
        )
    return 0


async def _status_or_none(handle: WorkflowHandle[Any, Any]) -> SessionStatus | None:
    """The session's status, or None when no worker answers for it."""
    from temporalio.client import WorkflowQueryFailedError
    from temporalio.service import RPCError

    from ....temporal.client import status

    try:
        return await status(handle, timeout_s=5.0)
    except (RPCError, WorkflowQueryFailedError):
        return None


def _status_json(session: str, status: SessionStatus | None) -> dict[str, object]:
    if status is None:
        return {"session_id": session, "state": "unknown"}
    return {
        "session_id": session,
        "turn": status.turn,
        "state": status.state,
        "busy": status.busy,
        "last_activity": None if status.last_activity is None else status.last_activity.isoformat(),
        "approvals": status.approvals,
        "prompt": status.prompt,
    }


@app.command(name="attach")
async def attach_(
    session: str,
    /,
    *,
    cluster: ClusterFlags = CLUSTER,
    payload_store: PayloadStoreOpt = None,
    output_format: OutputFormatOpt = "text",
) -> int:
    """Follow SESSION's running turn to its end — also one whose client is gone — and print its
    answer as `tether run` would (exit 0 iff it completed); the local log is brought up to
    date first. Ctrl-C aborts the turn and waits for its balanced end; again stops waiting.
    Without a running turn, only the log is brought up to date.

    Parameters
    ----------
    session
        The session id (`tether temporal sessions` lists the running ones).
    """
    return await _take_over(session, cluster, payload_store, output_format, abort=False)


@app.command(name="abort")
async def abort(
    session: str,
    /,
    *,
    cluster: ClusterFlags = CLUSTER,
    payload_store: PayloadStoreOpt = None,
) -> int:
    """Abort SESSION's running turn — also one whose client is gone — and wait for its balanced
    end (running tools stopped and their results recorded); the local log is brought up to
    date. Exit 0 once the turn has ended (or when none was running).

    Parameters
    ----------
    session
        The session id (`tether temporal sessions` lists the running ones).
    """
    return await _take_over(session, cluster, payload_store, "text", abort=True)


async def _take_over(
    session: str,
    cluster: ClusterFlags,
    payload_store: str | None,
    output_format: OutputFormat,
    *,
    abort: bool,
) -> int:
    if not have_temporalio():
        return 2
    from ....temporal.client import abort_turn
    from ....temporal.frontend import SessionUnavailable, Target, attach

    output = TurnOutput(output_format)
    try:
        where, store = _cluster(session, cluster, payload_store)
        target = Target(cluster=where, session=session, payload_store=store)
        instead = "`tether temporal sessions` lists the running sessions"
        async with attach(target, cwd=Path.cwd(), instead=instead) as attached:
            running = await attached.running_turn()
            if running is None:
                notice(
                    f"no turn is running in session {session}; its log is up to date "
                    f"(tether sessions show {session})"
                )
                return 0
            update, start = running
            if abort:
                await abort_turn(attached.handle, "user")
                notice(f"aborting the running turn of session {session}; waiting for its end")
                result = await attached.follow(update, start, on_notice=notice)
                notice(
                    f"turn {result.turn} ended {result.reason.get('kind')}; tool outcomes are "
                    f"recorded (tether sessions show {session})"
                )
                return 0
            notice(f"following the running turn of session {session} (Ctrl-C aborts it)")
            output.start(session, (await attached.status()).model, Path.cwd())
            result = await attached.follow(
                update, start, on_notice=notice, on_entry=output.on_entry
            )
            return output.finish(result, session_id=session, ended=attached.ended)
    except SessionUnavailable as exc:
        notice(str(exc))
        return 2
    except problems() as exc:
        return failed(exc)


@app.command(name="approve")
async def approve(
    address: str,
    session: str,
    call_id: str | None = None,
    /,
    *,
    reject: Annotated[bool, cyclopts.Parameter(name="--reject", negative=())] = False,
    reason: Annotated[str | None, cyclopts.Parameter(name="--reason")] = None,
    cluster: ClusterFlags = CLUSTER,
    payload_store: PayloadStoreOpt = None,
) -> int:
    """List the tool calls of SESSION waiting for approval, or answer CALL_ID: allow it once,
    or `--reject` it (`--reason` is what the model reads about why).

    Parameters
    ----------
    address
        The Temporal frontend, e.g. 127.0.0.1:7233.
    session
        The session id.
    call_id
        The waiting call to answer; without it, the waiting calls are listed.
    """
    if not have_temporalio():
        return 2
    from temporalio.client import WorkflowUpdateFailedError

    from ....temporal import client as sessions
    from ....temporal.connection import connected
    from ....temporal.storage import PayloadStore

    if reason is not None and not reject:
        sys.stderr.write("tether: --reason goes with --reject (the model reads why)\n")
        return 2
    try:
        where = cluster.resolve(address=address)
        async with connected(where, None, PayloadStore.parse(payload_store)) as connection:
            handle = connection.client.get_workflow_handle(sessions.workflow_id(session))
            if call_id is None:
                for ask in await sessions.pending_approvals(handle):
                    shown = f" ({ask.reason})" if ask.reason else ""
                    sys.stdout.write(f"{ask.call_id}  {ask.tool_name} {ask.arguments}{shown}\n")
                return 0
            try:
                await sessions.answer_approval(
                    handle, call_id, "reject" if reject else "allow-once", reason
                )
            except WorkflowUpdateFailedError as exc:
                sys.stderr.write(f"tether: {sessions.refusal(exc)}\n")
                return 1
    except problems() as exc:
        return failed(exc)
    return 0
