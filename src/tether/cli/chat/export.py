"""`/export [FILE]`: the conversation as Markdown, to a file or to the screen.

Owns the Markdown form of a session's conversation: each message the user typed under
`## You` (a custom command as it was typed, a pasted text whole), each answer under
`## Assistant`, one line per tool call with its target and how it ended. Without FILE it is
printed (tether has no clipboard to copy to: select it, or give a file). Read from the session
log's events, as the resume replay is (`tether.cli.chat.replay`); nothing is re-run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from ...agent.session.events import (
    ASSISTANT_MESSAGE,
    TOOL_CALL,
    TOOL_RESULT,
    USER_MESSAGE,
    SessionEvent,
)
from .replay import shown_prompt, text_of
from .status import call_target

__all__ = ["export", "markdown"]


def markdown(session_id: str, events: Sequence[SessionEvent]) -> str:
    """The conversation of `events` as Markdown."""
    out = [f"# tether session {session_id}\n"]
    calls: dict[str, str] = {}
    for event in events:
        data = event.data
        if event.type == USER_MESSAGE:
            prompt = shown_prompt(data, collapse=False)
            if prompt is not None:
                out.append(f"## You\n\n{prompt}\n")
        elif event.type == ASSISTANT_MESSAGE:
            message = data.get("message")
            text = text_of(message.get("content") if isinstance(message, Mapping) else None)
            if text.strip():
                out.append(f"## Assistant\n\n{text.strip()}\n")
        elif event.type == TOOL_CALL:
            target = call_target(str(data.get("arguments", "")))
            name = str(data.get("name"))
            calls[str(data.get("call_id"))] = f"{name} {target}" if target else name
        elif event.type == TOOL_RESULT:
            message = data.get("message")
            source = message.get("source") if isinstance(message, Mapping) else None
            call_id = str(source.get("call_id")) if isinstance(source, Mapping) else ""
            error = data.get("error")
            mark = f"✗ {error.get('code') or 'ERROR'}" if isinstance(error, Mapping) else "✓"
            out.append(f"- `{calls.get(call_id, '?')}` {mark}\n")
    return "\n".join(out)


def export(
    console: Console, session_id: str, events: Sequence[SessionEvent], target: str, cwd: Path
) -> None:
    """`/export [FILE]`: write the Markdown to FILE (relative to the workspace) or print it."""
    text = markdown(session_id, events)
    if not target:
        console.print(text, markup=False, highlight=False)
        return
    path = cwd / Path(target).expanduser()
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        console.print(
            f"[yellow]/export: cannot write {escape(str(path))}: "
            f"{escape(exc.strerror or str(exc))}[/yellow]",
            highlight=False,
        )
        return
    console.print(f"[dim]exported the conversation to {escape(str(path))}[/dim]", highlight=False)
