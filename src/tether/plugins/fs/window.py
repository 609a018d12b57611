"""The `read` window: which lines of a text a `read` returns (spec §6.3, window algorithm).

Owns: splitting text fed in chunks into numbered lines, the per-line length cap, the byte cap on
the selected lines, and exact line counting. Memory is bounded: only selected lines are kept,
and the current line's buffer never holds more than `max_line_length + 1` characters. Pure: no
I/O, no signals.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Window", "WindowBuilder"]


@dataclass(frozen=True, slots=True)
class Window:
    """`lines`: (number, text) pairs; `total_lines`: every line in the text."""

    lines: tuple[tuple[int, str], ...]
    total_lines: int
    truncated_by_bytes: bool


class WindowBuilder:
    """Feed text chunks, then `finish()`. Lines split on `\\n`, one trailing `\\r` dropped; a
    final line without a newline counts, a trailing newline adds no empty line."""

    __slots__ = (
        "_buffer",
        "_bytes",
        "_count",
        "_limit",
        "_lines",
        "_max_bytes",
        "_max_len",
        "_offset",
        "_open",
        "_truncated",
    )

    def __init__(self, offset: int, limit: int, max_line_length: int, max_bytes: int) -> None:
        self._offset = offset
        self._limit = limit
        self._max_len = max_line_length
        self._max_bytes = max_bytes
        self._lines: list[tuple[int, str]] = []
        self._buffer = ""  # the current line, at most max_len + 1 chars, only while selecting
        self._open = False  # characters seen since the last newline
        self._count = 0  # completed lines
        self._bytes = 0
        self._truncated = False

    def _selecting(self, number: int) -> bool:
        return number >= self._offset and len(self._lines) < self._limit and not self._truncated

    def feed(self, chunk: str) -> None:
        """Consume the next piece of text."""
        start = 0
        end = len(chunk)
        while start < end:
            newline = chunk.find("\n", start)
            stop = end if newline < 0 else newline
            if self._selecting(self._count + 1):
                room = self._max_len + 1 - len(self._buffer)
                if room > 0:
                    self._buffer += chunk[start : min(stop, start + room)]
            if stop > start:
                self._open = True
            if newline < 0:
                return
            self._complete()
            start = newline + 1
            if not self._selecting(self._count + 1):
                # Nothing more to keep for a while: count the remaining newlines in bulk.
                skip_to = self._skip_target(chunk, start, end)
                if skip_to > start:
                    self._count += chunk.count("\n", start, skip_to)
                    start = skip_to
                    self._open = False

    def _skip_target(self, chunk: str, start: int, end: int) -> int:
        """Position after the last newline that can be counted without selecting anything."""
        if (
            self._count + 1 < self._offset
            and not self._truncated
            and len(self._lines) < self._limit
        ):
            # Lines before the window: skip up to the newline that ends line offset - 1.
            needed = self._offset - 1 - self._count
            pos = start
            for _ in range(needed):
                found = chunk.find("\n", pos, end)
                if found < 0:
                    return pos
                pos = found + 1
            return pos
        last = chunk.rfind("\n", start, end)
        return start if last < 0 else last + 1

    def _complete(self) -> None:
        self._count += 1
        number = self._count
        if self._selecting(number):
            text = self._buffer
            if text.endswith("\r"):
                text = text[:-1]
            if len(text) > self._max_len:
                text = f"{text[: self._max_len]}... (line truncated to {self._max_len} chars)"
            size = len(text.encode("utf-8")) + (1 if self._lines else 0)
            if self._bytes + size > self._max_bytes:
                self._truncated = True
            else:
                self._bytes += size
                self._lines.append((number, text))
        self._buffer = ""
        self._open = False

    def finish(self) -> Window:
        """The window; a final unterminated line is counted (and selected) here."""
        if self._open:
            self._complete()
        return Window(tuple(self._lines), self._count, self._truncated)
