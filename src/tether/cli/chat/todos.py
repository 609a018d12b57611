"""The todo list as the chat shows it: a checklist.

Owns `checklist` (the model's `todo_write` list drawn as `☒ done`, `◼ the active form of the
task in progress`, `☐ pending`) and `latest_todos` (the list the session's last `todo/write`
event recorded, for `/todos` and a resumed chat). Does not own the list's rules (the `todo`
plugin) nor when the renderer prints it (`tether.cli.chat.status`: after each successful
`todo_write` call, so the list on screen is always the current one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from rich.text import Text

from ...agent.session.events import TODO_WRITE, SessionEvent

__all__ = ["checklist", "latest_todos"]

_MARKS: Final = {"completed": "☒", "in_progress": "◼", "pending": "☐"}


def latest_todos(events: Sequence[SessionEvent]) -> list[Mapping[str, object]] | None:
    """The todos of the last `todo/write` event (None: the model never wrote a list)."""
    for event in reversed(events):
        if event.type != TODO_WRITE:
            continue
        todos = event.data.get("todos")
        if isinstance(todos, list):
            return [todo for todo in todos if isinstance(todo, Mapping)]
    return None


def checklist(todos: Sequence[Mapping[str, object]]) -> Text:
    """The list as lines: completed struck through, the task in progress (its `activeForm`
    when it has one) bold, pending plain."""
    out = Text()
    for index, todo in enumerate(todos):
        status = str(todo.get("status", "pending"))
        content = str(todo.get("content", ""))
        if status == "in_progress":
            active = todo.get("activeForm")
            label = active if isinstance(active, str) and active.strip() else content
            style = "bold"
        elif status == "completed":
            label, style = content, "dim strike"
        else:
            label, style = content, ""
        if index:
            out.append("\n")
        out.append(f"  {_MARKS.get(status, '☐')} ", style="dim" if status == "completed" else "")
        out.append(label, style=style)
    return out
