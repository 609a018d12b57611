"""The read window counts every line exactly, keeps at most `limit` lines from `offset`, cuts long
lines, stops at the byte cap, and does not depend on how the text was chunked."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tether.plugins.fs.window import Window, WindowBuilder


def window_of(
    chunks: list[str], offset: int = 1, limit: int = 100, width: int = 50, cap: int = 10_000
) -> Window:
    builder = WindowBuilder(offset, limit, width, cap)
    for chunk in chunks:
        builder.feed(chunk)
    return builder.finish()


def test_a_trailing_newline_adds_no_line_and_a_final_unterminated_line_counts() -> None:
    assert window_of(["a\nb\n"]).total_lines == 2
    assert window_of(["a\nb"]).total_lines == 2
    assert window_of([""]).total_lines == 0
    assert window_of(["\n"]).lines == ((1, ""),)


def test_one_carriage_return_per_line_is_dropped() -> None:
    assert window_of(["a\r\r\nb\r\n"]).lines == ((1, "a\r"), (2, "b"))


def test_lines_before_offset_and_after_limit_are_counted_not_kept() -> None:
    result = window_of(["".join(f"{n}\n" for n in range(1, 101))], offset=10, limit=3)
    assert result.lines == ((10, "10"), (11, "11"), (12, "12"))
    assert result.total_lines == 100
    assert not result.truncated_by_bytes


def test_a_line_longer_than_the_width_is_cut_with_a_notice() -> None:
    result = window_of(["x" * 10 + "\n"], width=4)
    assert result.lines == ((1, "xxxx... (line truncated to 4 chars)"),)


def test_the_byte_cap_counts_utf8_bytes_plus_one_per_separator() -> None:
    # "é" is 2 bytes: line 1 = 2, line 2 = 1 + 2 = 3 -> 5 fits; line 3 would make 8 > 6.
    result = window_of(["é\né\né\n"], cap=6)
    assert result.lines == ((1, "é"), (2, "é"))
    assert result.truncated_by_bytes
    assert result.total_lines == 3


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(alphabet="ab\r\n", max_size=60),
    cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=6),
    offset=st.integers(min_value=1, max_value=6),
    limit=st.integers(min_value=1, max_value=6),
)
def test_chunking_never_changes_the_window(
    text: str, cuts: list[int], offset: int, limit: int
) -> None:
    points = sorted({min(c, len(text)) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    whole = window_of([text], offset, limit, width=3, cap=12)
    assert window_of(chunks, offset, limit, width=3, cap=12) == whole
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    assert whole.total_lines == len(lines)
