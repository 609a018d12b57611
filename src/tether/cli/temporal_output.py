"""How a turn on Temporal is shown: the same renderer, the same `--output-format json|stream-json`
records and the same exit codes as a local `tether run` (`tether.cli.render`,
`tether.cli.output`, `tether.cli.session.exit_code`).

Owns `TurnOutput`: it is fed the followed turn's log entries (`on_entry`, from
`tether.temporal.frontend`), turns them into the agent's events (`tether.temporal.events`) for
the renderer and the report, and prints the end of the turn (`finish`): the answer on stdout
(text) or the result object (json, stream-json). stdout carries only that; everything else goes
to stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..agent.loop import TurnOutcome
from .output import RunReport
from .render import TurnRenderer
from .session import exit_code

if TYPE_CHECKING:
    from ..temporal.payloads import LogEntry, TurnResult

__all__ = ["OutputFormat", "TurnOutput"]

OutputFormat = Literal["text", "json", "stream-json"]


class TurnOutput:
    """One turn's output in `output_format` (see the module note)."""

    def __init__(self, output_format: OutputFormat) -> None:
        from ..temporal.events import EntryEvents

        self.format = output_format
        self.tty = output_format == "text" and sys.stdout.isatty()
        self.renderer = TurnRenderer(text_out=sys.stdout if self.tty else None)
        self.report = RunReport(stream=sys.stdout if output_format == "stream-json" else None)
        self._events = EntryEvents()
        self._seen: list[tuple[str, Mapping[str, Any]]] = []
        self.model: str | None = None

    def start(self, session_id: str, model: str | None, cwd: Path) -> None:
        """The stream's first record (stream-json)."""
        self.model = model
        self.report.emit(
            {"type": "start", "session_id": session_id, "model": model, "cwd": str(cwd)}
        )

    def on_entry(self, entry: LogEntry, data: dict[str, Any]) -> None:
        self._seen.append((entry.type, data))
        if entry.type == "request/context" and isinstance(data.get("model"), str):
            self.model = str(data["model"])
        for event in self._events(entry.type, data, entry.at):
            self.renderer(event)
            self.report(event)

    def finish(self, result: TurnResult | None, *, session_id: str) -> int:
        """Print how the turn ended; the exit code (130 when the waiting was stopped)."""
        from ..temporal.events import usage_of

        outcome = None if result is None else TurnOutcome(result.turn, result.reason, result.text)
        if outcome is None:
            code = 130
        else:
            self.renderer.end_turn()
            if self.format == "text" and not self.tty and outcome.text:
                sys.stdout.write(outcome.text + "\n")
                sys.stdout.flush()
            code = exit_code(outcome)
        if self.format != "text":
            record = self.report.result(
                outcome,
                session_id=session_id,
                model=self.model or "",
                exit_code=code,
                usage=usage_of(self._seen),
            )
            self.report.print_result(record)
        return code
