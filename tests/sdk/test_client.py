"""`ClaudeSDKClient` drives one open tether session (issue 35): three turns in one session, and
`interrupt()` during a running command — its process gone, the turn's result an ABORTED error,
the client usable for the next turn."""

from __future__ import annotations

import json
import uuid

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeSDKClient,
    ResultMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ..cli._support import eventually, gone
from ._support import started
from .conftest import Options

pytestmark = pytest.mark.slow


async def test_three_turns_run_in_one_session_each_ending_in_its_result(
    options: Options, server: ScriptedModelServer
) -> None:
    server.push(text_reply("one"), text_reply("two"), text_reply("three"))
    answers: list[str] = []
    sessions: set[str] = set()

    async with ClaudeSDKClient(options=options()) as client:
        for prompt in ("first", "second", "third"):
            await client.query(prompt)
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage):
                    answers += [b.text for b in message.content if isinstance(b, TextBlock)]
                if isinstance(message, ResultMessage):
                    sessions.add(message.session_id)

    assert answers == ["one", "two", "three"]
    assert len(sessions) == 1
    last = json.dumps(server.requests[-1].body)
    assert all(word in last for word in ("first", "one", "second", "two", "third"))


async def test_interrupt_ends_a_running_command_and_the_client_takes_the_next_turn(
    options: Options, server: ScriptedModelServer
) -> None:
    seconds = f"{3000 + uuid.uuid4().int % 1000}.5"  # a unique argv to find the process by
    command = json.dumps({"command": f"sleep {seconds}", "description": "wait"})
    server.push(tool_calls_reply(("call_1", "bash", command)), text_reply("next answer"))

    async with ClaudeSDKClient(options=options(permission_mode="bypassPermissions")) as client:
        await client.query("wait a while")
        seen: list[object] = []
        sleeping = None
        async for message in client.receive_response():
            seen.append(message)
            if isinstance(message, AssistantMessage) and isinstance(
                message.content[0], ToolUseBlock
            ):
                sleeping = await started(["sleep", seconds])
                await client.interrupt()
        result = seen[-1]
        assert isinstance(result, ResultMessage)
        assert (result.subtype, result.is_error) == ("error_during_execution", True)
        assert result.errors == ["ABORTED: the turn was aborted"]
        assert sleeping is not None
        await eventually(lambda: gone(sleeping), what="the sleep to be gone")

        await client.query("and now?")
        answers = [m async for m in client.receive_response()]

    last = answers[-1]
    assert isinstance(last, ResultMessage)
    assert (last.subtype, last.result) == ("success", "next answer")


async def test_set_model_switches_the_model_of_the_next_request(
    options: Options, server: ScriptedModelServer
) -> None:
    server.push(text_reply("one"), text_reply("two"), text_reply("three"))

    async with ClaudeSDKClient(options=options()) as client:
        for prompt, model in (("first", "other-model"), ("second", None), ("third", None)):
            await client.query(prompt)
            _ = [m async for m in client.receive_response()]
            if prompt != "third":
                await client.set_model(model)

    assert [r.body["model"] for r in server.requests] == ["scripted", "other-model", "scripted"]


async def test_stop_task_stops_one_background_job_and_the_turn_goes_on(
    options: Options, server: ScriptedModelServer
) -> None:
    seconds = f"{3000 + uuid.uuid4().int % 1000}.25"
    background = {"command": f"sleep {seconds}", "description": "wait", "run_in_background": True}
    waiting = {"job_id": "bash-1", "wait": True}
    server.push(
        tool_calls_reply(("call_1", "bash", json.dumps(background))),
        tool_calls_reply(("call_2", "job_output", json.dumps(waiting))),
        text_reply("it stopped"),
    )

    async with ClaudeSDKClient(options=options(permission_mode="bypassPermissions")) as client:
        await client.query("start it, then wait for it")
        seen: list[object] = []
        sleeping = None
        async for message in client.receive_response():
            seen.append(message)
            if isinstance(message, UserMessage) and isinstance(message.content, list):
                results = [b for b in message.content if isinstance(b, ToolResultBlock)]
                if results and results[0].tool_use_id == "call_1":
                    sleeping = await started(["sleep", seconds])
                    await client.stop_task("bash-1")

    assert sleeping is not None
    await eventually(lambda: gone(sleeping), what="the background sleep to be gone")
    waited = [
        b
        for m in seen
        if isinstance(m, UserMessage) and isinstance(m.content, list)
        for b in m.content
        if isinstance(b, ToolResultBlock) and b.tool_use_id == "call_2"
    ]
    assert [b.content for b in waited] == ["(no new output)\n[status: killed, signal: SIGTERM]"]
    last = seen[-1]
    assert isinstance(last, ResultMessage)
    assert (last.subtype, last.result) == ("success", "it stopped")


async def test_rewind_files_is_an_error_response_saying_there_are_no_checkpoints(
    options: Options,
) -> None:
    async with ClaudeSDKClient(options=options()) as client:
        with pytest.raises(Exception, match="rewind_files") as raised:
            await client.rewind_files("0b5c3c0e-5f4a-4e43-9d59-2f4c3e1d2a10")

    assert str(raised.value) == (
        "rewind_files: tether keeps no file checkpoints, so there is nothing to rewind to; use "
        "git to restore files"
    )


async def test_stop_task_of_an_unknown_id_is_an_error_response_naming_the_ids(
    options: Options,
) -> None:
    async with ClaudeSDKClient(options=options()) as client:
        with pytest.raises(Exception, match="stop_task") as raised:
            await client.stop_task("bash-9")

    assert str(raised.value) == (
        "stop_task: no background task 'bash-9' of this session; the ids are the job ids the "
        "bash tool's results name (bash-1, …)"
    )
