"""How a running chat turn looks: live status lines, tool lines, previews, Markdown, reasoning.

Owns: `ChatRenderer`, fed with the agent's events. On a terminal (`live=True`) a rich `Live`
area at the bottom always shows that the model is working: a spinner with the step's elapsed
time (`⠧ thinking · 0.7 s` until the first token, then `⠧ writing · 4.1 s` while the answer
streams), one line per running tool call naming its target (`⠋ bash sleep 300 · 12.3 s`), and
`compacting` while the conversation is summarised. Above it the finished lines are printed:

    ✓ read src/app.py 12 ms
    ✗ bash TOOL_TIMEOUT 30.0 s · command timed out after 30 s
      first lines of the tool's output, dimmed … +12 lines (/show 3)

Assistant text streams line by line (`tether.cli.chat.streamed`): a line is printed above for
good when its newline arrives (drawn as Markdown), and the live area shows only the unfinished
last line, cut to one row; every live row is one screen row at most (`_OneRow`), so a terminal
that reflows on a resize has nothing tall to redraw, and no line is printed twice. Reasoning
is printed dimmed with `show_reasoning`, otherwise folded into one line (`/show N` expands it,
as it expands tool output). A call's duration — the live timer and the final line — excludes
the time spent waiting for the user's approval (`waited()` records it; the wait is shown
separately). A bash output cut to its tail is previewed from its first whole line, after a
`… N earlier lines` line naming the file that holds all of it. An `edit` or `write` that
succeeds shows its diff (computed when the call starts), unless its approval prompt already did.
A `todo_write` that succeeds shows the whole list as a checklist (`tether.cli.chat.todos`).

Without a terminal (`live=False`) nothing is decorated: text streams as it arrives, tool lines are
plain, and no ANSI is written. `NO_COLOR` is honoured by rich in both modes.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.live import Live
from rich.segment import Segment
from rich.spinner import Spinner
from rich.text import Text

from ...agent.events import (
    AgentEvent,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    Notice,
    ReasoningDelta,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolSlowToStop,
)
from ...tools.results import ToolExecutionResult, ToolFailure, ToolSuccess
from ..render import notice_text
from ..visible import visible, visible_markup, visible_text
from .diff import proposed_diff, render_diff
from .streamed import LastLine, StreamedText
from .todos import checklist

__all__ = ["ChatRenderer", "Shown", "call_target", "clip", "format_duration"]

_PREVIEW_LINES: Final = 3
_REFRESH_S: Final = 1 / 8
"""How often the live area is redrawn (spinners, timers): rich's own default rate."""
_COUNT_LIMIT: Final = 256 * 1024 * 1024
"""Bytes of a spill file read to count the lines before a tail (beyond: "more than")."""
_BLANKS: Final = re.compile(r"[ \t\n]+")
_WRAPPER: Final = re.compile(r"^\s*(<path>.*</path>|<type>.*</type>|</?content>)\s*$")
"""The fs tools' framing lines, left out of previews."""
_TARGET_KEYS: Final = (
    "file_path",
    "path",
    "command",
    "url",
    "pattern",
    "query",
    "queries",
    "description",  # a `task` call: what its subagent is for
)


def format_duration(ms: float) -> str:
    """`12 ms` below a second, `30.0 s` above."""
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def call_target(raw_arguments: str, limit: int = 60) -> str:
    """What a call acts on, from its raw JSON arguments: the file path, command, URL, pattern,
    query or (a `task` call) description (one line, cut to `limit`); "" when none is named."""
    try:
        value = json.loads(raw_arguments) if raw_arguments.strip() else {}
    except ValueError:
        return ""
    if not isinstance(value, dict):
        return ""
    for key in _TARGET_KEYS:
        item = value.get(key)
        if isinstance(item, list):
            item = ", ".join(str(x) for x in item)
        if isinstance(item, str) and item.strip():
            text = _BLANKS.sub(" ", item).strip(" ")  # not split(): it folds \r and U+2028
            return clip(text, limit)
    return ""


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters with `…`, at the last space when there is one
    in the second half of the cut (a preview never ends mid-word then)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


@dataclass(frozen=True, slots=True)
class Shown:
    """An expandable entry for `/show N`: a tool's output or a reasoning block."""

    title: str
    text: str


@dataclass(slots=True)
class _Running:
    label: str
    started: float
    spinner: Spinner
    stuck: str | None = None
    """Set when the call was aborted and its body does not stop: what the status row says."""


