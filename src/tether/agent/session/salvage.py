"""Salvaging a damaged session file: the longest valid prefix, and what `resume` can repair.

Owns: `plan_salvage(contents)` — where a parsed file stops being a session a writer could have
produced (the first bad line; a seq that does not continue the log; a `tool/call` without its id
or name, or repeating one; a `tool/result` naming no call, answering an unknown call or
answering one twice; a `turn/start` inside an open turn, or after a turn that left calls without
results) — and `resume_repairs(contents)`, whether crash repair alone (cut a torn tail, close the
last turn) leaves a healthy log. Does not own moving bytes (`SessionStore.salvage` does: the
damaged remainder goes to a side file, the prefix's last turn is closed by
`interrupted_turn_closers`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import events as ev
from .check import check_events
from .events import SessionEvent, assistant_call_ids, result_call_id
from .files import LogContents
from .repair import interrupted_turn_closers

__all__ = ["SalvagePlan", "plan_salvage", "resume_repairs"]


@dataclass(frozen=True, slots=True)
class SalvagePlan:
    """Keep `keep` bytes (`events`); the rest, from line `first_line`, is damaged."""

    keep: int
    events: tuple[SessionEvent, ...]
    first_line: int | None  # the first damaged line (1-based); None: nothing is damaged
    last_line: int | None
    reason: str | None  # why the file stops being valid at `first_line`


def plan_salvage(contents: LogContents, data: bytes) -> SalvagePlan:
    """The valid prefix of `data` (parsed as `contents`, which has a header)."""
    problem = contents.problems[0] if contents.problems else None
    limit = len(contents.events)
    reason = None
    if problem is not None:
        limit = sum(1 for offset in contents.offsets if offset < problem.offset)
        reason = f"line {problem.line}: {problem.reason}"
    bad, why = _first_invalid(contents.events[:limit])
    if bad is not None:
        limit, reason = bad, why
    if reason is None:
        return SalvagePlan(contents.size, contents.events, None, None, None)
    keep = contents.offsets[limit] if limit < len(contents.events) else len(data)
    if problem is not None:
        keep = min(keep, problem.offset)
    last_line = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    return SalvagePlan(
        keep, contents.events[:limit], data[:keep].count(b"\n") + 1, last_line, reason
    )


def _first_invalid(events: Sequence[SessionEvent]) -> tuple[int | None, str | None]:
    """The index of the first event a writer could not have appended, and why."""
    calls: set[str] = set()
    requested: set[str] = set()
    answered: set[str] = set()
    turn_calls: set[str] = set()  # requested or recorded in the current (or last) turn
    turn_open = False
    for index, event in enumerate(events):
        where = f"seq {event.seq} ({event.type})"
        if event.seq != index:
            return index, f"{where}: seq {event.seq} where {index} was expected"
        data = event.data
        match event.type:
            case ev.TURN_START:
                if turn_open:
                    return index, f"{where}: a turn/start while another turn is open"
                missing = sorted(turn_calls - answered)
                if missing:
                    return index, f"{where}: the previous turn left {missing} without results"
                turn_open, turn_calls = True, set()
            case ev.TURN_END:
                turn_open = False
            case ev.ASSISTANT_MESSAGE:
                for call_id in assistant_call_ids(data):
                    requested.add(call_id)
                    turn_calls.add(call_id)
            case ev.TOOL_CALL:
                recorded = data.get("call_id")
                if not isinstance(recorded, str) or not recorded:
                    return index, f"{where}: a tool/call without a call_id"
                if not isinstance(data.get("name"), str):
                    return index, f"{where}: a tool/call without a name"
                if recorded in calls:
                    return index, f'{where}: tool/call "{recorded}" is recorded twice'
                calls.add(recorded)
                turn_calls.add(recorded)
            case ev.TOOL_RESULT:
                answer = result_call_id(data)
                if answer is None:
                    return index, f"{where}: a tool/result naming no call"
                if answer in answered:
                    return index, f'{where}: a second tool/result for "{answer}"'
                if answer not in calls and answer not in requested:
                    return index, f'{where}: a tool/result for "{answer}", which nothing asked for'
                answered.add(answer)
    return None, None


def resume_repairs(contents: LogContents) -> bool:
    """Whether `SessionStore.open` (cut a torn tail, close the last turn) yields a healthy log."""
    if contents.header is None:
        return False
    tail = contents.torn_tail
    if any(tail is None or p.line != tail.line for p in contents.problems):
        return False
    if any(event.seq != index for index, event in enumerate(contents.events)):
        return False
    repaired = (*contents.events, *interrupted_turn_closers(contents.events))
    return not check_events(repaired)
