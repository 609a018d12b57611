"""Terminal rendering of a running turn: streamed text, one compact line per tool call.

Owns: how agent events look on a terminal (rich). Text streams to stdout as it arrives (`chat`, and
`run` on a terminal); tool and retry lines go to stderr, one line each, never wrapped or cut by
tether (a terminal wraps them itself; a log keeps them whole). When `run`'s stdout is piped, text is
not streamed: stdout gets only the final answer (printed by the command), stderr the progress.
rich is imported for the first status line, not before `run`'s first model request (~35 ms).
Every string the model controls is written out as `tether.cli.visible` says (tool names,
arguments, errors, notices strictly; the streamed text's control characters).
"""

from __future__ import annotations

import functools
import json
import re
import sys
from typing import TYPE_CHECKING, TextIO

from ..agent.events import (
    AgentEvent,
    Notice,
    Retrying,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolSlowToStop,
)
from ..tools.results import ToolFailure
from .visible import visible, visible_markup

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["TurnRenderer", "notice_text", "summarize_arguments"]


@functools.cache
def _blanks() -> re.Pattern[str]:
    return re.compile(r"[ \t\n]+")


def summarize_arguments(raw: str, limit: int = 60) -> str:
    """A one-line preview of a call's raw JSON arguments (whitespace runs folded; hidden
    characters are left for the caller's `visible_markup`, which writes them out)."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except ValueError:
        value = raw
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            shown = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
            parts.append(f"{key}={shown}")
        text = ", ".join(parts)
    else:
        text = str(value)
    text = _blanks().sub(" ", text).strip(" ")  # not str.split(): it folds \r, \x1c or U+2028
    return text if len(text) <= limit else text[: limit - 1] + "…"


def notice_text(source: str, text: str) -> str:
    """A `Notice` as the screen shows it: `⚠ <source>: <text>`, later lines indented."""
    lines = (text[:-1] if text.endswith("\n") else text).split("\n")  # \r etc. are shown
    return f"⚠ {source}: " + "\n  ".join(lines)


class TurnRenderer:
    """Feeds on `AgentEvent`s. `text_out` receives the model's text as it streams; `tools` the
    status lines (and the retry lines).

    With `text_out=None` (`tether run` with stdout piped) text is not streamed: the text of a
    step that goes on to call tools is written to `progress_out` (stderr) when its first call
    starts, and the caller prints the final answer itself. When a model request is retried,
    `retrying (2/5) in 1.2 s: <why>` is shown and the new attempt's text is printed only where
    it goes beyond what the failed attempt already showed (no `partial partial partial`).
    """

    def __init__(
        self,
        *,
        text_out: TextIO | None = sys.stdout,
        tools: Console | None = None,
        progress_out: TextIO = sys.stderr,
    ) -> None:
        self._text_out = text_out
        self._progress_out = progress_out
        self._console = tools  # built for the first status line (see the module docstring)
        self._mid_line = False
        self._shown = ""  # this step's text already written, across attempts
        self._attempt = ""  # the current attempt's text
        self._buffer = ""  # text_out=None: this step's text not written yet

    @property
    def _tools(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True, highlight=False, soft_wrap=True)
        return self._console

    def __call__(self, event: AgentEvent) -> None:
        match event:
            case TextDelta(text=text):
                self._text(text)
            case Retrying():
                self._break_line()
                self._attempt = ""
                self._buffer = ""
                limit = "" if event.max_retries is None else f"/{event.max_retries}"
                why = visible_markup(
                    event.reason.splitlines()[0][:160] if event.reason else event.code
                )
                self._tools.print(
                    f"[yellow]retrying ({event.attempt}{limit}) in {event.delay_ms / 1000:.1f} s:"
                    f"[/yellow] [dim]{why}[/dim]",
                    soft_wrap=True,
                )
            case ToolCallStarted(name=name, arguments=arguments):
                self._flush_progress()
                self._break_line()
                args = visible_markup(summarize_arguments(arguments))
                self._tools.print(f"[dim]⏵ {visible_markup(name)}({args})[/dim]")
            case ToolCallFinished(name=name, result=result, duration_ms=ms):
                self._break_line()
                if isinstance(result, ToolFailure):
                    code = result.code or "ERROR"
                    lines = result.error.message.splitlines()
                    message = visible_markup(lines[0] if lines else "")
                    self._tools.print(
                        f"[red]✗ {visible_markup(name)} {visible_markup(code)}[/red] "
                        f"[dim]{ms:.0f} ms · {message}[/dim]"
                    )
                else:
                    self._tools.print(
                        f"[green]✓ {visible_markup(name)}[/green] [dim]{ms:.0f} ms[/dim]"
                    )
            case StepStarted():
                self._shown = self._attempt = self._buffer = ""
            case Notice(source=source, text=text):
                self._flush_progress()
                self._break_line()
                self._tools.print(f"[yellow]{visible_markup(notice_text(source, text))}[/yellow]")
            case ToolSlowToStop(name=name, waited_s=waited):
                self._flush_progress()
                self._break_line()
                self._tools.print(
                    f"[yellow]⏳ waiting for {visible_markup(name)} to stop: it does not watch its "
                    f"signal[/yellow] [dim]({waited:.0f} s after the abort)[/dim]"
                )

    def _text(self, text: str) -> None:
        text = visible(text, strict=False)  # per character: a sequence split across deltas too
        out = self._text_out
        if out is None:
            self._buffer += text
            return
        self._attempt += text
        if self._shown.startswith(self._attempt):
            return  # the failed attempt already showed this much
        if self._attempt.startswith(self._shown):
            fresh = self._attempt[len(self._shown) :]
        else:  # the new attempt says something else: start it on its own line
            self._break_line()
            fresh = self._attempt
        self._shown = self._attempt
        out.write(fresh)
        out.flush()
        self._mid_line = not fresh.endswith("\n")

    def _flush_progress(self) -> None:
        text, self._buffer = self._buffer.strip(), ""
        if text:
            self._progress_out.write(text + "\n")
            self._progress_out.flush()

    def _break_line(self) -> None:
        if self._mid_line and self._text_out is not None:
            self._text_out.write("\n")
            self._text_out.flush()
        self._mid_line = False

    def end_turn(self) -> None:
        """Finish a partial text line."""
        self._break_line()
        self._buffer = ""