class _OneRow:
    """A live row: its first screen row only, cut to the width (never wrapped), so the live
    area is as tall as it has rows whatever the terminal's width."""

    def __init__(self, renderable: RenderableType) -> None:
        self._renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(1, options.max_width)
        flat = options.update(width=width, no_wrap=True, overflow="ellipsis", height=None)
        lines = console.render_lines(self._renderable, flat, pad=False)
        if lines:
            yield from Segment.adjust_line_length(lines[0], width, pad=False)
        yield Segment.line()


def _result_text(result: ToolExecutionResult) -> str:
    parts = [str(block.get("text", "")) for block in result.content if block.get("type") == "text"]
    return "\n".join(p for p in parts if p)


class ChatRenderer:
    """Feeds on `AgentEvent`s; see the module note."""

    def __init__(
        self,
        console: Console,
        *,
        live: bool,
        show_reasoning: bool = False,
        cwd: Path | None = None,
    ) -> None:
        self.console = console
        self._cwd = cwd
        self._diffs: dict[str, str] = {}
        self._live_enabled = live
        self._show_reasoning = show_reasoning
        self._live: Live | None = None
        self._ticking: asyncio.TimerHandle | None = None
        self._waiting_since: float | None = None
        self._writing = False
        self._compacting_since: float | None = None
        self._waiting = Spinner("dots", style="cyan")
        self._running: dict[str, _Running] = {}
        self._text = StreamedText()
        self._reasoning = ""
        self._mid_line = False
        self._waited: dict[str, float] = {}
        self.shown: list[Shown] = []
        self.mode_line: Callable[[], str | None] = lambda: None
        """The permission mode's line under the running turn (None: not shown)."""

    # -- events ----------------------------------------------------------------------------------

    def __call__(self, event: AgentEvent) -> None:
        match event:
            case StepStarted():
                self._waiting_since = time.monotonic()
                self._writing = False
                self._ensure_live()
            case ReasoningDelta(text=text):
                self._reasoning += visible(text, strict=False)
            case TextDelta(text=text):
                self._flush_reasoning()
                self._on_text(text)
            case ToolCallStarted(call_id=call_id, name=name, arguments=arguments):
                self._flush_reasoning()
                self._flush_text()
                self._waiting_since = None
                target = call_target(arguments)
                label = f"{name} {target}" if target else name
                if name in ("edit", "write") and self._cwd is not None:
                    diff = _diff_of(name, arguments, self._cwd)
                    if diff is not None:
                        self._diffs[call_id] = diff
                if self._live_enabled:
                    spinner = Spinner("dots", style="cyan")
                    self._running[call_id] = _Running(label, time.monotonic(), spinner)
                    self._ensure_live()
                else:
                    self._running[call_id] = _Running(label, time.monotonic(), self._waiting)
                    self.console.print(f"⏵ {visible_markup(label)}", highlight=False)
            case Notice(source=source, text=text):
                self.console.print(f"[yellow]{visible_markup(notice_text(source, text))}[/yellow]")
            case ToolCallFinished(call_id=call_id, name=name, result=result, duration_ms=ms):
                running = self._running.pop(call_id, None)
                label = running.label if running is not None else name
                self._finished(call_id, label, result, ms, todo=name == "todo_write")
                if not self._running:
                    self._waiting_since = time.monotonic()
            case ToolSlowToStop(call_id=call_id, name=name, waited_s=waited, where=where):
                self._slow(call_id, name, waited, where)
            case CompactionStarted():
                self._flush_reasoning()
                self._flush_text()
                self._compacting(event)
                self._compacting_since = time.monotonic()
                self._ensure_live()
            case CompactionFinished(from_session=old, into_session=new, summary_words=words):
                self._compacting_since = None
                self.console.print(
                    f"[dim]compacted session {old} into {new} (summary of {words} words; "
                    "the old log is kept)[/dim]",
                    highlight=False,
                )
            case CompactionFailed(message=message):
                self._compacting_since = None
                self.console.print(f"[red]compaction failed: {visible_markup(message)}[/red]")

    def _compacting(self, event: CompactionStarted) -> None:
        if event.overflow:
            self.console.print(
                "[yellow]the conversation no longer fits the model's context window; "
                "compacting[/yellow]"
            )
        what = "auto-compacting" if event.trigger == "auto" else "compacting"
        size = f"about {event.tokens:,} tokens"
        if event.window is not None:
            size += f" of a {event.window:,}-token window"
        self.console.print(
            f"[yellow]⟳ {what}: {size}; the model summarises the conversation…[/yellow]",
            highlight=False,
        )

    def _slow(self, call_id: str, name: str, waited: float, where: str) -> None:
        stuck = f"waiting for {name} to stop: it does not watch its signal"
        running = self._running.get(call_id)
        if running is not None:
            running.stuck = stuck
        shown = where if len(where) <= 300 else "…" + where[-299:]
        self.console.print(
            f"[yellow]⏳ {visible_markup(stuck)}[/yellow] [dim]({waited:.0f} s after the abort; it "
            f"waits at {visible_markup(shown)})[/dim]",
            highlight=False,
        )

    def waited(self, call_id: str, seconds: float) -> None:
        """`call_id` waited `seconds` for the user's approval: excluded from its duration, the
        live timer included (call it before the live area resumes)."""
        self._waited[call_id] = self._waited.get(call_id, 0.0) + seconds
        running = self._running.get(call_id)
        if running is not None:
            running.started += seconds

    def end_turn(self) -> None:
        """Print what is still buffered and stop the live area."""
        self._flush_reasoning()
        self._flush_text()
        self._waiting_since = None
        self._compacting_since = None
        self._running.clear()
        self._stop_live()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Stop the live area (for a prompt) and resume it afterwards."""
        self._flush_text()
        was_live = self._live is not None
        self._stop_live()
        try:
            yield
        finally:
            if was_live:
                self._ensure_live()

    def show(self, number: int) -> Shown | None:
        """Entry `number` (1-based) of the expandable outputs, or None."""
        if 1 <= number <= len(self.shown):
            return self.shown[number - 1]
        return None

    # -- text ------------------------------------------------------------------------------------

    def _on_text(self, text: str) -> None:
        text = visible(text, strict=False)  # per character: a sequence split across deltas too
        if not self._live_enabled:
            self.console.file.write(text)
            self.console.file.flush()
            self._mid_line = not text.endswith("\n")
            return
        self._writing = True
        for line in self._text.feed(text):  # complete lines; the live area shows the rest
            self.console.print(line)

    def _flush_text(self) -> None:
        """The answer's text ends here (a tool call, the turn's end, a prompt): print what is
        left of it."""
        if not self._live_enabled:
            if self._mid_line:
                self.console.file.write("\n")
                self.console.file.flush()
                self._mid_line = False
            return
        for line in self._text.finish():
            self.console.print(line)

    def _flush_reasoning(self) -> None:
        reasoning, self._reasoning = self._reasoning.strip(), ""
        if not reasoning:
            return
        self.shown.append(Shown("reasoning", reasoning))
        if self._show_reasoning:
            self.console.print(Text(reasoning, style="dim italic"))
        else:
            words = len(reasoning.split())
            self.console.print(
                f"[dim]✻ reasoning, {words} word{'s' if words != 1 else ''} "
                f"(/show {len(self.shown)})[/dim]",
                highlight=False,
            )

    # -- tools -----------------------------------------------------------------------------------

    def _finished(
        self, call_id: str, label: str, result: ToolExecutionResult, ms: float, *, todo: bool
    ) -> None:
        waited = self._waited.pop(call_id, None)
        diff = self._diffs.pop(call_id, None)
        asked = waited is not None
        waited = waited or 0.0
        ms = max(0.0, ms - waited * 1000)
        wait = f" · waited {waited:.1f} s for approval" if waited >= 0.05 else ""
        if isinstance(result, ToolFailure):
            code = result.code or "ERROR"
            first = result.error.message.splitlines()[0] if result.error.message else ""
            message = visible_markup(clip(first, 100))
            self.console.print(
                f"[red]✗ {visible_markup(label)} {visible_markup(code)}[/red] "
                f"[dim]{format_duration(ms)}{wait}"
                f"{' · ' + message if message else ''}[/dim]",
                highlight=False,
            )
            return
        self.console.print(
            f"[green]✓ {visible_markup(label)}[/green] [dim]{format_duration(ms)}{wait}[/dim]",
            highlight=False,
        )
        if diff is not None and not asked:  # an approval already showed the diff
            self.console.print(render_diff(diff), end="", highlight=False)
            return
        todos = result.value.get("todos") if isinstance(result.value, dict) else None
        if todo and isinstance(todos, list):  # the list as a checklist, not its summary line
            self.console.print(checklist([t for t in todos if isinstance(t, dict)]))
            return
        output = _result_text(result).rstrip()
        if not output or diff is not None:
            return
        self.shown.append(Shown(label, output))
        preview = Text()
        earlier = _earlier_output(result)
        if earlier is not None:
            output = output.partition("\n")[2]  # the tail starts inside a line
            preview.append(f"  {earlier}\n", style="dim")
        lines = [line for line in output.splitlines() if line.strip() and not _WRAPPER.match(line)]
        for line in lines[:_PREVIEW_LINES]:
            preview.append_text(visible_text("  " + clip(line, 200) + "\n", "dim", strict=False))
        hidden = len(lines) - _PREVIEW_LINES
        more = f"  … +{hidden} line{'s' if hidden != 1 else ''} " if hidden > 0 else "  "
        preview.append(f"{more}(/show {len(self.shown)})", style="dim")
        self.console.print(preview, highlight=False)

    # -- the live area ---------------------------------------------------------------------------

    def live_area(self) -> RenderableType:
        """What the live area shows now: the unfinished line of the answer, the status rows,
        the mode line — one screen row each at most."""
        now = time.monotonic()
        rows: list[RenderableType] = []
        if self._text.partial.strip():
            rows.append(LastLine(self._text.partial))
        if self._compacting_since is not None:
            elapsed = now - self._compacting_since
            self._waiting.update(text=Text(f"compacting · {elapsed:.1f} s", style="dim"))
            rows.append(self._waiting)
        elif self._waiting_since is not None and not self._running:
            elapsed = now - self._waiting_since
            what = "writing" if self._writing else "thinking"
            self._waiting.update(text=Text(f"{what} · {elapsed:.1f} s", style="dim"))
            rows.append(self._waiting)
        for running in self._running.values():
            elapsed = now - running.started
            state = f" · {running.stuck}" if running.stuck else ""
            text = visible_text(f"{running.label} · {elapsed:.1f} s{state}", "dim")
            running.spinner.update(text=text)
            rows.append(running.spinner)
        mode = self.mode_line()
        if mode is not None:
            rows.append(Text(mode, style="dim"))
        return Group(*(_OneRow(row) for row in rows))

    def _ensure_live(self) -> None:
        if not self._live_enabled or self._live is not None:
            return
        live = Live(
            console=self.console,
            get_renderable=self.live_area,
            auto_refresh=False,  # redrawn by `_tick` on the loop's thread, never by a thread
            transient=True,
            redirect_stdout=True,
            redirect_stderr=True,
        )
        live.start()
        self._live = live
        self._tick()

    def _tick(self) -> None:
        """Redraw the live area (spinners, timers) and come back in 1/8 s, on the event loop's
        thread — the thread that prints the finished lines. rich's own refresh thread raced
        those prints: both placed the cursor from the live area's last height, so one of them
        could move up over a row that was no longer the live area's and erase a printed line
        (a tool's `✓` line, seen under load). Without a running loop (the renderer fed
        synchronously) the area is redrawn by each print only."""
        live = self._live
        if live is None:
            return
        live.refresh()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._ticking = loop.call_later(_REFRESH_S, self._tick)

    def _stop_live(self) -> None:
        live, self._live = self._live, None
        ticking, self._ticking = self._ticking, None
        if ticking is not None:
            ticking.cancel()
        if live is not None:
            live.stop()


def _earlier_output(result: ToolExecutionResult) -> str | None:
    """For a bash result whose stdout was cut to its tail: `… N earlier lines (full output:
    <path>)`, the line a preview starts with; None for any other result."""
    value = result.value if isinstance(result, ToolSuccess) else None
    stdout = value.get("stdout") if isinstance(value, Mapping) else None
    if not isinstance(stdout, Mapping) or stdout.get("truncated") is not True:
        return None
    path = stdout.get("spill_path")
    where = f" (full output: {path})" if isinstance(path, str) else ""
    tail = stdout.get("text")
    count = None
    if isinstance(path, str) and isinstance(tail, str):
        count = _lines_before_tail(Path(path), len(tail.encode("utf-8", "surrogatepass")))
    if count is None:
        return f"… earlier output cut{where}"
    number = f"{count:,}" if count >= 0 else f"more than {-count:,}"
    return f"… {number} earlier line{'s' if count != 1 else ''}{where}"


def _lines_before_tail(path: Path, tail_bytes: int) -> int | None:
    """The lines of `path` before its last `tail_bytes` bytes, the line the tail starts inside
    included; negative (a lower bound) past `_COUNT_LIMIT` bytes; None when unreadable."""
    try:
        with path.open("rb") as file:
            size = file.seek(0, 2)
            before = max(0, size - tail_bytes)
            file.seek(0)
            count, read = 1, 0
            while read < before:
                if read >= _COUNT_LIMIT:
                    return -count
                chunk = file.read(min(1 << 20, before - read))
                if not chunk:
                    break
                count += chunk.count(b"\n")
                read += len(chunk)
            return count
    except OSError:
        return None


def _diff_of(name: str, raw_arguments: str, cwd: Path) -> str | None:
    try:
        arguments = json.loads(raw_arguments)
    except ValueError:
        return None
    return proposed_diff(name, arguments, cwd)
