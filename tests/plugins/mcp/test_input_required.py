"""SEP-2322 on 2026-07-28: a server answers a call with `InputRequiredResult`; tether asks the
user through the `approval` channel and sends the call again with the answers and the request
state (the SDK's server in a subprocess, over stdio)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tether import AbortController, ToolExecutionInput, ToolFailure
from tether.kernel import Context
from tether.plugins import mcp as mcp_plugin
from tether.plugins.approval import (
    Approval,
    ApprovalAnswer,
    ApprovalQuestion,
    ElicitationQuestion,
    ElicitationReply,
)
from tether.plugins.mcp.input_required import MAX_ROUNDS
from tether.tools import ToolRuntime

from ._support import call, events, revision, settled, stdio_entry

pytestmark = pytest.mark.timeout(150)


class FormFiller:
    """A prompter that answers every form with `reply` (None: never, until cancelled)."""

    def __init__(self, reply: ElicitationReply | None) -> None:
        self.reply = reply
        self.asked = asyncio.Event()

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        return "reject"

    async def elicit(self, question: ElicitationQuestion) -> ElicitationReply:
        self.asked.set()
        if self.reply is None:
            await asyncio.Event().wait()
        assert self.reply is not None
        return self.reply


async def _context(record: Path, prompter: FormFiller, *, legacy: bool = False) -> Context:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(Approval, {})
    ctx.approval.attach(prompter)
    await ctx.plugin(mcp_plugin, {"servers": {"box": stdio_entry(record, legacy=legacy)}})
    await settled(ctx)
    return ctx


@pytest.fixture
def record(tmp_path: Path) -> Path:
    return tmp_path / "record.jsonl"


@pytest.fixture
async def accepting(record: Path) -> AsyncIterator[Context]:
    ctx = await _context(record, FormFiller(ElicitationReply("accept", {"guests": 4})))
    yield ctx
    await ctx.dispose()


async def test_the_answer_is_sent_with_the_retry_and_the_request_state_echoed(
    accepting: Context, record: Path
) -> None:
    assert revision(accepting, "box") == "2026-07-28"
    result = await call(accepting, "mcp__box__book", {})
    [block] = result.content
    content = {"guests": 4, "note": "window seat"}  # the schema's default filled in (SEP-1034)
    assert json.loads(str(block["text"])) == {"action": "accept", "content": content}
    [booked] = events(record, "booked")
    assert (booked["version"], booked["state"]) == ("2026-07-28", "table-7")


async def test_before_2026_the_same_question_comes_as_an_elicitation_request(
    record: Path,
) -> None:
    filler = FormFiller(ElicitationReply("accept", {"guests": 4}))
    ctx = await _context(record, filler, legacy=True)
    try:
        assert revision(ctx, "box") == "2025-11-25"
        result = await call(ctx, "mcp__box__book", {})
        [block] = result.content
        assert json.loads(str(block["text"]))["content"] == {"guests": 4, "note": "window seat"}
        [booked] = events(record, "booked")
        assert (booked["version"], booked["state"]) == ("2025-11-25", None)
    finally:
        await ctx.dispose()


async def test_an_abort_while_the_user_is_asked_ends_aborted_and_sends_no_cancel(
    record: Path,
) -> None:
    filler = FormFiller(None)
    ctx = await _context(record, filler)
    try:
        controller = AbortController()
        running = asyncio.ensure_future(
            ctx.tools.execute(
                ToolExecutionInput(
                    call_id="c1", name="mcp__box__book", arguments={}, signal=controller.signal
                )
            )
        )
        await filler.asked.wait()
        controller.abort()
        result = await running
        assert isinstance(result, ToolFailure)
        assert result.code == "ABORTED"
        assert result.meta is None  # no cancel was sent: no request of the call was outstanding
        assert events(record, "booked") == []
    finally:
        await ctx.dispose()


async def test_a_server_still_asking_after_the_round_limit_fails_the_call(
    accepting: Context, record: Path
) -> None:
    result = await call(accepting, "mcp__box__pester", {})
    assert isinstance(result, ToolFailure)
    assert result.code == "MCP_ERROR"
    assert result.error.message == (
        f'MCP server "box" still asked for input after {MAX_ROUNDS} rounds'
    )
    states: list[Any] = [event["state"] for event in events(record, "pestered")]
    assert states == [None, *("+" * n for n in range(1, MAX_ROUNDS))]
