"""The terminal approval prompt of `tether chat`: a `Prompter` for the `approval` service.

Owns how a question looks and which keys answer it. It shows the tool, every argument (long
text cut to a preview) and the reason the policy gave, then reads one line:

    y  allow once          → allow-once
    a  always allow <rule> → allow-session (only when the service offers a session rule)
    n  reject              → reject (also the answer to an empty line or end of input)

Questions are asked one at a time. The prompt is cancelled — not answered — when the call's
signal aborts (Ctrl-C): the service answers `cancelled` then, and the call ends
`ABORTED_BEFORE_DISPATCH`. Reading the line goes through the chat's own line reader, so a
cancelled prompt leaves no half-read input behind.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Final

from rich.console import Console
from rich.markup import escape

from ..core.json import JsonValue
from ..plugins.approval import ApprovalAnswer, ApprovalQuestion

__all__ = ["TerminalPrompter", "describe_arguments"]

_MAX_LINES: Final = 20
_MAX_CHARS: Final = 2000


def _preview(value: JsonValue) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    lines = text.splitlines() or [""]
    shown = lines[:_MAX_LINES]
    out = "\n".join(shown)
    if len(out) > _MAX_CHARS:
        out = out[:_MAX_CHARS] + "…"
    hidden = len(lines) - len(shown)
    if hidden > 0:
        out += f"\n… ({hidden} more line{'s' if hidden != 1 else ''})"
    return out


def describe_arguments(arguments: JsonValue | None) -> list[str]:
    """One `key: value` entry per argument (multi-line values indented), long ones cut."""
    if not isinstance(arguments, dict):
        return [] if arguments is None else [_preview(arguments)]
    entries = []
    for key, value in arguments.items():
        shown = _preview(value)
        if "\n" in shown:
            shown = "\n" + "\n".join("      " + line for line in shown.splitlines())
        entries.append(f"{key}: {shown}")
    return entries


def _parse(line: str, session_rule: str | None) -> ApprovalAnswer | None:
    word = line.strip().lower()
    if word in ("", "n", "no", "r", "reject"):
        return "reject"
    if word in ("y", "yes", "o", "once"):
        return "allow-once"
    if word in ("a", "always") and session_rule is not None:
        return "allow-session"
    return None


class TerminalPrompter:
    """Asks on `console` and reads answers with `read_line` (returns "" at end of input)."""

    def __init__(self, read_line: Callable[[], Awaitable[str]], console: Console) -> None:
        self._read_line = read_line
        self._console = console
        self._lock = asyncio.Lock()

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        async with self._lock:
            self._show(question)
            choices = "[bold]y[/bold] allow once"
            if question.session_rule is not None:
                rule = escape(question.session_rule)
                choices += f" · [bold]a[/bold] always allow {rule} this session"
            choices += " · [bold]n[/bold] reject"
            while True:
                self._console.print(f"  {choices} [dim](Ctrl-C cancels)[/dim]")
                self._console.print("  approve? ", end="")
                line = await self._read_line()
                if not line:
                    self._console.print("\n  [dim]no answer (end of input): rejected[/dim]")
                    return "reject"
                answer = _parse(line, question.session_rule)
                if answer is not None:
                    return answer
                self._console.print(f"  [yellow]not an answer: {escape(line.strip())}[/yellow]")

    def _show(self, question: ApprovalQuestion) -> None:
        console = self._console
        console.print(f"[bold yellow]? {escape(question.tool_name)}[/bold yellow] needs approval")
        for entry in describe_arguments(question.arguments):
            console.print(f"    {escape(entry)}", highlight=False)
        if question.reason:
            console.print(f"  [dim]why: {escape(question.reason)}[/dim]")
