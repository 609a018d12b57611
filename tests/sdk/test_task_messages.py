"""A background job's task records through the real Claude Agent SDK: the application sees a
`TaskStartedMessage` when the model starts a command with `run_in_background` (the task id is
the job id `stop_task` takes, the type `local_bash`) and a `TaskNotificationMessage` when it
ends — `completed` for a command that finished, `stopped` for one `stop_task` stopped."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from claude_agent_sdk import (
    ClaudeSDKClient,
    TaskNotificationMessage,
    TaskStartedMessage,
    ToolResultBlock,
    UserMessage,
)

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ._support import started
from .conftest import Options

pytestmark = pytest.mark.slow


def background(command: str) -> tuple[str, str, str]:
    arguments = {"command": command, "description": "wait", "run_in_background": True}
    return ("call_1", "bash", json.dumps(arguments))


WAIT = ("call_2", "job_output", json.dumps({"job_id": "bash-1", "wait": True}))


def tasks(messages: list[Any]) -> list[tuple[str, str, str]]:
    """(kind, task id, type or status) of each task record, in order."""
    found: list[tuple[str, str, str]] = []
    for m in messages:
        if isinstance(m, TaskStartedMessage):
            found.append(("started", m.task_id, str(m.task_type)))
        elif isinstance(m, TaskNotificationMessage):
            found.append(("notification", m.task_id, m.status))
    return found


async def test_a_background_command_is_a_task_that_starts_and_completes(
    options: Options, server: ScriptedModelServer
) -> None:
    server.push(
        tool_calls_reply(background("echo done-in-background")),
        tool_calls_reply(WAIT),
        text_reply("it finished"),
    )

    async with ClaudeSDKClient(options=options(permission_mode="bypassPermissions")) as client:
        await client.query("run it in the background and wait")
        messages = [m async for m in client.receive_response()]

    assert tasks(messages) == [
        ("started", "bash-1", "local_bash"),
        ("notification", "bash-1", "completed"),
    ]


async def test_a_background_command_stop_task_stopped_is_a_stopped_task(
    options: Options, server: ScriptedModelServer
) -> None:
    seconds = f"{3000 + uuid.uuid4().int % 1000}.75"
    server.push(
        tool_calls_reply(background(f"sleep {seconds}")),
        tool_calls_reply(WAIT),
        text_reply("it stopped"),
    )

    async with ClaudeSDKClient(options=options(permission_mode="bypassPermissions")) as client:
        await client.query("start it, then wait for it")
        messages: list[Any] = []
        async for message in client.receive_response():
            messages.append(message)
            if isinstance(message, UserMessage) and isinstance(message.content, list):
                results = [b for b in message.content if isinstance(b, ToolResultBlock)]
                if results and results[0].tool_use_id == "call_1":
                    await started(["sleep", seconds])
                    await client.stop_task("bash-1")

    assert tasks(messages) == [
        ("started", "bash-1", "local_bash"),
        ("notification", "bash-1", "stopped"),
    ]
