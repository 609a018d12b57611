"""The Claude Agent SDK's `query()` drives tether unchanged (issue 35): a tool turn, `max_turns`,
and the resume of an earlier session, each seen through the SDK's own types."""

from __future__ import annotations

import json

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    query,
)

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from .conftest import Options

pytestmark = pytest.mark.slow


def bash(command: str) -> tuple[str, str, str]:
    return ("call_1", "bash", json.dumps({"command": command, "description": "a command"}))


async def test_query_runs_a_tool_turn_and_the_application_sees_claude_codes_messages(
    options: Options, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash("echo hi-sdk")), text_reply("done"))

    messages = [
        m
        async for m in query(prompt="say hi", options=options(permission_mode="bypassPermissions"))
    ]

    init, call, result_message, answer, result = messages
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert isinstance(call, AssistantMessage)
    (use,) = call.content
    assert isinstance(use, ToolUseBlock)
    assert (use.name, use.input["command"]) == ("Bash", "echo hi-sdk")
    assert isinstance(result_message, UserMessage)
    assert isinstance(result_message.content, list)
    (tool_result,) = result_message.content
    assert isinstance(tool_result, ToolResultBlock)
    assert (tool_result.content, tool_result.is_error) == ("hi-sdk\n", False)
    assert isinstance(answer, AssistantMessage)
    assert answer.content == [TextBlock("done")]
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.result, result.num_turns) == (
        "success",
        False,
        "done",
        2,
    )
