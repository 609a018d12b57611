"""A server's `elicitation/create` through the `approval` service (the SDK's server, over stdio)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tether.kernel import Context
from tether.plugins import mcp as mcp_plugin
from tether.plugins.approval import (
    Approval,
    ApprovalAnswer,
    ApprovalQuestion,
    ElicitationQuestion,
    ElicitationReply,
    ElicitField,
)
from tether.tools import ToolRuntime

from ._support import call, settled, stdio_entry

pytestmark = pytest.mark.timeout(150)


class FormFiller:
    """A prompter that answers every form with `reply` and remembers the questions."""

    def __init__(self, reply: ElicitationReply) -> None:
        self.reply = reply
        self.questions: list[ElicitationQuestion] = []

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        return "reject"

    async def elicit(self, question: ElicitationQuestion) -> ElicitationReply:
        self.questions.append(question)
        return self.reply


async def _booked(tmp_path: Path, approval: dict[str, Any] | None, prompter: Any) -> Any:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(Approval, approval or {})
    if prompter is not None:
        ctx.approval.attach(prompter)
    await ctx.plugin(mcp_plugin, {"servers": {"box": stdio_entry(tmp_path / "record.jsonl")}})
    try:
        await settled(ctx)
        result = await call(ctx, "mcp__box__book", {})
        [block] = result.content
        return json.loads(str(block["text"]))
    finally:
        await ctx.dispose()


async def test_an_accepted_form_is_returned_with_the_schema_defaults_filled_in(
    tmp_path: Path,
) -> None:
    filler = FormFiller(ElicitationReply("accept", {"guests": 4}))
    answer = await _booked(tmp_path, None, filler)
    assert answer == {"action": "accept", "content": {"guests": 4, "note": "window seat"}}


async def test_the_user_sees_the_servers_message_and_fields(tmp_path: Path) -> None:
    filler = FormFiller(ElicitationReply("cancel"))
    await _booked(tmp_path, None, filler)
    [question] = filler.questions
    assert question.source == 'mcp server "box"'
    assert question.message == "How many guests?"
    assert question.fields == (
        ElicitField("guests", "integer", description="How many guests", required=True, default=2),
        ElicitField("note", "string", title="A wish", default="window seat"),
        ElicitField("terrace", "boolean"),
    )


async def test_a_declined_form_is_declined_without_content(tmp_path: Path) -> None:
    answer = await _booked(tmp_path, None, FormFiller(ElicitationReply("decline")))
    assert answer == {"action": "decline", "content": None}


async def test_headless_a_form_is_declined_by_default(tmp_path: Path) -> None:
    answer = await _booked(tmp_path, None, None)
    assert answer == {"action": "decline", "content": None}


async def test_headless_the_configured_answer_is_given(tmp_path: Path) -> None:
    answer = await _booked(tmp_path, {"non_interactive_elicitation": "cancel"}, None)
    assert answer == {"action": "cancel", "content": None}
