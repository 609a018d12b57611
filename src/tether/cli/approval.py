"""The terminal approval prompt of `tether chat`: a `Prompter` for the `approval` service.

Owns how a question looks and which keys answer it. It shows the tool, every argument (long
text cut to a preview; for `edit` and `write` the unified diff of the change instead) and the
reason the policy gave, then reads one line:

    y         allow once                       → allow-once
    a         allow <rule> for this session    → allow-session (only when a rule is offered)
    n         deny                             → reject (also an empty line or end of input)
    d         deny with a reason (asked next)  → Rejection(reason): the model reads the reason
    n <why>   deny with the reason <why>       → Rejection(why)

Questions are asked one at a time. The prompt is cancelled — not answered — when the call's
signal aborts (Ctrl-C): the service answers `cancelled` then, and the call ends
`ABORTED_BEFORE_DISPATCH`. Reading the line goes through the chat's own line reader, so a
cancelled prompt leaves no half-read input behind.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Final

from rich.console import Console
from rich.markup import escape

from ..core.json import JsonValue
from ..plugins.approval import ApprovalAnswer, ApprovalQuestion, Rejection
from .chat.diff import proposed_diff, render_diff

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
    word = line.strip()
    lowered = word.lower()
    if lowered in ("", "n", "no", "r", "reject", "deny"):
        return "reject"
    if lowered in ("y", "yes", "o", "once"):
        return "allow-once"
    if lowered in ("a", "always") and session_rule is not None:
        return "allow-session"
    for prefix in ("n ", "no ", "d ", "deny "):
        if lowered.startswith(prefix) and word[len(prefix) :].strip():
            return Rejection(word[len(prefix) :].strip())
    return None


class TerminalPrompter:
    """Asks on `console` and reads answers with `read_line(prompt)` ("" at end of input).

    `cwd` resolves the paths of `edit`/`write` calls for their diff; `pause` (a context manager
    factory) holds a live status display while the user is asked; `on_wait(call_id, seconds)`
    learns how long each answer took, so the call's duration can leave it out.
    """

    def __init__(
        self,
        read_line: Callable[[str], Awaitable[str]],
        console: Console,
        *,
        cwd: Path | None = None,
        pause: Callable[[], AbstractContextManager[object]] | None = None,
        on_wait: Callable[[str, float], None] | None = None,
    ) -> None:
        self._read_line = read_line
        self._console = console
        self._cwd = cwd
        self._pause = pause or nullcontext
        self._on_wait = on_wait
        self._lock = asyncio.Lock()

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        async with self._lock:
            began = time.monotonic()
            try:
                with self._pause():
                    return await self._ask(question)
            finally:
                if self._on_wait is not None:
                    self._on_wait(question.call_id, time.monotonic() - began)

    async def _ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        self._show(question)
        choices = "[bold]y[/bold] allow once"
        if question.session_rule is not None:
            rule = escape(question.session_rule)
            choices += f" · [bold]a[/bold] allow {rule} for this session"
        choices += " · [bold]n[/bold] deny · [bold]d[/bold] deny with a reason"
        while True:
            self._console.print(f"  {choices} [dim](Ctrl-C cancels)[/dim]")
            line = await self._read_line("  approve? ")
            if not line:
                self._console.print("\n  [dim]no answer (end of input): denied[/dim]")
                return "reject"
            if line.strip().lower() in ("d", "deny with a reason"):
                reason = (await self._read_line("  reason for the model: ")).strip()
                return Rejection(reason) if reason else "reject"
            answer = _parse(line, question.session_rule)
            if answer is not None:
                return answer
            self._console.print(f"  [yellow]not an answer: {escape(line.strip())}[/yellow]")

    def _show(self, question: ApprovalQuestion) -> None:
        console = self._console
        name = escape(question.tool_name)
        if question.kind == "sandbox-escalation":
            console.print(
                f"[bold yellow]? {name}[/bold yellow] failed in the sandbox: run it once "
                "[bold]outside[/bold] the sandbox?"
            )
        else:
            console.print(f"[bold yellow]? {name}[/bold yellow] needs approval")
        diff = None
        if self._cwd is not None and question.tool_name in ("edit", "write"):
            diff = proposed_diff(question.tool_name, question.arguments, self._cwd)
        if diff is not None:
            console.print(render_diff(diff), end="", highlight=False)
        else:
            for entry in describe_arguments(question.arguments):
                console.print(f"    {escape(entry)}", highlight=False)
        if question.reason:
            console.print(f"  [dim]why: {escape(question.reason)}[/dim]")
