"""Exactly one result per call in a real agent turn, whatever sits between the caller and the body
(issue 23, items 1–3, through `tether.Agent` against the scripted model over real HTTP).

Contract: a `tools/execute` plugin that bounds calls with its own `asyncio.timeout` gets its
`TimeoutError` inside its own scope and the turn goes on (no `CancelledError` escapes the turn, no
`tool/call` is left without its `tool/result`); a program that bounds the whole run with its own
`asyncio.timeout` gets its `TimeoutError` while a plugin's wrapper fails on the way out, and the log
is balanced; a call aborted before its body's first step never starts it and is recorded
`ABORTED_BEFORE_DISPATCH` — `ABORTED` only when the body ran. `sessions check` passes after each.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tether import (
    AbortController,
    Agent,
    LlmConfig,
    ToolCallFinished,
    ToolCallStarted,
    ToolDispatchExecution,
    ToolExecutionResult,
    ToolRunContext,
    tool,
)
from tether.agent.llm import RetryPolicy
from tether.agent.session import SessionStore
from tether.kernel import Context
from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

Next = Callable[[], Awaitable[ToolExecutionResult]]


class Waits:
    """A cooperative tool: records that it started, waits for its signal, winds down a little."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.entered = asyncio.Event()

    async def waits(self, exec: ToolRunContext) -> str:
        """Waits until its call is aborted."""
        self.started.append(exec.call_id)
        self.entered.set()
        await exec.signal.wait()
        for _ in range(3):
            await asyncio.sleep(0)
        return "stopped"


class Rig:
    def __init__(self, server: ScriptedModelServer, tmp: Path) -> None:
        self.server = server
        self.home = tmp / "home"
        self.work = tmp / "work"
        self.work.mkdir()
        self.tool = Waits()

    def agent(self, plugins: list[object]) -> Agent:
        model = LlmConfig(
            provider="openai",
            base_url=self.server.base_url,
            model="scripted",
            retry=RetryPolicy(mode="off"),
        )
        return Agent(
            preset="coding",
            model=model,
            cwd=self.work,
            home=self.home,
            builtins=False,
            tools=[tool(self.tool.waits)],
            plugins=plugins,
        )

    @property
    def store(self) -> SessionStore:
        return SessionStore(self.home / "sessions")


@pytest.fixture
async def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Rig]:
    monkeypatch.setenv("HOME", str(tmp_path))
    async with ScriptedModelServer() as server:
        yield Rig(server, tmp_path)


def plugin(name: str, wrapper: Callable[[ToolDispatchExecution, Next], Awaitable[Any]]) -> Any:
    """A plugin object with one `tools/execute` wrapper."""

    class Wrapper:
        def apply(self, ctx: Context, config: object = None) -> None:
            ctx.on("tools/execute", wrapper)

    Wrapper.name = name  # type: ignore[attr-defined]
    return Wrapper()


async def test_a_plugins_own_timeout_around_next_ends_in_its_result_and_the_turn_goes_on(
    rig: Rig,
) -> None:
    scopes: list[asyncio.Timeout] = []

    async def bounded(exec: ToolDispatchExecution, next: Next) -> Any:
        async with asyncio.timeout(None) as scope:
            scopes.append(scope)
            return await next()  # its TimeoutError becomes the call's failure

    rig.server.push(tool_calls_reply(("call_1", "waits", "{}")), text_reply("Done."))
    async with rig.agent([plugin("bounded", bounded)]) as agent:
        running = asyncio.create_task(agent.run("go", signal=AbortController().signal))
        await rig.tool.entered.wait()
        scopes[0].reschedule(asyncio.get_running_loop().time())  # the plugin's timeout expires
        result = await running

    assert (result.text, result.outcome.kind) == ("Done.", "completed")
    ((record,),) = [result.tool_calls]
    assert (record.call_id, record.is_error, record.content) == (
        "call_1",
        True,
        "Error: TimeoutError",
    )
    assert rig.tool.started == ["call_1"]
    assert rig.store.check(result.session_id) == []


