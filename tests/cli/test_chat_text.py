"""How the chat shortens text (issue 34 item 7): a preview is cut at a word boundary, never
mid-word, when the cut has a space in its second half; a message longer than `PASTE_LINES`
lines is shown as its first line and `[Pasted text +N lines]`."""

from __future__ import annotations

from tether.cli.chat.replay import PASTE_LINES, collapsed
from tether.cli.chat.status import call_target, clip


def test_a_long_preview_is_cut_at_the_last_space() -> None:
    assert clip("grep -rn something_long across the whole tree", 30) == "grep -rn something_long…"


def test_a_text_that_fits_is_kept_whole() -> None:
    assert clip("ls -la", 30) == "ls -la"


def test_one_long_word_is_cut_where_it_must_be() -> None:
    assert clip("a" * 40, 10) == "a" * 9 + "…"


def test_a_call_target_is_cut_at_a_word() -> None:
    arguments = '{"command": "python -m pytest tests/unit --maxfail=1 -q"}'
    assert call_target(arguments, limit=30) == "python -m pytest tests/unit…"


def test_a_long_message_is_collapsed_to_its_first_line() -> None:
    text = "\n".join(f"line {n}" for n in range(1, PASTE_LINES + 3))
    assert collapsed(text) == f"line 1 [Pasted text +{PASTE_LINES + 1} lines]"


def test_a_message_of_few_lines_is_shown_whole() -> None:
    text = "\n".join(f"line {n}" for n in range(1, PASTE_LINES + 1))
    assert collapsed(text) == text
