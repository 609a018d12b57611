"""The two approval activities on a worker's real context (the `--approvals` wiring: the
unattended note, then `DeferredApprovals` attached), run in the SDK's `ActivityEnvironment` with a
real `bash`: `tool_call` ends before dispatch with the question and never runs the body;
`tool_dispatch` runs the call with the human's answer, for those arguments only; an ask from
outside either activity's policy stage (a nested call) is denied, never provisionally allowed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio")

from temporalio.testing import ActivityEnvironment

from tether.agent.unattended import refuse_unattended
from tether.cli.boot import start
from tether.core.signals import AbortController
from tether.plugins.approval import Approval
from tether.temporal.activities import TetherActivities, WorkerAgent
from tether.temporal.blobs import BlobStore
from tether.temporal.payloads import ApprovalDecision, ToolCallInput, ToolDispatchInput
from tether.temporal.storage import FileStorageDriver
from tether.tools import ToolExecutionInput


@pytest.fixture
async def activities(tmp_path: Path) -> AsyncIterator[TetherActivities]:
    ctx = await start(cwd=tmp_path, agent=True)
    refuse_unattended(ctx)
    blobs = BlobStore(FileStorageDriver(tmp_path / "payloads"), "default")
    activities = TetherActivities(ctx, cwd=tmp_path, blobs=blobs, worker_name="w1")
    approval = ctx.get("approval")
    assert isinstance(approval, Approval)
    approval.attach(activities.approvals)
    try:
        yield activities
    finally:
        await ctx.dispose()


def touch(call_id: str, name: str) -> ToolCallInput:
    arguments = json.dumps({"command": f"touch {name}", "description": "touch"})
    return ToolCallInput("s1", 1, 1, call_id, "bash", arguments)


def text_of(record: dict[str, object]) -> str:
    block = record["message"]["content"][0]  # type: ignore[index]
    return "".join(b["text"] for b in block["content"])  # type: ignore[index]


async def test_tool_call_ends_before_dispatch_with_the_question_when_the_policy_asks(
    activities: TetherActivities, tmp_path: Path
) -> None:
    output = await ActivityEnvironment().run(activities.tool_call, touch("a1", "asked.txt"))
    assert output.ask is not None
    assert (output.ask.call_id, output.ask.tool_name, output.record) == ("a1", "bash", {})
    assert json.loads(output.ask.arguments)["command"] == "touch asked.txt"
    assert not (tmp_path / "asked.txt").exists()


async def test_tool_dispatch_with_the_answer_runs_the_call(
    activities: TetherActivities, tmp_path: Path
) -> None:
    env = ActivityEnvironment()
    asked = await env.run(activities.tool_call, touch("a2", "allowed.txt"))
    assert asked.ask is not None
    decision = ApprovalDecision("a2", "allow-once")
    dispatch = ToolDispatchInput(touch("a2", "allowed.txt"), decision, asked.ask.fingerprint)
    output = await env.run(activities.tool_dispatch, dispatch)
    assert (output.ask, output.code, text_of(output.record)) == (None, None, "(no output)")
    assert (tmp_path / "allowed.txt").exists()


async def test_an_answer_given_for_other_arguments_is_a_rejection(
    activities: TetherActivities, tmp_path: Path
) -> None:
    asked = await ActivityEnvironment().run(activities.tool_call, touch("a3", "first.txt"))
    assert asked.ask is not None
    decision = ApprovalDecision("a3", "allow-once")
    dispatch = ToolDispatchInput(touch("a3", "other.txt"), decision, asked.ask.fingerprint)
    output = await ActivityEnvironment().run(activities.tool_dispatch, dispatch)
    assert text_of(output.record) == 'Error: the user rejected tool "bash"'
    assert not (tmp_path / "other.txt").exists()


async def test_an_ask_from_outside_the_activities_policy_stage_is_denied(
    activities: TetherActivities, tmp_path: Path
) -> None:
    result = await activities.tools.execute(
        ToolExecutionInput(
            call_id="nested",
            name="bash",
            arguments={"command": "touch nested.txt", "description": "touch"},
            signal=AbortController().signal,
            agent=WorkerAgent(tmp_path, "s1"),
        )
    )
    assert result.is_error
    assert list(result.content) == [
        {
            "type": "text",
            "text": 'Error: tool "bash" requires approval, but no approval channel is available',
        }
    ]
    assert not (tmp_path / "nested.txt").exists()


async def test_a_call_whose_policy_stage_is_cancelled_publishes_its_one_result_and_raises(
    activities: TetherActivities, tmp_path: Path
) -> None:
    """The task running the activity's call cancelled while a pre-execute listener waits (what a
    worker's loop does to its tasks at shutdown): `ABORTED_BEFORE_DISPATCH` is published once and
    the cancellation reaches the activity."""
    (tmp_path / "a.txt").write_text("a\n")
    waiting: list[asyncio.Task[object]] = []
    entered = asyncio.Event()
    published: list[tuple[str, str | None]] = []

    async def pre_execute(exec: Any, next: Any) -> Any:
        task = asyncio.current_task()
        assert task is not None
        waiting.append(task)
        entered.set()
        await asyncio.Event().wait()
        return await next()

    def observe(exec: Any, result: Any) -> None:
        published.append((exec.call_id, getattr(result, "code", None)))

    activities.ctx.on("tools/pre-execute", pre_execute)
    activities.ctx.on("tools/result", observe)
    read = ToolCallInput("s1", 1, 1, "r1", "read", json.dumps({"path": "a.txt"}))
    running = asyncio.create_task(ActivityEnvironment().run(activities.tool_call, read))
    await entered.wait()
    waiting[0].cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert published == [("r1", "ABORTED_BEFORE_DISPATCH")]
