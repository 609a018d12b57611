"""Printing with hidden characters written out in their own style (`tether.cli.visible`).

Contract: the markup and `Text` forms escape rich markup, show the written-out characters (see
tests/core/test_visible.py) in `ESCAPE_STYLE`, and style nothing else.
"""

from __future__ import annotations

import io

from rich.console import Console

from tether.cli.visible import ESCAPE_STYLE, visible_markup, visible_text


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
