"""The terminal approval prompt of `tether chat`: a `Prompter` for the `approval` service.

Owns how a question looks and which keys answer it. It shows the tool, every argument (long
text cut to a preview; for `edit` and `write` the unified diff of the change instead) and the
reason the policy gave, then the choices — each rule shown before anything is saved — and reads
one line:

    y         yes, once                                   → allow-once
    a         yes, and don't ask again for <rules>        → allow-always: saved to the project's
              (saved to .claude/settings.local.json)        .claude/settings.local.json (Claude
                                                            Code's answer; `Bash(npm test:*)`)
    s         yes, and allow <rule> for this session      → allow-session
    n         no                                          → reject (also an empty line or end
                                                            of input)
    d         no, and tell the model why (asked next)     → Rejection(reason)
    n <why>   no, with the reason <why>                   → Rejection(why)

`a` and `s` are offered only when the permission rules can name a rule; `a` means `s` when only
a session rule is offered.

A server's form (an MCP `elicitation/create`, through `Approval.elicit`) is shown as its message
and fields (type, default, choices), then one line: `y` fill it in (each field asked in turn;
an empty line keeps the default, or leaves an optional field out), `n` decline (also an empty
line or end of input), `c` cancel. A typed-in value of the wrong type is asked again.

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
from typing import TYPE_CHECKING, Final

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ..core.json import JsonValue
from ..plugins.approval import ApprovalAnswer, ApprovalQuestion, Rejection
from .chat.diff import proposed_diff, render_diff
from .visible import visible_markup, visible_text

if TYPE_CHECKING:
    from ..plugins.approval.elicitation import ElicitationQuestion, ElicitationReply, ElicitField

__all__ = ["TerminalPrompter", "describe_arguments"]

_MAX_LINES: Final = 20
_MAX_CHARS: Final = 2000


def _preview(value: JsonValue) -> Text:
    """The value's text, its hidden characters written out (`visible_text`), split at newlines
    only (a carriage return or a form feed is shown, not obeyed), cut to `_MAX_LINES` lines and
    `_MAX_CHARS` characters, saying how much was cut."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    lines = text.split("\n")
    shown = "\n".join(lines[:_MAX_LINES])
    out = visible_text(shown[:_MAX_CHARS])
    if len(shown) > _MAX_CHARS:
        cut = len(shown) - _MAX_CHARS
        out.append(f"… ({cut} more character{'s' if cut != 1 else ''})", style="dim")
    hidden = len(lines) - _MAX_LINES
    if hidden > 0:
        out.append(f"\n… ({hidden} more line{'s' if hidden != 1 else ''})", style="dim")
    return out


def _entries(arguments: JsonValue | None) -> list[Text]:
    if not isinstance(arguments, dict):
        return [] if arguments is None else [_preview(arguments)]
    entries = []
    for key, value in arguments.items():
        shown = _preview(value)
        entry = visible_text(key)
        entry.append(": ")
        if "\n" in shown.plain:
            for line in shown.split("\n"):
                entry.append("\n      ")
                entry.append_text(line)
        else:
            entry.append_text(shown)
        entries.append(entry)
    return entries


def describe_arguments(arguments: JsonValue | None) -> list[str]:
    """One `key: value` entry per argument (multi-line values indented), long ones cut, every
    character a terminal would hide or obey written out (`tether.cli.visible`: `\\x1b`)."""
    return [entry.plain for entry in _entries(arguments)]


def _parse(
    line: str, session_rule: str | None, lasting_rules: tuple[str, ...] = ()
) -> ApprovalAnswer | None:
    word = line.strip()
    lowered = word.lower()
    if lowered in ("", "n", "no", "r", "reject", "deny"):
        return "reject"
    if lowered in ("y", "yes", "o", "once"):
        return "allow-once"
    if lowered in ("a", "always") and lasting_rules:
        return "allow-always"
    if lowered in ("a", "always", "s", "session") and session_rule is not None:
        return "allow-session"
    for prefix in ("n ", "no ", "d ", "deny "):
        if lowered.startswith(prefix) and word[len(prefix) :].strip():
            return Rejection(word[len(prefix) :].strip())
    return None


