"""`session_state_changed` records through the real Claude Agent SDK: an application that opts
in (`CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS`) sees, as `SystemMessage`s, `running` when a turn
starts, `requires_action` while its `can_use_tool` is being asked (then `running` again) and
`idle` after the turn; one that does not sees none (the SDK reads the `sdk_host_only` ones it
asked for itself and drops them)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    SystemMessage,
    ToolPermissionContext,
    query,
)

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ..patience import PATIENCE_S
from .conftest import Options

pytestmark = pytest.mark.slow

EMIT = "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS"


def opted_in(options: ClaudeAgentOptions) -> ClaudeAgentOptions:
    assert isinstance(options.env, dict)
    options.env[EMIT] = "1"
    return options


def states(messages: list[Any]) -> list[str]:
    return [
        m.data["state"]
        for m in messages
        if isinstance(m, SystemMessage) and m.subtype == "session_state_changed"
    ]


async def test_an_application_that_opts_in_sees_running_then_idle(
    options: Options, server: ScriptedModelServer
) -> None:
    server.push(text_reply("hello"))

    messages = [m async for m in query(prompt="hi", options=opted_in(options()))]

    assert states(messages) == ["running", "idle"]


async def test_a_can_use_tool_question_is_requires_action_between_running(
    options: Options, server: ScriptedModelServer
) -> None:
    async def allow(
        name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow:
        return PermissionResultAllow()

    touch = json.dumps({"command": "touch made.txt", "description": "make"})
    server.push(tool_calls_reply(("call_1", "bash", touch)), text_reply("made"))
    seen: list[Any] = []
    async with ClaudeSDKClient(options=opted_in(options(can_use_tool=allow))) as client:
        await client.query("make it")
        async with asyncio.timeout(PATIENCE_S):  # a backstop: the idle ends the wait
            async for message in client.receive_messages():
                seen.append(message)
                if states(seen)[-1:] == ["idle"]:
                    break

    assert states(seen) == ["running", "requires_action", "running", "idle"]


async def test_an_application_that_does_not_opt_in_sees_no_session_states(
    options: Options, server: ScriptedModelServer
) -> None:
    server.push(text_reply("hello"))

    messages = [m async for m in query(prompt="hi", options=options())]

    assert states(messages) == []
    assert [type(m).__name__ for m in messages] == [
        "SystemMessage",
        "AssistantMessage",
        "ResultMessage",
    ]
