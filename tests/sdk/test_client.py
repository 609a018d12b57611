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
    ToolUseBlock,
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
