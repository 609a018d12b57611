"""Session files on disk: where they live, and reading one back (torn tails detected).

Owns: the layout (`<root>/<encoded id>/session.jsonl`, plus `writer.lock` next to it), the
injective id encoding, and parsing a file into its header and events. A final line without its
newline, or a final line that is not a valid event, is a *torn tail*: reported (`TornTail`) with
where it starts, never silently used. Any other bad line is corruption. Does not own writing,
locking or repair (`log.py`, `repair.py`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from .events import SessionError, SessionEvent, SessionHeader

__all__ = [
    "LOCK_NAME",
    "LOG_NAME",
    "LineProblem",
    "LogContents",
    "TornTail",
    "encode_session_id",
    "parse_log",
    "read_log",
]

LOG_NAME: Final = "session.jsonl"
LOCK_NAME: Final = "writer.lock"
_SAFE: Final = re.compile(r"[A-Za-z0-9._-]")


def encode_session_id(session_id: str) -> str:
    """A file-name-safe, injective encoding: every unit outside `[A-Za-z0-9._-]` (and `~`)
    becomes `~XXXX` (UTF-16, upper-case hex); `.` and `..` are escaped whole.

    Raises SessionError(`SESSION_INVALID_ID`) for an empty id.
    """
    if not session_id:
        raise SessionError("a session id must be a non-empty string", "SESSION_INVALID_ID")
    out: list[str] = []
    for ch in session_id:
        if _SAFE.fullmatch(ch):
            out.append(ch)
        else:
            units = ch.encode("utf-16-be")
            out.extend(f"~{units[i] << 8 | units[i + 1]:04X}" for i in range(0, len(units), 2))
    encoded = "".join(out)
    if encoded in (".", ".."):
        encoded = "~002E" * len(encoded)
    return encoded


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
    problems: tuple[LineProblem, ...]  # every bad line, in order (a torn tail included)
    torn_tail: TornTail | None  # the last line, when it is the only bad one
    size: int  # bytes of the valid prefix: where the next append goes after a repair


def parse_log(data: bytes) -> LogContents:
    """Parse file bytes leniently: never raises for content problems."""
    header: SessionHeader | None = None
    events: list[SessionEvent] = []
    problems: list[LineProblem] = []
    offset = 0
    size = 0
    lines = data.split(b"\n")
    last = len(lines) - 1  # lines[last] is what follows the final newline ("" when complete)
    for number, raw in enumerate(lines, start=1):
        start, offset = offset, offset + len(raw) + 1
        if number - 1 == last:
            if raw:
                problems.append(
                    LineProblem(number, start, len(raw), "the last line has no newline")
                )
            break
        try:
            value = json.loads(raw)
            if number == 1:
                header = SessionHeader.from_json(value)
            else:
                events.append(SessionEvent.from_json(value))
        except SessionError as error:
            if error.code == "SESSION_VERSION":
                raise
            problems.append(LineProblem(number, start, len(raw) + 1, error.message))
            continue
        except ValueError as error:
            reason = "not valid JSON" if isinstance(error, json.JSONDecodeError) else str(error)
            problems.append(LineProblem(number, start, len(raw) + 1, reason))
            continue
        if not problems:
            size = offset
    torn = None
    if len(problems) == 1 and problems[0].line >= max(2, len(lines) - 1) and header is not None:
        p = problems[0]
        if p.offset == size:  # nothing valid after it
            torn = TornTail(p.line, p.offset, len(data) - p.offset, p.reason)
    return LogContents(header, tuple(events), tuple(problems), torn, size)


def read_log(path: Path) -> LogContents:
    """Read a session file strictly: only a torn tail is tolerated (and reported).

    Raises SessionError: `SESSION_NOT_FOUND`, `SESSION_VERSION` (a newer format), or
    `SESSION_CORRUPT` naming the first bad line or seq gap.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SessionError(f"no session file at {path}", "SESSION_NOT_FOUND") from None
    contents = parse_log(data)
    if contents.header is None:
        raise SessionError(f"{path}: line 1 is not a session header", "SESSION_CORRUPT")
    for problem in contents.problems:
        if contents.torn_tail is None or problem.line != contents.torn_tail.line:
            raise SessionError(
                f"{path}: line {problem.line} is corrupt ({problem.reason}); run"
                " `tether sessions check` for details",
                "SESSION_CORRUPT",
            )
    for expected, event in enumerate(contents.events):
        if event.seq != expected:
            raise SessionError(
                f"{path}: seq {event.seq} where {expected} was expected (a gap or duplicate)",
                "SESSION_CORRUPT",
            )
    return contents
