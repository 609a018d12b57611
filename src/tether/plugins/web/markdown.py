"""HTML -> Markdown for `web_fetch` rendering, with the spec's nesting-depth escape hatch.

Owns: `html_to_markdown(html, base_url)` — conversion with html-to-markdown 3 (ATX headings, `-`
bullets, fenced code, GFM tables; `script`/`style`/`noscript` dropped; relative links resolved
against the page URL so the model can fetch them) — returning the raw HTML instead when the
document nests deeper than `MAX_DEPTH` levels or the converter fails. Does not own fetching or
the output caps (render.py).

Depth. The spec guards its JavaScript converter with a separate lexical pre-flight over the HTML.
html-to-markdown is native, iterative and bounded: it takes the limit itself (`max_depth`) and
reports `DEPTH_LIMIT_EXCEEDED` when its DOM traversal reaches it, so that report is the trigger
(a second pass in Python would cost more than the conversion: ~30 ms for 200 KB). Depth is the
parsed tree's, so implicitly closed elements (`<p>` runs, stray close tags) do not count as
nesting. Hostile input such as `"<a" * 100000` converts in a few milliseconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:  # imported where used: it costs ~45 ms at startup
    from html_to_markdown import ConversionOptions

__all__ = ["MAX_DEPTH", "html_to_markdown"]

MAX_DEPTH: Final = 512


def _options(base_url: str | None) -> ConversionOptions:
    from html_to_markdown import ConversionOptions

    return ConversionOptions(
        heading_style="atx",
        bullets="-",
        code_block_style="backticks",
        extract_metadata=False,
        autolinks=False,
        max_depth=MAX_DEPTH,
        base_url=base_url,
    )


def html_to_markdown(html: str, base_url: str | None = None) -> str:
    """Markdown for `html`; the raw HTML when it nests too deeply or conversion fails."""
    from html_to_markdown import WarningKind, convert

    try:
        result = convert(html, _options(base_url))
    except Exception:
        return html
    if result.content is None or any(
        warning.kind == WarningKind.DEPTH_LIMIT_EXCEEDED for warning in result.warnings
    ):
        return html
    return result.content.strip()
