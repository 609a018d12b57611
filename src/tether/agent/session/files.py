"""Session files on disk: reading one back (torn tails detected).

Owns parsing a file into its header and events (where files live and the id encoding are
`layout.py`'s, re-exported here). A final line without its newline that is not a complete valid
record, or a final line that is not a valid event, is a *torn tail*: reported (`TornTail`) with
where it starts, never silently used (a complete record that lacks only its newline is a
record). Any other bad line is corruption. Does not own writing, locking or repair (`log.py`,
`repair.py`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .events import SessionError, SessionEvent, SessionHeader
from .layout import LOCK_NAME, LOG_NAME, decode_session_id, encode_session_id

__all__ = [
    "LOCK_NAME",
    "LOG_NAME",
    "LineProblem",
    "LogContents",
    "TornTail",
    "decode_session_id",
    "encode_session_id",
    "parse_log",
    "read_log",
]


@dataclass(frozen=True, slots=True)
class TornTail:
    """An incomplete or unreadable last line: bytes `offset` to end, 1-based `line`."""

    line: int
    offset: int
    length: int
    reason: str

    def describe(self) -> str:
        return f"line {self.line} ({self.length} bytes at offset {self.offset}): {self.reason}"


@dataclass(frozen=True, slots=True)
class LineProblem:
    """A line that is not a valid record (1-based `line`)."""

    line: int
    offset: int
    length: int
    reason: str


@dataclass(frozen=True, slots=True)
class LogContents:
    """A parsed file: the valid records, and what was wrong with the others."""

    header: SessionHeader | None
    events: tuple[SessionEvent, ...]
    offsets: tuple[int, ...]  # where each event's line starts (parallel to `events`)
    problems: tuple[LineProblem, ...]  # every bad line, in order (a torn tail included)
    torn_tail: TornTail | None  # the last line, when it is the only bad one
    size: int  # bytes of the valid prefix: where the next append goes after a repair
    newline_missing: bool = False  # the valid prefix ends with a record but no newline


def parse_log(data: bytes) -> LogContents:
    """Parse file bytes leniently: never raises for content problems.

    A final line without its newline that is a complete, valid record is a record
    (`newline_missing`), not a torn tail. Raises SessionError(`SESSION_VERSION`) for a header of
    another format version.
    """
    header: SessionHeader | None = None
    events: list[SessionEvent] = []
    offsets: list[int] = []
    problems: list[LineProblem] = []
    offset = 0
    size = 0
    newline_missing = False
    lines = data.split(b"\n")
    last = len(lines) - 1  # lines[last] is what follows the final newline ("" when complete)
    for number, raw in enumerate(lines, start=1):
        start, offset = offset, offset + len(raw) + 1
        unterminated = number - 1 == last
        if unterminated:
            if not raw:
                break
            offset = len(data)
        length = len(raw) + (0 if unterminated else 1)
        try:
            value = json.loads(raw)
            if number == 1:
                header = SessionHeader.from_json(value)
            else:
                events.append(SessionEvent.from_json(value))
                offsets.append(start)
        except SessionError as error:
            if error.code == "SESSION_VERSION":
                raise
            problems.append(
                LineProblem(number, start, length, _reason(error.message, unterminated))
            )
            continue
        except ValueError as error:
            reason = "not valid JSON" if isinstance(error, json.JSONDecodeError) else str(error)
            problems.append(LineProblem(number, start, length, _reason(reason, unterminated)))
            continue
        if unterminated:
            newline_missing = not problems
        if not problems:
            size = offset
    torn = None
    if len(problems) == 1 and problems[0].line >= max(2, len(lines) - 1) and header is not None:
        p = problems[0]
        if p.offset == size:  # nothing valid after it
            torn = TornTail(p.line, p.offset, len(data) - p.offset, p.reason)
    return LogContents(
        header, tuple(events), tuple(offsets), tuple(problems), torn, size, newline_missing
    )


def _reason(reason: str, unterminated: bool) -> str:
    return "the last line has no newline" if unterminated else reason


def read_log(path: Path) -> LogContents:
    """Read a session file strictly: only a torn tail is tolerated (and reported).

    Raises SessionError: `SESSION_NOT_FOUND`, `SESSION_UNREADABLE` (the OS refused the read),
    `SESSION_VERSION` (a newer format), or `SESSION_CORRUPT` naming the first bad line or seq gap.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SessionError(f"no session file at {path}", "SESSION_NOT_FOUND") from None
    except OSError as error:
        raise SessionError(f"cannot read {path}: {error}", "SESSION_UNREADABLE") from error
    contents = parse_log(data)
    if contents.header is None:
        raise SessionError(f"{path}: line 1 is not a session header", "SESSION_CORRUPT")
    for problem in contents.problems:
        if contents.torn_tail is None or problem.line != contents.torn_tail.line:
            raise SessionError(
                f"{path}: line {problem.line} is corrupt ({problem.reason})", "SESSION_CORRUPT"
            )
    for expected, event in enumerate(contents.events):
        if event.seq != expected:
            raise SessionError(
                f"{path}: seq {event.seq} where {expected} was expected (a gap or duplicate)",
                "SESSION_CORRUPT",
            )
    return contents
