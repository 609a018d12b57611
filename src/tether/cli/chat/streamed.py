"""The assistant's text as it streams in `tether chat`: complete lines go to the scrollback once,
only the unfinished last line is live.

Owns `StreamedText` (feed it text, get back what to print above the live area) and `LastLine`
(the unfinished line as the live area draws it: as Markdown when that makes one row of it, one
screen row at most, its end kept). A line is
printed when its newline arrives and never redrawn, so no reflow of the terminal (a resize while
the answer streams) can make rich's `Live` repeat it: the live area holds nothing taller than a
row per renderable. Lines are drawn as Markdown one at a time (headings, lists, emphasis, rules);
a fenced code block's lines as code in its language, the fence lines left out as rich's Markdown
does; a table's rows (lines starting with `|`) wait for the table's end and are drawn together.
Does not own the live area's other rows or when it refreshes (`status.ChatRenderer`).
"""

from __future__ import annotations

from typing import Final

from rich.cells import cell_len, get_character_cell_size
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.markdown import Markdown
from rich.syntax import Syntax
from rich.text import Text

__all__ = ["LastLine", "StreamedText", "fit_tail"]

_FENCES: Final = ("```", "~~~")
_CODE_THEME: Final = "monokai"  # rich's Markdown default


def fit_tail(text: str, width: int) -> str:
    """`text` when it fits `width` cells, else `…` and as much of its end as fits."""
    if cell_len(text) <= width:
        return text
    kept: list[str] = []
    used = 1  # the ellipsis
    for character in reversed(text):
        size = get_character_cell_size(character)
        if used + size > width:
            break
        kept.append(character)
        used += size
    return "…" + "".join(reversed(kept))


def _inline(console: Console, options: ConsoleOptions, text: str) -> Text | None:
    """`text` drawn as Markdown on one unwrapped row (emphasis, code spans, a list bullet), or
    None when Markdown makes more than one row of it (a heading's box)."""
    wide = options.update(width=cell_len(text) + 8, height=None)
    lines = console.render_lines(Markdown(text), wide, pad=False)
    rows = [line for line in lines if "".join(segment.text for segment in line).strip()]
    if len(rows) != 1:
        return None
    row = Text.assemble(*((s.text, s.style or "") for s in rows[0] if not s.control))
    row.rstrip()
    return row


class LastLine:
    """The unfinished line of the answer as Markdown, cut to one row of the width it is drawn in
    (its end kept)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(1, options.max_width)
        row = _inline(console, options, self.text) or Text(self.text)
        kept = fit_tail(row.plain, width)
        if kept != row.plain:
            row = Text.assemble("…", row[len(row.plain) - (len(kept) - 1) :])
        row.no_wrap = True
        row.end = ""
        yield row


class StreamedText:
    """See the module note. Feed `visible` text (`tether.cli.visible`): no control sequences."""

    def __init__(self) -> None:
        self._partial = ""
        self._fence: str | None = None
        """The open fence's marker (```` ``` ```` or `~~~`), None outside a code block."""
        self._lexer = "text"
        self._table: list[str] = []

    @property
    def partial(self) -> str:
        """The unfinished last line (what the live area shows)."""
        return self._partial

    @property
    def pending(self) -> bool:
        """Whether anything is still to be printed (an unfinished line or a table)."""
        return bool(self._partial or self._table)

    def feed(self, text: str) -> list[RenderableType]:
        """Add `text`; the renderables of the lines it completed, in order."""
        *complete, self._partial = (self._partial + text).split("\n")
        out: list[RenderableType] = []
        for line in complete:
            out += self._line(line)
        return out

    def finish(self) -> list[RenderableType]:
        """The end of the answer: the renderables of what is left (the unfinished line as a
        line of its own, a table still open)."""
        out: list[RenderableType] = []
        if self._partial:
            out += self._line(self._partial)
            self._partial = ""
        out += self._end_table()
        self._fence = None
        return out

    def _line(self, line: str) -> list[RenderableType]:
        stripped = line.strip()
        if self._fence is not None:
            if stripped.startswith(self._fence) and not stripped.strip(self._fence[0]):
                self._fence = None
                return []
            return [Syntax(line, self._lexer, theme=_CODE_THEME, word_wrap=True)]
        if stripped.startswith("|"):
            self._table.append(line)
            return []
        out = self._end_table()
        opening = next((f for f in _FENCES if stripped.startswith(f)), None)
        if opening is not None:
            self._fence = opening
            self._lexer = stripped.lstrip(opening[0]).strip().split(" ")[0] or "text"
            return out
        out.append(Markdown(line) if stripped else Text(""))
        return out

    def _end_table(self) -> list[RenderableType]:
        if not self._table:
            return []
        table, self._table = "\n".join(self._table), []
        return [Markdown(table)]
