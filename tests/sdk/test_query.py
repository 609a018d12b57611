"""The Claude Agent SDK's `query()` drives tether unchanged (issue 35): a tool turn, `max_turns`,
and the resume of an earlier session, each seen through the SDK's own types."""

from __future__ import annotations

import json

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    query,
)

from tether.testing.scripted_model import (
    ScriptedModelServer,
    finish,
    reply,
    text,
    text_reply,
    tool_calls_reply,
    usage,
)

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
    assert isinstance(init, SystemMessage)
    assert init.subtype == "init"
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


async def test_max_turns_ends_the_run_as_error_max_turns(
    options: Options, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash("echo one")), tool_calls_reply(bash("echo two")))

    messages = [
        m
        async for m in query(
            prompt="loop", options=options(permission_mode="bypassPermissions", max_turns=1)
        )
    ]

    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.num_turns) == ("error_max_turns", True, 1)


async def test_a_later_query_resumes_the_earlier_session(
    options: Options, server: ScriptedModelServer
) -> None:
    server.push(text_reply("the word is teal"), text_reply("it was teal"))
    first = [m async for m in query(prompt="remember teal", options=options())]
    earlier = first[-1]
    assert isinstance(earlier, ResultMessage)

    second = [
        m async for m in query(prompt="what was it?", options=options(resume=earlier.session_id))
    ]

    result = second[-1]
    assert isinstance(result, ResultMessage)
    assert (result.session_id, result.result) == (earlier.session_id, "it was teal")
    sent = json.dumps(server.requests[-1].body)
    assert "remember teal" in sent
    assert "the word is teal" in sent


async def test_partial_messages_reach_the_application_as_stream_events(
    options: Options, server: ScriptedModelServer
) -> None:
    server.push(reply(text("Hel"), text("lo"), finish("stop"), usage(10, 2)))

    given = options(include_partial_messages=True)
    messages = [m async for m in query(prompt="hi", options=given)]

    events = [m.event for m in messages if isinstance(m, StreamEvent)]
    deltas = [e["delta"]["text"] for e in events if e["type"] == "content_block_delta"]
    assert deltas == ["Hel", "lo"]
    assert (events[0]["type"], events[-1]["type"]) == ("message_start", "message_stop")
    texts = [
        b.text
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, TextBlock)
    ]
    assert texts == ["Hello"]
