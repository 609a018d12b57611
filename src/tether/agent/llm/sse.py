"""Incremental Server-Sent Events framing over a byte stream.

Owns: splitting bytes into events (UTF-8, `\\n` or `\\r\\n` line ends, multi-line `data:` joined
with `\\n`, comments dropped). Does not own what an event means (the adapter decides `[DONE]`,
JSON payloads and errors).
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

__all__ = ["SseDecoder", "SseEvent"]


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: its `data` lines joined with newlines."""

    data: str
    event: str | None = None
    id: str | None = None


class SseDecoder:
    """Feed bytes, get the events completed by them. Keeps partial lines and events."""

    __slots__ = ("_data", "_decoder", "_event", "_id", "_line")

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._line = ""
        self._data: list[str] = []
        self._event: str | None = None
        self._id: str | None = None

    @property
    def pending(self) -> bool:
        """Whether a partial line or an undispatched event is buffered."""
        return bool(self._line or self._data or self._event is not None)

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """The events that `chunk` completes, in order."""
        text = self._line + self._decoder.decode(chunk)
        lines = text.split("\n")
        self._line = lines.pop()
        events: list[SseEvent] = []
        for raw in lines:
            line = raw[:-1] if raw.endswith("\r") else raw
            if not line:
                if self._data:
                    events.append(SseEvent("\n".join(self._data), self._event, self._id))
                self._data, self._event = [], None
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if name == "data":
                self._data.append(value)
            elif name == "event":
                self._event = value
            elif name == "id":
                self._id = value
        return events
