"""The projector: tether's JSONL session log, written from a session workflow.

Owns turning the workflow's log entries (its `log_page` query, itself a pure function of the
workflow's Temporal history, which is the durable record) into `SessionLog` appends, so `tether
sessions show/check/list` work unchanged. The projection is 1:1 — the session file's event `i`
is the workflow's entry `i`, counted over every run of the workflow id (a session continues as
new between turns) — so a projector that restarts, or lagged behind a continue-as-new,
continues at the log's `next_seq`.
Projecting whole turns (through a `TurnResult.log_size`) keeps the file balanced at every turn
boundary. A `tool/result` cites its `tool/call` (`source_event_seqs`), as the local loop's do.
"""

from __future__ import annotations

from collections.abc import Sequence

from temporalio.client import Client

from ..agent.session import SessionLog
from ..agent.session.events import TOOL_CALL, TOOL_RESULT, result_call_id
from .client import log_entries
from .payloads import LogEntry

__all__ = ["append_entries", "project"]


def append_entries(session: SessionLog, entries: Sequence[LogEntry]) -> int:
    """Append `entries` to `session` in order; returns how many were appended."""
    calls: dict[str, int] = {}
    for event in session.events:
        if event.type == TOOL_CALL and isinstance(event.data.get("call_id"), str):
            calls[str(event.data["call_id"])] = event.seq
    for entry in entries:
        cites: list[int] | None = None
        if entry.type == TOOL_RESULT:
            answered = result_call_id(entry.data)
            seq = None if answered is None else calls.get(answered)
            cites = None if seq is None else [seq]
        event = session.append(entry.type, entry.data, source_event_seqs=cites)
        if entry.type == TOOL_CALL:
            calls[str(entry.data["call_id"])] = event.seq
    return len(entries)


async def project(
    client: Client, workflow_id: str, session: SessionLog, *, through: int | None = None
) -> int:
    """Append the workflow's entries the log does not have yet (up to entry `through`, e.g. a
    turn's `log_size`); returns how many were appended."""
    entries = await log_entries(client, workflow_id, session.next_seq)
    if through is not None:
        entries = entries[: max(0, through - session.next_seq)]
    return append_entries(session, entries)
