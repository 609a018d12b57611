"""The session log of a call whose input an approver or a hook changed, through the agent loop
against a scripted model.

Contract: `tool/call` keeps the model's raw `arguments`; the call's `tool/result` carries
`changed_arguments`, the arguments the call went on with (absent when nothing changed them, the
shape older logs have). A log with `changed_arguments` checks clean, and a new agent over it
resumes: the model is sent its own call and the result.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tether import AbortController, ToolOutput, define_tool
from tether.agent.llm import LlmConfig, RetryPolicy
from tether.agent.llm.plugin import build_llm
from tether.agent.llm.service import Llm
from tether.agent.loop import AgentLoop, AgentSettings
from tether.agent.session import SessionLog, SessionStore
from tether.kernel import Context
from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply
from tether.tools import Allow, ToolExecution, ToolRuntime
from tether.tools.execution import ToolRunContext


class EchoArgs(BaseModel):
    text: str


async def echo(args: EchoArgs, exec: ToolRunContext) -> str:
    return args.text.upper()


class Rig:
    def __init__(self, server: ScriptedModelServer, ctx: Context, tmp: Path) -> None:
        self.server = server
        self.ctx = ctx
        self.tmp = tmp
        self.store = SessionStore(tmp / "sessions")
        self.llms: list[Llm] = []
        self.logs: list[SessionLog] = []

    def agent(self, log: SessionLog | None = None) -> AgentLoop:
        llm = build_llm(
            LlmConfig(
                provider="openai",
                base_url=self.server.base_url,
                model="scripted",
                retry=RetryPolicy(mode="off"),
            ),
            environ={},
        )
        self.llms.append(llm)
        if log is None:
            log = self.store.create(cwd=self.tmp)
        self.logs.append(log)
        return AgentLoop(
            tools=self.ctx.tools.runtime,
            llm=llm,
            session=log,
            settings=AgentSettings(cwd=self.tmp),
        )

    async def aclose(self) -> None:
        for log in self.logs:
            log.close()
        for llm in self.llms:
            await llm.aclose()


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    ctx.tools.register(
        define_tool(
            name="echo",
            description="echo",
            parameters=EchoArgs,
            output=ToolOutput(schema=str),
            execute=echo,
        )
    )

    async def change_hi(exec: ToolExecution, next: Any) -> object:
        """An approver that changes `hi` to `changed`, and leaves every other call alone."""
        decision = await next()
        if isinstance(exec.arguments, dict) and exec.arguments.get("text") == "hi":
            return Allow(arguments={"text": "changed"})
        return decision

    ctx.on("tools/pre-execute", change_hi)
    async with ScriptedModelServer() as server:
        built = Rig(server, ctx, tmp_path)
        try:
            yield built
        finally:
            await built.aclose()
            await ctx.dispose()


def data_of(log: SessionLog, kind: str) -> list[dict[str, Any]]:
    return [json.loads(json.dumps(e.data)) for e in log.events if e.type == kind]


async def test_the_result_records_the_changed_arguments_and_the_call_the_models(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(("c1", "echo", '{"text": "hi"}')), text_reply("done"))

    await rig.agent().run_turn("go", signal=AbortController().signal)

    log = rig.logs[0]
    (call,) = data_of(log, "tool/call")
    (result,) = data_of(log, "tool/result")
    assert call["arguments"] == '{"text": "hi"}'
    assert result["changed_arguments"] == {"text": "changed"}
    assert result["message"]["content"][0]["content"] == [{"type": "text", "text": "CHANGED"}]


async def test_a_call_nobody_changed_records_no_changed_arguments(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(("c1", "echo", '{"text": "yo"}')), text_reply("done"))

    await rig.agent().run_turn("go", signal=AbortController().signal)

    (result,) = data_of(rig.logs[0], "tool/result")
    assert "changed_arguments" not in result


async def test_a_log_with_changed_arguments_checks_clean_and_resumes(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(("c1", "echo", '{"text": "hi"}')), text_reply("done"))
    first = rig.agent()
    await first.run_turn("go", signal=AbortController().signal)
    session_id = rig.logs[0].id
    rig.logs[0].close()
    rig.logs.clear()
    rig.server.push(text_reply("again"))

    outcome = await rig.agent(rig.store.open(session_id)).run_turn(
        "more", signal=AbortController().signal
    )

    assert outcome.text == "again"
    assert rig.store.check(session_id) == []
    messages = rig.server.requests[-1].body["messages"]
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert messages[2]["tool_calls"][0]["function"]["arguments"] == '{"text": "hi"}'
    assert messages[3]["content"] == "CHANGED"
