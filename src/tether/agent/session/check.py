"""Verifying a session log: its header, seq contiguity, call/result balance, turn structure.

Owns: `check_events` and `check_data` (and `Defect`), which read records and never raise or
repair. A healthy log returns `[]`. Defect codes:

    EMPTY_FILE        the file has no bytes at all (no header)
    BAD_HEADER        line 1 is not a session header
    VERSION           the header names a format version this tether does not read
    UNREADABLE        the file cannot be read (reported by `SessionStore.check`)
    INVALID_LINE      a line that is not a valid record (not the last line)
    TORN_TAIL         the last line is incomplete or invalid (load cuts it)
    SEQ_GAP           seq is not contiguous from 0 (a gap or a duplicate)
    OPEN_TURN         the last turn has no turn/end (a crash; load closes it)
    NESTED_TURN       turn/start while another turn is open
    DUPLICATE_CALL    two tool/call events with one call id
    MISSING_RESULT    a tool/call, or a tool call the model requested, without a tool/result;
                      a Code Mode tool/code-dispatch-start without its tool/code-dispatch
    DUPLICATE_RESULT  more than one tool/result for one call id
    ORPHAN_RESULT     a tool/result answering no recorded or requested call
    INVALID_EVENT     a core event without its required fields
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import events as ev
from .events import SessionError, SessionEvent, assistant_call_ids, result_call_id
from .files import LineProblem, LogContents, parse_log

__all__ = ["Defect", "check_data", "check_events"]


@dataclass(frozen=True, slots=True)
class Defect:
    """One problem in a log; `message` is a full sentence naming where."""

    code: str
    message: str
    seq: int | None = None
    line: int | None = None

    def __str__(self) -> str:
        return self.message


def check_data(data: bytes) -> tuple[LogContents | None, list[Defect]]:
    """Every defect of a session file's bytes, and the parsed file (None for another version)."""
    if not data:
        return None, [Defect("EMPTY_FILE", "the file is empty: it has no session header", line=1)]
    try:
        contents = parse_log(data)
    except SessionError as error:  # SESSION_VERSION
        return None, [Defect("VERSION", f"line 1: {error.message}", line=1)]
    total = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    problems = list(contents.problems)
    defects: list[Defect] = []
    if contents.header is None and problems and problems[0].line == 1:
        reason = problems.pop(0).reason
        detail = "" if "session header" in reason else f" ({reason})"
        defects.append(Defect("BAD_HEADER", f"line 1 is not a session header{detail}", line=1))
    return contents, defects + check_events(contents.events, problems, total)


def check_events(
    events: Sequence[SessionEvent], problems: Sequence[LineProblem] = (), total_lines: int = 0
) -> list[Defect]:
    """Every defect of a parsed log, in file order within each kind of check."""
    defects: list[Defect] = []
    last_line = max(total_lines, max((p.line for p in problems), default=0))
    for problem in problems:
        code = "TORN_TAIL" if problem.line == last_line else "INVALID_LINE"
        defects.append(Defect(code, f"line {problem.line}: {problem.reason}", line=problem.line))
    for expected, event in enumerate(events):
        if event.seq != expected:
            defects.append(
                Defect(
                    "SEQ_GAP",
                    f"seq {event.seq} ({event.type}) where {expected} was expected",
                    seq=event.seq,
                )
            )
            break
    defects.extend(_structure(events))
    return defects


def _structure(events: Sequence[SessionEvent]) -> list[Defect]:
    defects: list[Defect] = []
    calls: dict[str, SessionEvent] = {}
    requested: dict[str, SessionEvent] = {}  # call id -> the assistant/message that asked
    results: dict[str, list[SessionEvent]] = {}
    sub_calls: dict[str, SessionEvent] = {}  # Code Mode sub-calls started, not yet settled
    open_turn: SessionEvent | None = None
    for event in events:
        data = event.data
        match event.type:
            case ev.TURN_START:
                if open_turn is not None:
                    defects.append(
                        Defect(
                            "NESTED_TURN",
                            f"turn/start at seq {event.seq} while turn"
                            f" {open_turn.data.get('turn')} (seq {open_turn.seq}) is open",
                            seq=event.seq,
                        )
                    )
                open_turn = event
            case ev.TURN_END:
                open_turn = None
            case ev.ASSISTANT_MESSAGE:
                for call_id in assistant_call_ids(data):
                    requested.setdefault(call_id, event)
            case ev.TOOL_CALL:
                recorded = data.get("call_id")
                if not isinstance(recorded, str) or not isinstance(data.get("name"), str):
                    defects.append(
                        Defect(
                            "INVALID_EVENT",
                            f"tool/call at seq {event.seq} has no call_id or name",
                            seq=event.seq,
                        )
                    )
                elif recorded in calls:
                    defects.append(
                        Defect(
                            "DUPLICATE_CALL",
                            f'tool/call "{recorded}" at seq {event.seq} repeats seq'
                            f" {calls[recorded].seq}",
                            seq=event.seq,
                        )
                    )
                else:
                    calls[recorded] = event
            case ev.TOOL_RESULT:
                answer = result_call_id(data)
                if answer is None:
                    defects.append(
                        Defect(
                            "INVALID_EVENT",
                            f"tool/result at seq {event.seq} names no call id",
                            seq=event.seq,
                        )
                    )
                else:
                    results.setdefault(answer, []).append(event)
            case ev.CODE_DISPATCH_START:
                sub_calls[str(data.get("sub_call_id"))] = event
            case ev.CODE_DISPATCH:
                sub_calls.pop(str(data.get("sub_call_id")), None)
    if open_turn is not None:
        defects.append(
            Defect(
                "OPEN_TURN",
                f"turn {open_turn.data.get('turn')} (seq {open_turn.seq}) has no turn/end:"
                " the writer stopped mid-turn; loading the session closes it",
                seq=open_turn.seq,
            )
        )
    for call_id, call in calls.items():
        if call_id not in results:
            defects.append(
                Defect(
                    "MISSING_RESULT",
                    f'tool/call "{call_id}" ({call.data.get("name")}, seq {call.seq}) has no'
                    " tool/result",
                    seq=call.seq,
                )
            )
    for sub_call_id, start in sub_calls.items():
        defects.append(
            Defect(
                "MISSING_RESULT",
                f'Code Mode sub-call "{sub_call_id}" ({start.data.get("name")}, seq {start.seq})'
                f' of "{start.data.get("parent_call_id")}" has no tool/code-dispatch',
                seq=start.seq,
            )
        )
    for call_id, asked in requested.items():
        if call_id not in results and call_id not in calls:
            defects.append(
                Defect(
                    "MISSING_RESULT",
                    f'tool call "{call_id}" requested by assistant/message seq {asked.seq} has'
                    " no tool/result",
                    seq=asked.seq,
                )
            )
    for call_id, answers in results.items():
        if len(answers) > 1:
            seqs = ", ".join(str(a.seq) for a in answers)
            defects.append(
                Defect(
                    "DUPLICATE_RESULT",
                    f'tool call "{call_id}" has {len(answers)} tool/results (seqs {seqs})',
                    seq=answers[1].seq,
                )
            )
        if call_id not in calls and call_id not in requested:
            defects.append(
                Defect(
                    "ORPHAN_RESULT",
                    f'tool/result at seq {answers[0].seq} answers "{call_id}", which no'
                    " tool/call or assistant message names",
                    seq=answers[0].seq,
                )
            )
    return defects
