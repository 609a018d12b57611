"""`can_use_tool` answers every call that would ask (issue 35, `--permission-prompt-tool
stdio`): an allow runs the call, a deny refuses it with the application's message, and an allow
with changed input runs that input, validated as the model's arguments are (a bad one is
INVALID_ARGS and never runs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
    ToolResultBlock,
    UserMessage,
)

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from .conftest import Options

pytestmark = pytest.mark.slow


def touch(name: str) -> tuple[str, str, str]:
    return ("call_1", "bash", json.dumps({"command": f"touch {name}", "description": "make"}))


async def turn(options: ClaudeAgentOptions, prompt: str) -> list[Any]:
    messages: list[Any] = []
    async with ClaudeSDKClient(options=options) as client:
        await client.query(prompt)
        messages += [m async for m in client.receive_response()]
    return messages


def tool_results(messages: list[Any]) -> list[ToolResultBlock]:
    return [
        block
        for m in messages
        if isinstance(m, UserMessage) and isinstance(m.content, list)
        for block in m.content
        if isinstance(block, ToolResultBlock)
    ]


async def test_an_allowed_call_runs_and_the_callback_saw_claude_codes_names(
    options: Options, server: ScriptedModelServer, work: Path
) -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    async def allow(
        name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow:
        asked.append((name, tool_input))
        return PermissionResultAllow()

    server.push(tool_calls_reply(touch("made.txt")), text_reply("made"))

    messages = await turn(options(can_use_tool=allow), "make it")

    assert asked == [("Bash", {"command": "touch made.txt", "description": "make"})]
    (result,) = tool_results(messages)
    assert result.is_error is False
    assert (work / "made.txt").exists()
    assert isinstance(messages[-1], ResultMessage)


async def test_a_denied_call_is_refused_with_the_applications_message(
    options: Options, server: ScriptedModelServer, work: Path
) -> None:
    async def deny(
        name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultDeny:
        return PermissionResultDeny(message="not in this directory")

    server.push(tool_calls_reply(touch("made.txt")), text_reply("ok, I won't"))

    messages = await turn(options(can_use_tool=deny), "make it")

    (result,) = tool_results(messages)
    assert result.is_error is True
    assert "not in this directory" in str(result.content)
    assert not (work / "made.txt").exists()
    last = messages[-1]
    assert isinstance(last, ResultMessage)
    assert last.result == "ok, I won't"


async def test_an_allow_with_changed_input_runs_the_changed_input(
    options: Options, server: ScriptedModelServer, work: Path
) -> None:
    async def change(
        name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow:
        return PermissionResultAllow(updated_input={**tool_input, "command": "touch other.txt"})

    server.push(tool_calls_reply(touch("made.txt")), text_reply("fine"))

    messages = await turn(options(can_use_tool=change), "make it")

    (result,) = tool_results(messages)
    assert result.is_error is False
    assert (work / "other.txt").exists()
    assert not (work / "made.txt").exists()


async def test_an_allow_with_invalid_changed_input_is_invalid_args_and_never_runs(
    options: Options, server: ScriptedModelServer, work: Path
) -> None:
    async def change(
        name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow:
        return PermissionResultAllow(updated_input={"command": ["touch", "other.txt"]})

    server.push(tool_calls_reply(touch("made.txt")), text_reply("fine"))

    messages = await turn(options(can_use_tool=change), "make it")

    (result,) = tool_results(messages)
    assert result.is_error is True
    assert str(result.content).startswith("Error: invalid arguments")
    assert sorted(p.name for p in work.iterdir()) == []
