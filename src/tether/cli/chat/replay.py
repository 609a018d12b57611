"""The earlier conversation of a resumed session, shown as the chat showed it.

Owns `replay`: when
`tether chat --resume` / `--continue` (or `/resume`) opens a session, its turns are printed before
the prompt — each prompt after `›` as it was typed (a custom command as `/review the parser`, a long
paste collapsed to `[Pasted text +N lines]`: `shown_prompt`), the answers as Markdown, one `✓`/`✗`
line per tool call with its target and code, a `!` line per shell command run in bash mode, and how
a turn ended when it did not complete — so the user sees where they left off. Long sessions show
their last `limit` turns after a line saying how many came before (`tether sessions show ID` prints
everything). Read from the session log's events; nothing is re-run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from rich.console import Console
from rich.markdown import Markdown

from ...agent.session import SessionLog
from ...agent.session.events import (
    ASSISTANT_MESSAGE,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    USER_MESSAGE,
    SessionEvent,
)
from ..visible import visible, visible_markup
from .status import call_target

__all__ = ["PASTE_LINES", "collapsed", "replay", "shown_prompt", "text_of"]

_ATTACHED: Final = '\n\n<attached path="'
PASTE_LINES: Final = 10
"""A message with more lines than this is shown collapsed (`[Pasted text +N lines]`)."""


def replay(console: Console, session: SessionLog, *, limit: int = 30) -> None:
    """Print the conversation of `session` (see the module note); nothing for a new one."""
    turns = _turns(session.events)
    if not turns:
        return
    shown = turns[-limit:]
    console.print(f"[dim]── earlier in session {session.id} ──[/dim]", highlight=False)
    if len(turns) > len(shown):
        hidden = len(turns) - len(shown)
        console.print(
            f"[dim]… {hidden} earlier turn{'s' if hidden != 1 else ''} (tether sessions show "
            f"{session.id})[/dim]",
            highlight=False,
        )
    for events in shown:
        _turn(console, events)
    console.print("[dim]── resumed ──[/dim]")


def _turns(events: Sequence[SessionEvent]) -> list[list[SessionEvent]]:
    turns: list[list[SessionEvent]] = []
    for event in events:
        if event.type == TURN_START:
            turns.append([])
        elif turns:
            turns[-1].append(event)
    return [t for t in turns if any(e.type in (USER_MESSAGE, ASSISTANT_MESSAGE) for e in t)]


def _turn(console: Console, events: Sequence[SessionEvent]) -> None:
    calls: dict[str, tuple[str, str]] = {}
    for event in events:
        data = event.data
        if event.type == USER_MESSAGE:
            _user(console, data)
        elif event.type == ASSISTANT_MESSAGE:
            message = data.get("message")
            text = text_of(message.get("content") if isinstance(message, Mapping) else None)
            if text.strip():
                console.print(Markdown(visible(text.strip(), strict=False)))
        elif event.type == TOOL_CALL:
            call_id, name = str(data.get("call_id")), str(data.get("name"))
            calls[call_id] = (name, str(data.get("arguments", "")))
        elif event.type == TOOL_RESULT:
            _result(console, data, calls)
        elif event.type == TURN_END:
            reason = data.get("reason")
            kind = reason.get("kind") if isinstance(reason, Mapping) else None
            if kind not in (None, "completed", "compacted"):
                console.print(f"[dim]turn {visible_markup(str(kind))}[/dim]", highlight=False)


def shown_prompt(data: Mapping[str, object], *, collapse: bool = True) -> str | None:
    """What the user typed for a user-message event: a custom command or `/init` as typed
    (`/review the parser`, not its expanded template), `!command` for bash mode, a message
    without the files its `@path`s attached, and — `collapse` — a message longer than
    `PASTE_LINES` lines as its first line and `[Pasted text +N lines]`. None for a message the
    user did not type (a compaction summary)."""
    source = data.get("source")
    kind = source.get("kind") if isinstance(source, Mapping) else None
    if kind != "user" or not isinstance(source, Mapping):
        return None
    form = source.get("form")
    if form == "bash":
        return f"!{source.get('command') or ''}"
    if form == "command" and isinstance(source.get("typed"), str):
        return str(source["typed"])
    prompt = text_of(data.get("content")).partition(_ATTACHED)[0].strip()
    return collapsed(prompt) if collapse else prompt


def collapsed(text: str) -> str:
    """`text`, or for more than `PASTE_LINES` lines its first line and `[Pasted text +N
    lines]` (N: the lines not shown), as Claude Code shows a long paste."""
    lines = text.splitlines()
    if len(lines) <= PASTE_LINES:
        return text
    return f"{lines[0]} [Pasted text +{len(lines) - 1} lines]"


def _user(console: Console, data: Mapping[str, object]) -> None:
    source = data.get("source")
    kind = source.get("kind") if isinstance(source, Mapping) else None
    shown = shown_prompt(data)
    if shown is not None and isinstance(source, Mapping) and source.get("form") == "bash":
        console.print(f"[magenta]![/magenta] {visible_markup(shown[1:])}", highlight=False)
    elif shown is not None:
        console.print(f"[bold]›[/bold] {visible_markup(shown)}", highlight=False)
    elif kind == "compaction":
        console.print("[dim]⟳ continued from a summary of an earlier session[/dim]")


def _result(
    console: Console, data: Mapping[str, object], calls: Mapping[str, tuple[str, str]]
) -> None:
    message = data.get("message")
    source = message.get("source") if isinstance(message, Mapping) else None
    call_id = str(source.get("call_id")) if isinstance(source, Mapping) else ""
    name, arguments = calls.get(call_id, ("?", ""))
    target = call_target(arguments)
    label = visible_markup(f"{name} {target}" if target else name)
    error = data.get("error")
    if isinstance(error, Mapping):
        code = visible_markup(str(error.get("code") or "ERROR"))
        console.print(f"[red]✗ {label} {code}[/red]", highlight=False)
    else:
        console.print(f"[green]✓ {label}[/green]", highlight=False)


def text_of(blocks: object) -> str:
    """The text blocks of a message's content, joined."""
    if not isinstance(blocks, list | tuple):
        return ""
    return "".join(
        str(block.get("text", ""))
        for block in blocks
        if isinstance(block, Mapping) and block.get("type") == "text"
    )
