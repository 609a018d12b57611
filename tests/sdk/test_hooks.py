"""The Claude Agent SDK's hook callbacks are hooks of the tether session (issue 35): a
PreToolUse callback that denies a Bash command stops it exactly as a command hook would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    ClaudeSDKClient,
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    ResultMessage,
    ToolResultBlock,
    UserMessage,
)

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from .conftest import Options

pytestmark = pytest.mark.slow


async def test_a_pre_tool_use_callback_denies_a_bash_command(
    options: Options, server: ScriptedModelServer, work: Path
) -> None:
    seen: list[dict[str, Any]] = []

    async def check_bash(
        input_data: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        data: dict[str, Any] = dict(input_data)
        seen.append(data)
        command = str(data.get("tool_input", {}).get("command", ""))
        if "rm " in command:
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "rm is not allowed here",
                }
            }
        return {}

    (work / "keep.txt").write_text("keep me")
    command = json.dumps({"command": "rm keep.txt", "description": "remove"})
    server.push(tool_calls_reply(("call_1", "bash", command)), text_reply("I may not."))
    hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[check_bash])]}

    async with ClaudeSDKClient(
        options=options(permission_mode="bypassPermissions", hooks=hooks)
    ) as client:
        await client.query("remove keep.txt")
        messages = [m async for m in client.receive_response()]

    results = [
        block
        for m in messages
        if isinstance(m, UserMessage) and isinstance(m.content, list)
        for block in m.content
        if isinstance(block, ToolResultBlock)
    ]
    (denied,) = results
    assert denied.is_error is True
    assert "rm is not allowed here" in str(denied.content)
    assert (work / "keep.txt").read_text() == "keep me"
    (payload,) = seen
    assert (payload["hook_event_name"], payload["tool_name"]) == ("PreToolUse", "Bash")
    assert isinstance(messages[-1], ResultMessage)
    assert messages[-1].result == "I may not."
