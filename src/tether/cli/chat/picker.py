"""`tether chat --resume` without an id: pick the session to continue from a list.

Owns `pick_session`: the sessions of this workspace, newest first (when each was last written,
how many turns it has, its first message), in a prompt_toolkit list on the terminal — ↑/↓ or the
number, Enter continues it, Esc or Ctrl-C leaves without choosing. Without a terminal there is
nobody to choose: the caller says to pass the id (`tether sessions list` shows them).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Final

from ...agent.session import SessionSummary

__all__ = ["describe", "pick_session"]

_SHOWN: Final = 30


def describe(summary: SessionSummary) -> str:
    """`2026-12-04 13:02  fix the failing test in parser.py`."""
    when = datetime.datetime.fromtimestamp(summary.modified_at / 1000).strftime("%Y-%m-%d %H:%M")
    title = " ".join((summary.title or "(no message yet)").split())
    return f"{when}  {title[:70]}"


async def pick_session(sessions: Sequence[SessionSummary]) -> str | None:
    """The id the user picked from `sessions` (newest first), or None when they left."""
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.shortcuts.choice_input import ChoiceInput

    bindings = KeyBindings()

    @bindings.add("escape")
    def _leave(event: KeyPressEvent) -> None:
        event.app.exit(exception=KeyboardInterrupt())

    shown = list(sessions[:_SHOWN])
    chooser: ChoiceInput[str] = ChoiceInput(
        message="Resume which session? (Enter continues it, Esc leaves)",
        options=[(s.id, describe(s)) for s in shown],
        default=shown[0].id,
        key_bindings=bindings,
    )
    try:
        return await chooser.prompt_async()
    except (KeyboardInterrupt, EOFError):
        return None
