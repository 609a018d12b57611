"""The terminal's form for a server's elicitation (`TerminalPrompter.elicit`)."""

from __future__ import annotations

import asyncio
import io

from rich.console import Console

from tether.cli.approval import TerminalPrompter
from tether.plugins.approval import ElicitationQuestion, ElicitationReply, ElicitField

FORM = ElicitationQuestion(
    source='mcp server "box"',
    message="How many guests?",
    fields=(
        ElicitField("guests", "integer", description="How many guests", required=True, default=2),
        ElicitField("terrace", "boolean"),
    ),
)


def _prompter(*lines: str) -> tuple[TerminalPrompter, io.StringIO]:
    queue: asyncio.Queue[str] = asyncio.Queue()
    for line in lines:
        queue.put_nowait(line)
    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None, highlight=False)

    async def read_line(prompt: str) -> str:
        out.write(prompt)
        return await queue.get()

    return TerminalPrompter(read_line, console), out


async def test_the_form_shows_the_asker_the_message_and_each_field() -> None:
    prompter, out = _prompter("n\n")
    assert await prompter.elicit(FORM) == ElicitationReply("decline")
    assert out.getvalue() == (
        '? mcp server "box" asks:\n'
        "    How many guests?\n"
        "    guests (integer, required) — How many guests — default 2\n"
        "    terrace (boolean)\n"
        "  y  fill it in · n  decline · c  cancel\n"
        "  answer? "
    )


async def test_filling_it_in_types_each_value_and_keeps_defaults_for_empty_lines() -> None:
    prompter, _ = _prompter("y\n", "\n", "yes\n")
    assert await prompter.elicit(FORM) == ElicitationReply("accept", {"terrace": True})


async def test_a_value_of_the_wrong_type_is_asked_again() -> None:
    prompter, out = _prompter("y\n", "many\n", "3\n", "\n")
    assert await prompter.elicit(FORM) == ElicitationReply("accept", {"guests": 3})
    assert "guests: a whole number" in out.getvalue()


async def test_c_cancels_the_form() -> None:
    prompter, _ = _prompter("c\n")
    assert await prompter.elicit(FORM) == ElicitationReply("cancel")
