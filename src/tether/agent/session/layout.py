"""Where session files live: the layout of a sessions root and the session-id encoding.

Owns `<root>/<encoded id>/session.jsonl` (`LOG_NAME`), `writer.lock` next to it (`LOCK_NAME`) and
the injective id encoding of the directory name. Does not own reading a file back (`files.py`),
writing one (`log.py`) or locking (`writer_lock.py`). Creating a session needs this and not the
parser (issue 36).
"""

from __future__ import annotations

import re
from typing import Final

from .events import SessionError

__all__ = ["LOCK_NAME", "LOG_NAME", "decode_session_id", "encode_session_id"]

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


def decode_session_id(name: str) -> str | None:
    """The session id a directory name encodes (`encode_session_id` inverted), or None when the
    name is not such an encoding."""
    units: list[int] = []
    i = 0
    while i < len(name):
        ch = name[i]
        if ch == "~":
            digits = name[i + 1 : i + 5]
            if len(digits) != 4 or not all(c in "0123456789ABCDEF" for c in digits):
                return None
            units.append(int(digits, 16))
            i += 5
        elif _SAFE.fullmatch(ch):
            units.append(ord(ch))
            i += 1
        else:
            return None
    raw = b"".join(u.to_bytes(2, "big") for u in units)
    try:
        decoded = raw.decode("utf-16-be")
    except UnicodeDecodeError:
        return None
    return decoded if decoded and encode_session_id(decoded) == name else None
