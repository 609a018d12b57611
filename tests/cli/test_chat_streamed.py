"""The answer as it streams in `tether chat` (issue 34 item 7: a resize while text streams
duplicated it): complete lines go to the scrollback once, the live area holds only the
unfinished line.

Contract: whatever the chunking, each streamed line is printed exactly once, in order, and the
printed transcript is the streamed text; the live area is one screen row per renderable at a
narrow width (the unfinished line cut to its end, a long tool label, the mode line); on a real
terminal (pyte) the screen after the turn shows each line once; a fenced code block's lines are
printed as code without the fences, a table's rows together, an unfinished last line at the end.
No model: the renderer is fed the agent's events directly.
"""

from __future__ import annotations

import io
import json

import pyte
from rich.console import Console

from tether.agent.events import StepStarted, TextDelta, ToolCallStarted
from tether.cli.chat.status import ChatRenderer
from tether.cli.chat.streamed import LastLine, StreamedText, fit_tail

ANSWER = "".join(f"line {n} of the answer, streamed\n" for n in range(1, 31)) + "the end"


def chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def printed(output: str) -> list[str]:
    return [line.rstrip() for line in output.splitlines()]


def stream(renderer: ChatRenderer, text: str, size: int) -> None:
    renderer(StepStarted(turn=1, step=1))
    for piece in chunks(text, size):
        renderer(TextDelta(piece))
    renderer.end_turn()


def test_each_line_is_printed_once_in_order_whatever_the_chunks() -> None:
    for size in (1, 3, 7, 64):
        file = io.StringIO()
        renderer = ChatRenderer(Console(file=file, width=60, force_terminal=False), live=True)

        stream(renderer, ANSWER, size)

        assert printed(file.getvalue()) == ANSWER.splitlines(), size


def test_the_live_area_is_one_row_per_renderable_at_a_narrow_width() -> None:
    console = Console(file=io.StringIO(), width=60, force_terminal=False)
    renderer = ChatRenderer(console, live=True)
    renderer.mode_line = lambda: "⏵⏵ accept edits on (shift+tab to cycle)"
    narrow = console.options.update_width(12)

    def rows() -> list[str]:
        lines = console.render_lines(renderer.live_area(), narrow)
        return ["".join(segment.text for segment in line) for line in lines]

    renderer(StepStarted(turn=1, step=1))
    renderer(TextDelta("done\n" + "a long unfinished line that is wider than the screen"))
    writing = rows()  # the unfinished line, `writing · N s`, the mode line
    command = json.dumps({"command": "sleep 300 && echo a very long command line"})
    renderer(ToolCallStarted(call_id="c1", name="bash", arguments=command))
    running = rows()  # the tool's row, the mode line (the text went to the scrollback)

    assert (len(writing), len(running)) == (3, 2)
    assert writing[0] == "… the screen"
    assert all(len(row) <= 12 for row in [*writing, *running])


def test_the_unfinished_line_is_one_row_that_keeps_its_end() -> None:
    console = Console(file=io.StringIO(), width=10, force_terminal=False)

    rows = console.render_lines(LastLine("the quick brown fox"), console.options)

    assert ["".join(s.text for s in row) for row in rows] == ["…brown fox"]
    assert fit_tail("short", 10) == "short"


def test_on_a_terminal_the_screen_shows_each_line_once_after_the_turn() -> None:
    file = io.StringIO()
    console = Console(file=file, width=30, height=8, force_terminal=True, color_system=None)
    renderer = ChatRenderer(console, live=True)

    stream(renderer, ANSWER, 5)

    screen = pyte.HistoryScreen(30, 8, history=1000)
    pyte.Stream(screen).feed(file.getvalue())
    top = ["".join(line[x].data for x in range(30)) for line in screen.history.top]
    shown = [row.rstrip() for row in [*top, *screen.display] if row.strip()]
    wrapped = [row.rstrip() for line in ANSWER.splitlines() for row in _wrap(line, 30)]
    assert shown == wrapped


def _wrap(line: str, width: int) -> list[str]:
    console = Console(file=io.StringIO(), width=width, force_terminal=False)
    with console.capture() as capture:
        console.print(line)
    return capture.get().splitlines()


def test_a_code_block_is_printed_as_code_without_its_fences() -> None:
    streamed = StreamedText()
    text = "look:\n```python\nx = 1\ny = 2\n```\nafter\n"

    out = [*streamed.feed(text), *streamed.finish()]

    console = Console(file=io.StringIO(), width=40, force_terminal=False)
    with console.capture() as capture:
        for renderable in out:
            console.print(renderable)
    assert printed(capture.get()) == ["look:", "x = 1", "y = 2", "after"]


def test_a_table_is_printed_when_it_ends_all_rows_together() -> None:
    streamed = StreamedText()

    during = streamed.feed("| a | b |\n|---|---|\n| 1 | 2 |\n")
    after = streamed.feed("below\n")

    assert during == []
    assert len(after) == 2  # the table, then the line below it


def test_an_unfinished_last_line_is_printed_when_the_answer_ends() -> None:
    streamed = StreamedText()

    assert streamed.feed("no newline yet") == []
    assert streamed.partial == "no newline yet"
    assert len(streamed.finish()) == 1
    assert not streamed.pending


def test_the_unfinished_line_is_drawn_as_markdown() -> None:
    console = Console(file=io.StringIO(), width=40, force_terminal=False)

    rows = console.render_lines(LastLine("The first half of **the answer**, "), console.options)

    assert ["".join(s.text for s in row).rstrip() for row in rows] == [
        "The first half of the answer,"
    ]
