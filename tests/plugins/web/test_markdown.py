"""HTML -> Markdown for `web_fetch` (spec §2.5): the shapes the model sees, and the depth limit
that passes pathologically nested documents through raw."""

from __future__ import annotations

import pytest

from tether.plugins.web.markdown import html_to_markdown


def test_headings_lists_emphasis_links_code_and_tables_convert_to_markdown() -> None:
    html = (
        "<h1>Title</h1><h2>Heading</h2><ul><li>one</li><li>two</li></ul>"
        "<p><strong>bold</strong> and <em>it</em> &amp; <a href='/docs/x'>docs</a></p>"
        "<pre><code class='language-py'>print(1)</code></pre>"
        "<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>"
    )
    assert html_to_markdown(html, "https://site.test/a/b") == (
        "# Title\n\n## Heading\n\n- one\n- two\n\n"
        "**bold** and *it* & [docs](https://site.test/docs/x)\n\n"
        "```py\nprint(1)\n```\n\n| A | B |\n| --- | --- |\n| 1 | 2 |"
    )


def test_script_style_and_noscript_content_is_dropped() -> None:
    html = "<style>p{}</style><script>alert(1)</script><noscript>enable js</noscript><p>kept</p>"
    assert html_to_markdown(html) == "kept"


@pytest.mark.parametrize("depth", [600, 100_000])
def test_a_document_nested_deeper_than_the_limit_is_returned_raw(depth: int) -> None:
    deep = "<div>" * depth + "x"
    assert html_to_markdown(deep) == deep


def test_nesting_within_the_limit_converts() -> None:
    assert html_to_markdown("<div>" * 500 + "x") == "x"


def test_unclosed_paragraphs_are_not_nesting() -> None:
    assert html_to_markdown("<p>a" * 1000).startswith("a\n\na\n\n")


def test_an_unterminated_tag_storm_converts_without_stalling() -> None:
    assert html_to_markdown("<a" * 100_000) == ""
