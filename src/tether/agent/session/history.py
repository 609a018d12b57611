"""Rebuilding the model history from a session log (spec §7.6 `deriveMessages`).

Owns: `derive_messages` — the messages of the surface events (`user/message`,
`assistant/message`, `tool/result`) in log order; every other event contributes nothing, and an
assistant message without content derives nothing — and `last_turn`. Does not own the log.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from ...core.json import JsonValue
from ..messages import AssistantMessage, Message, message_from_json
from . import events as ev
from .events import SessionError, SessionEvent

__all__ = ["derive_messages", "last_turn"]


def derive_messages(events: Sequence[SessionEvent]) -> list[Message]:
    """The model history. Raises SessionError(`SESSION_CORRUPT`) for an unreadable message."""
    messages: list[Message] = []
    for event in events:
        payload: JsonValue
        if event.type == ev.USER_MESSAGE:
            payload = cast(JsonValue, event.data)
        elif event.type in (ev.ASSISTANT_MESSAGE, ev.TOOL_RESULT):
            payload = event.data.get("message")
        else:
            continue
        try:
            message = message_from_json(payload, f"seq {event.seq} {event.type} message")
        except ValueError as error:
            raise SessionError(str(error), "SESSION_CORRUPT") from error
        if isinstance(message, AssistantMessage) and not message.content:
            continue
        messages.append(message)
    return messages


def last_turn(events: Sequence[SessionEvent]) -> int:
    """The number of the last `turn/start` (0 when there is none)."""
    for event in reversed(events):
        if event.type == ev.TURN_START:
            turn = event.data.get("turn")
            if isinstance(turn, int) and not isinstance(turn, bool):
                return turn
    return 0
