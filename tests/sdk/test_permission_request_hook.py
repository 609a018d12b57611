"""A PermissionRequest command hook's `updatedInput` (issue 35): `decision: {behavior: "allow",
updatedInput}` runs the call with that input — Claude Code's names mapped back, validated as the
model's arguments are: a bad one is INVALID_ARGS and never runs. Through the SDK, with a real
hook script in the project's `.claude/settings.json`, and with the SDK's own PermissionRequest
hook callback."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    ResultMessage,
    ToolResultBlock,
    UserMessage,
    query,
)

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from .conftest import Options

pytestmark = pytest.mark.slow

HOOK = """\
#!{python}
import json, sys
payload = json.load(sys.stdin)
decision = {{"behavior": "allow", "updatedInput": {updated}}}
print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "PermissionRequest",
    "decision": decision}}}}))
"""


def permission_hook(work: Path, updated: dict[str, Any]) -> None:
    script = work.parent / "permission.py"
    script.write_text(HOOK.format(python=sys.executable, updated=repr(updated)))
    script.chmod(0o755)
    hooks = {
        "PermissionRequest": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": str(script)}]}
        ]
    }
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


def touch(name: str) -> tuple[str, str, str]:
    return ("call_1", "bash", json.dumps({"command": f"touch {name}", "description": "make"}))


def tool_results(messages: list[Any]) -> list[ToolResultBlock]:
    return [
        block
        for m in messages
        if isinstance(m, UserMessage) and isinstance(m.content, list)
        for block in m.content
        if isinstance(block, ToolResultBlock)
    ]


async def test_a_permission_request_hooks_updated_input_is_what_runs(
    options: Options, server: ScriptedModelServer, work: Path
) -> None:
    permission_hook(work, {"command": "touch changed.txt", "description": "make"})
    server.push(tool_calls_reply(touch("made.txt")), text_reply("done"))

    messages = [m async for m in query(prompt="make it", options=options())]

    (result,) = tool_results(messages)
    assert result.is_error is False
    assert sorted(p.name for p in work.iterdir()) == [".claude", "changed.txt"]
    assert isinstance(messages[-1], ResultMessage)


async def test_a_permission_request_hooks_invalid_input_is_invalid_args_and_never_runs(
    options: Options, server: ScriptedModelServer, work: Path
) -> None:
    permission_hook(work, {"command": ["touch", "changed.txt"]})
    server.push(tool_calls_reply(touch("made.txt")), text_reply("done"))

    messages = [m async for m in query(prompt="make it", options=options())]

    (result,) = tool_results(messages)
    assert result.is_error is True
    assert str(result.content).startswith("Error: invalid arguments")
    assert sorted(p.name for p in work.iterdir()) == [".claude"]


async def test_a_permission_request_callbacks_updated_input_is_what_runs(
    options: Options, server: ScriptedModelServer, work: Path
) -> None:
    async def change(
        input_data: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        decision = {
            "behavior": "allow",
            "updatedInput": {"command": "touch changed.txt", "description": "d"},
        }
        return {  # type: ignore[return-value, typeddict-item]
            "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}
        }

    server.push(tool_calls_reply(touch("made.txt")), text_reply("done"))
    hooks = {"PermissionRequest": [HookMatcher(matcher="Bash", hooks=[change])]}

    messages = [m async for m in query(prompt="make it", options=options(hooks=hooks))]

    (result,) = tool_results(messages)
    assert result.is_error is False
    assert sorted(p.name for p in work.iterdir()) == ["changed.txt"]
