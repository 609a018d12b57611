"""Crash repair: the events that close a turn a crash left open (spec §7.6), exact texts.

Owns: `interrupted_turn_closers(events)`, which computes — without writing anything — the
synthetic `tool/result`s, `step/end` and `turn/end {reason: {kind: "interrupted"}}` that close the
last turn when it has no `turn/end` (or only its missing results, when a writer that could not
record them closed it). Does not own applying them (`SessionLog` appends them durably on open and
on `recover()`; a read-only load appends them in memory), nor salvaging a damaged file
(`salvage.py`).

For every tool call of the last turn that has no `tool/result` — the tool-call blocks of its
assistant messages, in model order, then any recorded `tool/call` no block names — one result:
  * a `tool/call` was recorded: the outcome is unknown (the body may have run), code
    `TOOL_OUTCOME_UNKNOWN`, citing the call's seq in `source_event_seqs`;
  * none was recorded: the call never started, code `TOOL_NOT_STARTED`.
Results are error results (`is_error: true`) with message id
`interrupted-tool-result-<call_id>-<seq>`; seqs continue the log and `time` repeats the last
event's time.

Subagents: a recorded call that started a child agent (a `subagent/spawned` event names the
call and the child's session) gets the same `TOOL_OUTCOME_UNKNOWN` result, its text naming the
child session (`subagent_note`), whose own log records what the child did.

Code Mode children: every `tool/code-dispatch-start` of the open turn without its
`tool/code-dispatch` gets one, `TOOL_OUTCOME_UNKNOWN` (citing the start's seq), before the
results of the model calls — so an open `run_code` closes after its children.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ...core.json import FrozenDict, JsonValue, snapshot
from ..messages import ToolResultMessage, message_to_json
from . import events as ev
from .events import SessionEvent, assistant_call_ids, result_call_id

__all__ = [
    "OUTCOME_UNKNOWN_TEXT",
    "TOOL_NOT_STARTED",
    "TOOL_NOT_STARTED_TEXT",
    "TOOL_OUTCOME_UNKNOWN",
    "interrupted_turn_closers",
    "open_turn",
    "spawned_children",
    "subagent_note",
]

TOOL_OUTCOME_UNKNOWN: Final = "TOOL_OUTCOME_UNKNOWN"
TOOL_NOT_STARTED: Final = "TOOL_NOT_STARTED"
OUTCOME_UNKNOWN_TEXT: Final = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded."
    " Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the"
    " operation is read-only or idempotent; if it may have side effects, first verify external"
    " state or ask the user. Do not retry blindly."
)
TOOL_NOT_STARTED_TEXT: Final = (
    "The tool call was interrupted before the Harness recorded it as started."
    " Retry it if it is still needed."
)


@dataclass(slots=True)
class _Pending:
    turn: int
    step: int
    call_seq: int | None = None


def subagent_note(child_session: str) -> str:
    """What a synthetic result adds for a call that started a child agent."""
    return (
        f" This call ran a subagent in session {child_session}; its own log records what it"
        f" did: `tether sessions show {child_session}`."
    )


def spawned_children(events: Sequence[SessionEvent]) -> dict[str, str]:
    """Call id → the child session it started, from `subagent/spawned` events, in log order."""
    found: dict[str, str] = {}
    for event in events:
        if event.type == ev.SUBAGENT_SPAWNED:
            call_id, child = event.data.get("call_id"), event.data.get("session_id")
            if isinstance(call_id, str) and isinstance(child, str):
                found[call_id] = child
    return found


def open_turn(events: Sequence[SessionEvent]) -> int | None:
    """The number of the last turn when it has a `turn/start` but no `turn/end`, else None."""
    current: int | None = None
    for event in events:
        if event.type == ev.TURN_START:
            current = _int(event.data.get("turn"), 0)
        elif event.type == ev.TURN_END:
            current = None
    return current


def interrupted_turn_closers(
    events: Sequence[SessionEvent],
    *,
    held: Mapping[str, SessionEvent] | None = None,
    reason: Mapping[str, JsonValue] | None = None,
) -> list[SessionEvent]:
    """The events that close the last turn: its missing tool results, then (when it is still
    open) its `step/end` and `turn/end` (`reason`, by default `{"kind": "interrupted"}`).

    Empty when the last turn is closed and every call of it has a result. A turn closed without
    some results (a writer that could not record them) gets them after its `turn/end`. `held`
    maps call ids to results the writer still had in memory: those are used as they are
    (renumbered) instead of synthetic ones.
    """
    turn: int | None = None
    closed = True
    step: tuple[int, int] | None = None
    pending: dict[str, _Pending] = {}  # insertion order: blocks in model order, then calls
    answered: set[str] = set()
    children: dict[str, SessionEvent] = {}  # open Code Mode sub-calls by sub_call_id
    for event in events:
        data = event.data
        match event.type:
            case ev.TURN_START:
                turn, closed, step = _int(data.get("turn"), 0), False, None
                pending.clear()
                answered.clear()
                children.clear()
            case ev.TURN_END:
                closed, step = True, None
            case ev.STEP_START:
                step = (_int(data.get("turn"), turn or 0), _int(data.get("step"), 0))
            case ev.STEP_END:
                step = None
            case ev.ASSISTANT_MESSAGE:
                where = (_int(data.get("turn"), turn or 0), _int(data.get("step"), 0))
                for call_id in assistant_call_ids(data):
                    pending.setdefault(call_id, _Pending(*where))
            case ev.TOOL_CALL:
                recorded_id = data.get("call_id")
                if isinstance(recorded_id, str):
                    entry = pending.setdefault(
                        recorded_id,
                        _Pending(_int(data.get("turn"), turn or 0), _int(data.get("step"), 0)),
                    )
                    entry.call_seq = event.seq
            case ev.TOOL_RESULT:
                answer = result_call_id(data)
                if answer is not None:
                    answered.add(answer)
            case ev.CODE_DISPATCH_START:
                if isinstance(data.get("sub_call_id"), str):
                    children[str(data.get("sub_call_id"))] = event
            case ev.CODE_DISPATCH:
                children.pop(str(data.get("sub_call_id")), None)
    if turn is None:
        return []
    seq = events[-1].seq + 1 if events else 0
    when = events[-1].time if events else 0
    children_of = spawned_children(events)
    closers: list[SessionEvent] = []
    for start in children.values():
        outcome: dict[str, object] = {
            **start.data,
            "is_error": True,
            "content": [{"type": "text", "text": OUTCOME_UNKNOWN_TEXT}],
            "error": {
                "message": OUTCOME_UNKNOWN_TEXT,
                "info": {"name": "ToolOutcomeUnknownError", "code": TOOL_OUTCOME_UNKNOWN},
            },
        }
        child = FrozenDict(outcome)
        closers.append(SessionEvent(ev.CODE_DISPATCH, seq, when, child, (start.seq,)))
        seq += 1
    for call_id, entry in pending.items():
        if call_id in answered:
            continue
        kept = (held or {}).get(call_id)
        if kept is not None and entry.call_seq is not None:
            closers.append(
                SessionEvent(ev.TOOL_RESULT, seq, kept.time, kept.data, (entry.call_seq,))
            )
            seq += 1
            continue
        closers.append(_synthetic_result(call_id, entry, seq, when, children_of.get(call_id)))
        seq += 1
    if closed:
        return closers
    if step is not None:
        closers.append(SessionEvent(ev.STEP_END, seq, when, FrozenDict(turn=step[0], step=step[1])))
        seq += 1
    ending = FrozenDict(turn=turn, reason=snapshot(dict(reason or {"kind": "interrupted"})))
    closers.append(SessionEvent(ev.TURN_END, seq, when, ending))
    return closers


def _synthetic_result(
    call_id: str, entry: _Pending, seq: int, when: int, child: str | None
) -> SessionEvent:
    recorded = entry.call_seq is not None
    text = OUTCOME_UNKNOWN_TEXT if recorded else TOOL_NOT_STARTED_TEXT
    if recorded and child is not None:
        text += subagent_note(child)
    message = ToolResultMessage(
        id=f"interrupted-tool-result-{call_id}-{seq}",
        call_id=call_id,
        content=[{"type": "text", "text": text}],
        is_error=True,
    )
    error: dict[str, JsonValue] = (
        {"name": "ToolOutcomeUnknownError", "code": TOOL_OUTCOME_UNKNOWN}
        if recorded
        else {"name": "ToolNotStartedError", "code": TOOL_NOT_STARTED}
    )
    data_out = FrozenDict(
        turn=entry.turn, step=entry.step, message=message_to_json(message), error=error
    )
    if recorded and child is not None:
        data_out = FrozenDict(data_out, meta={"subagent_session": child})
    cites = None if entry.call_seq is None else (entry.call_seq,)
    return SessionEvent(ev.TOOL_RESULT, seq, when, data_out, cites)


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
