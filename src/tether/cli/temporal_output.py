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
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..agent.loop import TurnOutcome
from ..core.ending import Ended
from ..core.json import JsonValue
from .output import HeadlessReport, RunInfo
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
        self.report: HeadlessReport | None = None  # json / stream-json, once started
        self._events = EntryEvents()

    def start(self, session_id: str, model: str | None, cwd: Path) -> None:
        """The stream's first record (stream-json: `system`/`init`)."""
        if self.format == "text":
            return
        info = RunInfo(session_id=session_id, model=model or "", cwd=str(cwd))
        self.report = HeadlessReport(self.format, info, sys.stdout)
        self.report.start()

    def name_model(self, model: object) -> None:
        """The model the report names (from a request context, or asked of the workers)."""
        report = self.report
        if report is not None and isinstance(model, str) and model != report.info.model:
            report.info = replace(report.info, model=model)

    def on_entry(self, entry: LogEntry, data: dict[str, Any]) -> None:
        if entry.type == "request/context":
            self.name_model(data.get("model"))
        report = self.report
        for event in self._events(entry.type, data, entry.at):
            self.renderer(event)
            if report is not None:
                report(event)

    def finish(self, result: TurnResult, *, session_id: str, ended: Ended | None = None) -> int:
        """Print how the turn ended; the exit code (128 + N when the signal `ended` aborted
        it, as for a local run)."""
        outcome = TurnOutcome(result.turn, result.reason, result.text)
        self.renderer.end_turn()
        if self.format == "text" and not self.tty and outcome.text:
            sys.stdout.write(outcome.text + "\n")
            sys.stdout.flush()
        code = exit_code(outcome)
        if ended is not None and not outcome.completed:
            code = ended.exit_code
        if self.report is not None:
            self.report.finish(outcome, exit_code=code)
        return code

    def refuse(self, message: str, *, code: int, error: str = "TEMPORAL_ERROR") -> int:
        """The run could not start or follow its turn (a configuration, a cluster, a session
        that cannot be used): the one line on stderr, and for json / stream-json a `result`
        record with `error` as its code, so a script always gets a record; returns `code`."""
        sys.stderr.write(f"tether: {message}\n")
        sys.stderr.flush()
        if self.format == "text":
            return code
        if self.report is None:
            self.start("", None, Path.cwd())
        reason: dict[str, JsonValue] = {
            "kind": "error",
            "error": {"code": error, "message": message},
        }
        if self.report is not None:
            self.report.finish(TurnOutcome(0, reason, ""), exit_code=code)
        return code