async def test_a_program_timing_out_a_run_gets_its_timeout_while_a_wrapper_fails_on_the_way_out(
    rig: Rig,
) -> None:
    async def careless(exec: ToolDispatchExecution, next: Next) -> Any:
        try:
            await next()
        finally:
            raise ValueError("wrapper broke")

    rig.server.push(tool_calls_reply(("call_1", "waits", "{}")))
    outcome: list[object] = []
    scopes: list[asyncio.Timeout] = []

    async def program(agent: Agent) -> None:
        try:
            async with asyncio.timeout(None) as scope:
                scopes.append(scope)
                await agent.run("go", signal=AbortController().signal)
        except TimeoutError:
            task = asyncio.current_task()
            assert task is not None
            outcome.extend(["TimeoutError", task.cancelling()])

    async with rig.agent([plugin("careless", careless)]) as agent:
        running = asyncio.create_task(program(agent))
        await rig.tool.entered.wait()
        scopes[0].reschedule(asyncio.get_running_loop().time())  # the program's timeout expires
        await running
        session_id = agent.session_id

    assert outcome == ["TimeoutError", 0]
    assert rig.tool.started == ["call_1"]
    assert rig.store.check(session_id) == []


async def test_a_call_aborted_before_its_bodys_first_step_is_aborted_before_dispatch_iff_unstarted(
    rig: Rig,
) -> None:
    turn = AbortController()

    async def abort_then_delegate(exec: ToolDispatchExecution, next: Next) -> Any:
        # The abort runs on the next loop iteration: before a plain body task's first step
        # (3.11), after an eager one's (3.12+). Either way the record must say which.
        asyncio.get_running_loop().call_soon(turn.abort)
        return await next()

    rig.server.push(tool_calls_reply(("call_1", "waits", "{}")))
    async with rig.agent([plugin("abort-then-delegate", abort_then_delegate)]) as agent:
        result = await agent.run("go", signal=turn.signal)

    ((record,),) = [result.tool_calls]
    # 3.11 starts a body on the next loop iteration, after the abort: it must never run.
    assert rig.tool.started == ([] if sys.version_info < (3, 12) else ["call_1"])
    expected = "ABORTED" if rig.tool.started else "ABORTED_BEFORE_DISPATCH"
    assert (record.call_id, record.code) == ("call_1", expected)
    assert result.outcome.kind == "aborted"
    assert rig.store.check(result.session_id) == []


async def test_a_turn_that_cancels_itself_before_a_call_is_created_gets_it_aborted_before_dispatch(
    rig: Rig,
) -> None:
    """The turn task requests its own cancellation from `on_event` (`ToolCallStarted`, before the
    call is created); it is delivered while a `tools/pre-execute` listener awaits: the call is
    `ABORTED_BEFORE_DISPATCH` and the cancellation reaches the awaiter (it was returned as
    `Error: CancelledError` and the turn went on)."""
    seen: list[tuple[str, str | None]] = []

    class Waiting:
        name = "waiting"

        def apply(self, ctx: Context, config: object = None) -> None:
            async def pre_execute(exec: Any, next: Any) -> Any:
                await asyncio.sleep(0)
                return await next()

            ctx.on("tools/pre-execute", pre_execute)

    def on_event(event: object) -> None:
        if isinstance(event, ToolCallStarted):
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
        if isinstance(event, ToolCallFinished):
            seen.append((event.call_id, event.code))

    rig.server.push(tool_calls_reply(("call_1", "waits", "{}")))
    async with rig.agent([Waiting()]) as agent:
        running = asyncio.create_task(
            agent.run("go", signal=AbortController().signal, on_event=on_event)
        )
        with pytest.raises(asyncio.CancelledError):
            await running
        session_id = agent.session_id

    assert seen == [("call_1", "ABORTED_BEFORE_DISPATCH")]
    assert rig.tool.started == []
    assert rig.store.check(session_id) == []
