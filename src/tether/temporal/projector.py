"""The projector: tether's JSONL session log, written from a session workflow's recorded turns.

Owns turning the workflow's log entries into `SessionLog` appends, so `tether sessions
show/check/list` work unchanged. The projection is 1:1 — the session file's event `i` is the
workflow's entry `i`, counted over every run of the workflow id (a session continues as new
between turns) — and whole turns at a time, so the file is balanced at every turn boundary and a
projector that restarts, or lagged behind, continues at the log's `next_seq`.

Where entries come from: a turn's `run_turn` result (`TurnResult.entries`), as the client got it
or as the workflow's history recorded it (`recorded_turns`) — the entries as they were produced,
never derived again by newer code. Fields an activity stored by reference are filled in from
the payload store (`BlobStore.resolve`). Only a run recorded before turns carried their entries
is read through the `log_page` query. A `tool/result` cites its `tool/call`
(`source_event_seqs`), as the local loop's do.
"""

from __future__ import annotations

from collections.abc import Sequence

from temporalio.client import Client

from ..agent.session import SessionError, SessionLog
from ..agent.session.events import TOOL_CALL, TOOL_RESULT, result_call_id
from .blobs import BlobStore
from .client import log_entries, recorded_turns
from .payloads import LogEntry, TurnResult

__all__ = ["append_entries", "catch_up", "project_turn"]


async def append_entries(session: SessionLog, entries: Sequence[LogEntry], blobs: BlobStore) -> int:
    """Append `entries` to `session` in order (each resolved from the store); how many."""
    calls: dict[str, int] = {}
    for event in session.events:
        if event.type == TOOL_CALL and isinstance(event.data.get("call_id"), str):
            calls[str(event.data["call_id"])] = event.seq
    for entry in entries:
        data = await blobs.resolve(entry)
        cites: list[int] | None = None
        if entry.type == TOOL_RESULT:
            answered = result_call_id(data)
            seq = None if answered is None else calls.get(answered)
            cites = None if seq is None else [seq]
        event = session.append(entry.type, data, source_event_seqs=cites)
        if entry.type == TOOL_CALL:
            calls[str(data["call_id"])] = event.seq
    return len(entries)


async def project_turn(session: SessionLog, turn: TurnResult, blobs: BlobStore) -> int:
    """Append the part of a turn's recorded entries the log does not have yet; how many.

    Raises SessionError when the log ends before the turn starts (a turn is missing between)."""
    entries = turn.entries or []
    start = turn.log_size - len(entries)
    if session.next_seq < start:
        raise SessionError(
            f"session {session.id} has {session.next_seq} events but turn {turn.turn} starts at "
            f"event {start}: project the turns before it first",
            "SESSION_INVALID_EVENT",
        )
    return await append_entries(session, entries[session.next_seq - start :], blobs)


async def catch_up(
    client: Client,
    blobs: BlobStore,
    workflow_id: str,
    session: SessionLog,
    *,
    through: int | None = None,
) -> int:
    """Append every recorded turn the log does not have yet (those ending at or before entry
    `through`, when given); how many entries were appended."""
    turns = await recorded_turns(client, workflow_id, session.next_seq)
    if through is not None:
        turns = [t for t in turns if t.log_size <= through]
    if all(t.entries is not None for t in turns):
        appended = 0
        for turn in turns:
            appended += await project_turn(session, turn, blobs)
        return appended
    entries = await log_entries(client, workflow_id, session.next_seq)  # an older run's turns
    if through is not None:
        entries = entries[: max(0, through - session.next_seq)]
    return await append_entries(session, entries, blobs)
