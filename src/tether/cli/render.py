"""Terminal rendering of a running turn: streamed text, one compact line per tool call.

Owns: how agent events look on a terminal (rich). Text streams to stdout as it arrives; tool lines
go to stderr in `tether run` (so stdout is just the answer) and inline in `tether chat`.
"""

from __future__ import annotations

import json
import sys
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from ..agent.loop import AgentEvent, StepStarted, TextStreamed, ToolFinished, ToolStarted
from ..tools.results import ToolFailure

__all__ = ["TurnRenderer", "summarize_arguments"]


def summarize_arguments(raw: str, limit: int = 60) -> str:
    """A one-line preview of a call's raw JSON arguments."""
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
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TurnRenderer:
    """Feeds on `AgentEvent`s. `text_out` receives the model's text; `tools` the status lines."""

    def __init__(self, *, text_out: TextIO = sys.stdout, tools: Console | None = None) -> None:
        self._text_out = text_out
        self._tools = tools or Console(stderr=True, highlight=False)
        self._mid_line = False

    def __call__(self, event: AgentEvent) -> None:
        match event:
            case TextStreamed(text=text):
                self._text_out.write(text)
                self._text_out.flush()
                self._mid_line = not text.endswith("\n")
            case ToolStarted(name=name, arguments=arguments):
                self._break_line()
                args = escape(summarize_arguments(arguments))
                self._tools.print(f"[dim]⏵ {name}({args})[/dim]")
            case ToolFinished(name=name, result=result, duration_ms=ms):
                self._break_line()
                if isinstance(result, ToolFailure):
                    code = result.code or "ERROR"
                    message = escape(result.error.message.splitlines()[0][:100])
                    self._tools.print(
                        f"[red]✗ {name} {code}[/red] [dim]{ms:.0f} ms · {message}[/dim]"
                    )
                else:
                    self._tools.print(f"[green]✓ {name}[/green] [dim]{ms:.0f} ms[/dim]")
            case StepStarted():
                pass

    def _break_line(self) -> None:
        if self._mid_line:
            self._text_out.write("\n")
            self._text_out.flush()
            self._mid_line = False

    def end_turn(self) -> None:
        """Finish a partial text line."""
        self._break_line()
