"""In-process SDK MCP servers (`create_sdk_mcp_server` + `@tool`) are servers of the session
(issue 35): their tools are `mcp__<server>__<tool>`, called over the control channel
(`mcp_message`) through tether's pipeline, and an interrupted call is cancelled over the same
channel (`notifications/cancelled`: the application's handler is cancelled) and ends ABORTED."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeSDKClient,
    ResultMessage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ..cli._support import PATIENCE_S
from .conftest import TETHER, Options

pytestmark = pytest.mark.slow


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"sum: {args['a'] + args['b']:g}"}]}


def tool_results(messages: list[Any]) -> list[ToolResultBlock]:
    return [
        block
        for m in messages
        if isinstance(m, UserMessage) and isinstance(m.content, list)
        for block in m.content
        if isinstance(block, ToolResultBlock)
    ]


async def test_the_model_calls_an_sdk_server_tool_and_the_application_sees_its_result(
    options: Options, server: ScriptedModelServer
) -> None:
    calc = create_sdk_mcp_server("calc", tools=[add])
    call = ("call_1", "mcp__calc__add", json.dumps({"a": 2, "b": 3}))
    server.push(tool_calls_reply(call), text_reply("five"))

    given = options(mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"])
    messages = [m async for m in query(prompt="add 2 and 3", options=given)]

    uses = [
        block
        for m in messages
        if isinstance(m, AssistantMessage)
        for block in m.content
        if isinstance(block, ToolUseBlock)
    ]
    assert [(u.name, u.input) for u in uses] == [("mcp__calc__add", {"a": 2, "b": 3})]
    (result,) = tool_results(messages)
    assert result.is_error is False
    assert "sum: 5" in str(result.content)
    last = messages[-1]
    assert isinstance(last, ResultMessage)
    assert (last.subtype, last.result) == ("success", "five")
    sent = json.dumps(server.requests[0].body["tools"])
    assert "mcp__calc__add" in sent


async def test_an_interrupted_sdk_server_call_is_cancelled_in_the_application_and_aborted(
    options: Options, server: ScriptedModelServer, tmp_path: Path
) -> None:
    entered = asyncio.Event()
    cancelled = asyncio.Event()

    @tool("wait", "Wait for a long time", {})
    async def wait(args: dict[str, Any]) -> dict[str, Any]:
        entered.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {"content": [{"type": "text", "text": "waited"}]}

    slow = create_sdk_mcp_server("slow", tools=[wait])
    server.push(tool_calls_reply(("call_1", "mcp__slow__wait", "{}")), text_reply("next answer"))
    given = options(mcp_servers={"slow": slow}, allowed_tools=["mcp__slow__wait"])

    async with ClaudeSDKClient(options=given) as client:
        await client.query("wait a while")
        seen: list[Any] = []
        async for message in client.receive_response():
            seen.append(message)
            if isinstance(message, AssistantMessage) and isinstance(
                message.content[0], ToolUseBlock
            ):
                await asyncio.wait_for(entered.wait(), PATIENCE_S)
                await client.interrupt()
        await asyncio.wait_for(cancelled.wait(), PATIENCE_S)
        result = seen[-1]
        assert isinstance(result, ResultMessage)
        assert (result.subtype, result.is_error) == ("error_during_execution", True)
        assert result.errors == ["ABORTED: the turn was aborted"]
        (aborted,) = tool_results(seen)
        assert aborted.is_error is True
        session_id = result.session_id

        await client.query("and now?")
        answers = [m async for m in client.receive_response()]

    last = answers[-1]
    assert isinstance(last, ResultMessage)
    assert (last.subtype, last.result) == ("success", "next answer")
    home = tmp_path / "home"
    log = home / "sessions" / session_id / "session.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    calls = [r["data"] for r in records if r["type"] == "tool/call"]
    results = [r["data"] for r in records if r["type"] == "tool/result"]
    assert [c["call_id"] for c in calls] == ["call_1"]
    ((call_id, code, cancel),) = [
        (r["message"]["content"][0]["call_id"], r["error"]["code"], r["meta"]["mcp"]["cancel"])
        for r in results
    ]
    assert (call_id, code, cancel) == ("call_1", "ABORTED", "confirmed")
    check = subprocess.run(
        [str(TETHER), "sessions", "check", session_id],
        env={**os.environ, "TETHER_HOME": str(home)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert (check.returncode, check.stdout) == (0, f"{session_id}: ok\n")


async def test_an_sdk_server_tool_not_allowed_is_refused_and_its_handler_never_runs(
    options: Options, server: ScriptedModelServer
) -> None:
    ran: list[dict[str, Any]] = []

    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def counted(args: dict[str, Any]) -> dict[str, Any]:
        ran.append(args)
        return {"content": [{"type": "text", "text": "added"}]}

    calc = create_sdk_mcp_server("calc", tools=[counted])
    call = ("call_1", "mcp__calc__add", json.dumps({"a": 2, "b": 3}))
    server.push(tool_calls_reply(call), text_reply("not allowed"))

    messages = [m async for m in query(prompt="add", options=options(mcp_servers={"calc": calc}))]

    (result,) = tool_results(messages)
    assert result.is_error is True
    assert str(result.content).startswith(
        'Error: tool "mcp__calc__add" requires approval, but no approval channel is available'
    )
    assert ran == []
