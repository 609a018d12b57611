"""Printing a string the model controls with rich: what a terminal would hide or obey written out
(`tether.core.visible`, which decides which characters those are) in `ESCAPE_STYLE`.

Owns `visible_markup` (rich markup, for the f-strings the CLI prints, where `rich.markup.escape`
would be used) and `visible_text` (a rich `Text`); `visible` (plain text) is re-exported. Where
each is used, and the two strengths (strict, prose): docs/sandbox.md, "What a prompt shows".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ..core.visible import visible, visible_parts

if TYPE_CHECKING:
    from rich.text import Text

__all__ = ["ESCAPE_STYLE", "visible", "visible_markup", "visible_text"]

ESCAPE_STYLE: Final = "reverse"
"""How a written-out character looks: distinct from any text the model can print."""


def visible_markup(text: str, *, strict: bool = True) -> str:
    """`text` as rich markup: markup-escaped, hidden characters written out in
    `ESCAPE_STYLE`. Use it where the CLI would use `rich.markup.escape`."""
    from rich.markup import escape

    return "".join(
        f"[{ESCAPE_STYLE}]{escape(chunk)}[/{ESCAPE_STYLE}]" if written else escape(chunk)
        for chunk, written in visible_parts(text, strict=strict)
    )


def visible_text(text: str, style: str = "", *, strict: bool = True) -> Text:
    """`text` as a rich `Text` in `style`, hidden characters written out in `ESCAPE_STYLE`."""
    from rich.text import Text

    out = Text(style=style)
    for chunk, written in visible_parts(text, strict=strict):
        out.append(chunk, style=ESCAPE_STYLE if written else None)
    return out