def _field_line(field: ElicitField) -> str:
    """One field of a form: name, type, whether required, choices, default, description."""
    parts = [f"{field.name} ({field.type}{', required' if field.required else ''})"]
    if field.title:
        parts.append(field.title)
    if field.description:
        parts.append(field.description)
    if field.choices:
        parts.append("one of " + ", ".join(field.choices))
    if field.default is not None:
        parts.append(f"default {json.dumps(field.default, ensure_ascii=False)}")
    return " — ".join(parts)


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
            with self._pause():
                began = time.monotonic()
                try:
                    return await self._ask(question)
                finally:  # before the pause ends: a live timer resumes without the wait
                    if self._on_wait is not None:
                        self._on_wait(question.call_id, time.monotonic() - began)

    async def elicit(self, question: ElicitationQuestion) -> ElicitationReply:
        async with self._lock:
            with self._pause():
                return await self._form(question)

    async def _form(self, question: ElicitationQuestion) -> ElicitationReply:
        from ..plugins.approval.elicitation import ElicitationReply, parse_value  # a form: rare

        console = self._console
        console.print(f"[bold yellow]? {escape(question.source)}[/bold yellow] asks:")
        console.print(f"    {escape(question.message)}", highlight=False)
        for field in question.fields:
            console.print(f"    {escape(_field_line(field))}", highlight=False)
        console.print(
            "  [bold]y[/bold]  fill it in · [bold]n[/bold]  decline · [bold]c[/bold]  cancel"
        )
        while True:
            line = (await self._read_line("  answer? ")).strip().lower()
            if line in ("", "n", "no", "decline"):
                return ElicitationReply("decline")
            if line in ("c", "cancel"):
                return ElicitationReply("cancel")
            if line in ("y", "yes", "accept"):
                break
            console.print(f"  [yellow]not an answer: {escape(line)}[/yellow]")
        content: dict[str, JsonValue] = {}
        for field in question.fields:
            while True:
                shown = "" if field.default is None else f" [{field.default}]"
                text = (await self._read_line(f"  {field.name}{shown}: ")).strip()
                if not text:
                    if field.default is None and field.required:
                        console.print(f"  [yellow]{escape(field.name)} is required[/yellow]")
                        continue
                    break  # the default is applied by the service (SEP-1034)
                try:
                    content[field.name] = parse_value(field, text)
                    break
                except ValueError as exc:
                    console.print(f"  [yellow]{escape(str(exc))}[/yellow]")
        return ElicitationReply("accept", content)

    async def _ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        self._show(question)
        for line in self._choices(question):
            self._console.print(line, highlight=False)
        while True:
            line = await self._read_line("  approve? ")
            if not line:
                self._console.print("\n  [dim]no answer (end of input): denied[/dim]")
                return "reject"
            if line.strip().lower() in ("d", "deny with a reason"):
                reason = (await self._read_line("  reason for the model: ")).strip()
                return Rejection(reason) if reason else "reject"
            answer = _parse(line, question.session_rule, question.lasting_rules)
            if answer is not None:
                return answer
            self._console.print(f"  [yellow]not an answer: {escape(line.strip())}[/yellow]")

    def _choices(self, question: ApprovalQuestion) -> list[str]:
        from ..plugins.permissions.prefix import joined  # at the first question (issue 36)

        lines = ["  [bold]y[/bold]  yes, once"]
        if question.lasting_rules:
            where = self._where(question.saved_to)
            lines.append(
                f"  [bold]a[/bold]  yes, and don't ask again for "
                f"{visible_markup(joined(question.lasting_rules))}"
                + (f" [dim](saved to {escape(where)})[/dim]" if where else "")
            )
        if question.session_rule is not None:
            key = "s" if question.lasting_rules else "a"
            lines.append(
                f"  [bold]{key}[/bold]  yes, and allow {visible_markup(question.session_rule)} "
                "for this session"
            )
        lines.append(
            "  [bold]n[/bold]  no · [bold]d[/bold]  no, and tell the model why "
            "[dim](Esc or Ctrl-C cancels)[/dim]"
        )
        return lines

    def _where(self, saved_to: str | None) -> str | None:
        """The settings file, relative to the workspace when it is inside."""
        if saved_to is None:
            return None
        path = Path(saved_to)
        if self._cwd is not None and path.is_relative_to(self._cwd):
            return str(path.relative_to(self._cwd))
        return saved_to

    def _show(self, question: ApprovalQuestion) -> None:
        console = self._console
        name = visible_markup(question.tool_name)
        if question.kind == "sandbox-escalation" and question.tool_name in ("edit", "write"):
            console.print(
                f"[bold yellow]? {name}[/bold yellow] is refused by the sandbox: make this "
                "change once [bold]outside[/bold] the sandbox?"
            )
        elif question.kind == "sandbox-escalation":
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
            for entry in _entries(question.arguments):
                console.print(Text("    ").append_text(entry), highlight=False)
        if question.reason:
            console.print(f"  [dim]why: {visible_markup(question.reason)}[/dim]")
