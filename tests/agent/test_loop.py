"""The agent loop against a scripted OpenAI-compatible server over real HTTP and SSE.

Contract (capabilities spec §7.3-§7.6, tool-runtime spec §5.2-§5.3): a turn is `turn/start`,
then steps — `step/start`, the entered user messages, the streamed `assistant/chunk`s and the
`assistant/message`, the step's `tool/call`/`tool/result` pairs, `step/end` — and always a
`turn/end` whose reason says how it ended: `completed` (a step without tool calls, or one whose
result concluded the turn), `max-tokens` (a truncated response; its tool calls never run),
`max-steps`, `error` (the model failure's message and code, e.g. `AUTH`,
`LLM_STREAM_IDLE_TIMEOUT`) or `aborted` (the turn signal). Tool results go back to the model in
the next request; contexts a tool defers become `user/message`s at the start of the next step,
after every result. An abort closes the model stream (the server sees the disconnect) and keeps
what had streamed as an `interrupted` assistant message; an abort mid-tool records the started
call's `ABORTED` result and a synthetic `ABORTED_BEFORE_DISPATCH` pair for each unstarted call.
Every log ends balanced: `store.check(id) == []`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest
from pydantic import BaseModel

from tether import AbortController, ToolOutput, define_tool
from tether.agent.events import AgentEvent, TextDelta
from tether.agent.llm import LlmConfig, RetryPolicy
from tether.agent.llm.plugin import build_llm
from tether.agent.llm.service import Llm
from tether.agent.loop import AgentLoop, AgentSettings
from tether.agent.session import SessionEvent, SessionLog, SessionStore
from tether.kernel import Context
from tether.kernel.warm_up import WARM_UP_EVENT
from tether.plugins.jobs import plugin as jobs_plugin
from tether.plugins.shell import bash as bash_plugin
from tether.plugins.shell import plugin as shell_plugin
from tether.testing.scripted_model import (
    ScriptedModelServer,
    finish,
    hang,
    http_error,
    reply,
    text,
    text_reply,
    tool_call,
    tool_calls_reply,
)
from tether.tools import ToolRuntime
from tether.tools.execution import ToolRunContext
from tether.tools.results import user_message

from ..patience import PATIENCE_S

ABD = {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"}
ABORTED = {"name": "AbortError", "code": "ABORTED"}
CHUNKS = "assistant/chunk*"


class EchoArgs(BaseModel):
    text: str


class NoteArgs(BaseModel):
    note: str


class Gated:
    """A tool body that waits until the test opens it or its signal aborts."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.opened = asyncio.Event()

    async def __call__(self, args: NoteArgs, exec: ToolRunContext) -> str:
        remove = exec.signal.add_listener(lambda _reason: self.opened.set())
        self.entered.set()
        try:
            await self.opened.wait()
        finally:
            remove()
        exec.defer_context(user_message(args.note))
        return "released"


async def echo(args: EchoArgs, exec: ToolRunContext) -> str:
    return args.text.upper()


async def note(args: NoteArgs, exec: ToolRunContext) -> str:
    exec.defer_context(user_message(args.note))
    return "noted"


async def conclude(args: EchoArgs, exec: ToolRunContext) -> str:
    exec.conclude_turn()
    return "concluded"


def register_tools(ctx: Context, gated: Gated) -> None:

    def safe(args: object) -> bool:
        return True

    ctx.tools.register(
        define_tool(
            name="echo",
            description="echo",
            parameters=EchoArgs,
            output=ToolOutput(schema=str),
            execute=echo,
            is_concurrency_safe=safe,
        )
    )
    ctx.tools.register(
        define_tool(
            name="note",
            description="defers a note",
            parameters=NoteArgs,
            output=ToolOutput(schema=str),
            execute=note,
            is_concurrency_safe=safe,
        )
    )
    ctx.tools.register(
        define_tool(
            name="conclude",
            description="ends the turn",
            parameters=EchoArgs,
            output=ToolOutput(schema=str),
            execute=conclude,
        )
    )
    ctx.tools.register(
        define_tool(
            name="gated",
            description="waits",
            parameters=NoteArgs,
            output=ToolOutput(schema=str),
            execute=gated,
            is_concurrency_safe=safe,
        )
    )


class Rig:
    """A scripted server, a context with tools, a session store and the agent over them."""

    def __init__(
        self, server: ScriptedModelServer, ctx: Context, store: SessionStore, tmp: Path
    ) -> None:
        self.server = server
        self.ctx = ctx
        self.store = store
        self.tmp = tmp
        self.gated = Gated()
        self.events: list[AgentEvent] = []
        self.first_text = asyncio.Event()
        self.llms: list[Llm] = []
        self.logs: list[SessionLog] = []

    def agent(
        self, idle_ms: float = 300_000, *, on_ctx: bool = False, **settings: Any
    ) -> AgentLoop:
        llm = build_llm(
            LlmConfig(
                provider="openai",
                base_url=self.server.base_url,
                model="scripted",
                retry=RetryPolicy(mode="off"),
                stream_idle_timeout_ms=idle_ms,
            ),
            environ={},
        )
        self.llms.append(llm)
        log = self.store.create(cwd=self.tmp)
        self.logs.append(log)
        return AgentLoop(
            tools=self.ctx.tools.runtime,
            llm=llm,
            session=log,
            settings=AgentSettings(cwd=self.tmp, **settings),
            on_event=self.on_event,
            ctx=self.ctx if on_ctx else None,
        )

    def on_event(self, event: AgentEvent) -> None:
        self.events.append(event)
        if isinstance(event, TextDelta):
            self.first_text.set()

    async def aclose(self) -> None:
        for log in self.logs:
            log.close()
        for llm in self.llms:
            await llm.aclose()


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    async with ScriptedModelServer() as server:
        built = Rig(server, ctx, SessionStore(tmp_path / "sessions"), tmp_path)
        register_tools(ctx, built.gated)
        try:
            yield built
        finally:
            await built.aclose()
            await ctx.dispose()


def types(events: Sequence[SessionEvent]) -> list[str]:
    """Event types, each run of `assistant/chunk` collapsed to one `assistant/chunk*`."""
    out: list[str] = []
    for event in events:
        name = CHUNKS if event.type == "assistant/chunk" else event.type
        if not (name == CHUNKS and out and out[-1] == CHUNKS):
            out.append(name)
    return out


def of_type(log: SessionLog, kind: str) -> list[SessionEvent]:
    return [e for e in log.events if e.type == kind]


def results(log: SessionLog) -> list[tuple[str, Any]]:
    """`(call_id, error or None)` per `tool/result`, in log order."""
    out: list[tuple[str, Any]] = []
    for event in of_type(log, "tool/result"):
        data: Any = event.data
        error = data.get("error")
        out.append((data["message"]["content"][0]["call_id"], error and dict(error)))
    return out


def live() -> AbortController:
    return AbortController()


# -- completed turns ------------------------------------------------------------------------------


async def test_a_turn_with_tool_calls_then_text_completes_with_a_balanced_log(rig: Rig) -> None:
    rig.server.push(
        tool_calls_reply(("c1", "echo", '{"text": "hi"}'), ("c2", "echo", '{"text": "yo"}')),
        text_reply("all done"),
    )
    agent = rig.agent()

    outcome = await agent.run_turn("do it", signal=live().signal)

    assert (outcome.turn, dict(outcome.reason), outcome.text) == (
        1,
        {"kind": "completed"},
        "all done",
    )
    log = rig.logs[0]
    assert types(log.events) == [
        "turn/start",
        "step/start",
        "user/message",
        "request/header",
        "request/context",
        CHUNKS,
        "assistant/message",
        "tool/call",
        "tool/call",
        "tool/result",
        "tool/result",
        "step/end",
        "step/start",
        CHUNKS,
        "assistant/message",
        "step/end",
        "turn/end",
    ]
    assert results(log) == [("c1", None), ("c2", None)]
    assert rig.store.check(log.id) == []


async def test_tool_results_are_sent_back_to_the_model_in_the_next_request(rig: Rig) -> None:
    rig.server.push(
        tool_calls_reply(("c1", "echo", '{"text": "hi"}'), ("c2", "nope", "{}")),
        text_reply("ok"),
    )

    await rig.agent().run_turn("do it", signal=live().signal)

    messages = rig.server.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    assert messages[1] == {"role": "user", "content": "do it"}
    assert [c["id"] for c in messages[2]["tool_calls"]] == ["c1", "c2"]
    assert messages[3:] == [
        {"role": "tool", "tool_call_id": "c1", "content": "HI"},
        {"role": "tool", "tool_call_id": "c2", "content": 'Error: unknown tool "nope"'},
    ]


async def test_the_loop_announces_the_warm_up_once_at_its_first_response(rig: Rig) -> None:
    rig.server.push(
        tool_calls_reply(("c1", "echo", '{"text": "hi"}')), text_reply("ok"), text_reply("again")
    )
    requests_seen: list[int] = []
    rig.ctx.on(WARM_UP_EVENT, lambda: requests_seen.append(len(rig.server.requests)))
    agent = rig.agent(on_ctx=True)

    await agent.run_turn("do it", signal=live().signal)
    await agent.run_turn("more", signal=live().signal)

    assert requests_seen == [1]


async def test_the_request_offers_the_registered_tools(rig: Rig) -> None:
    rig.server.push(text_reply("hello"))

    await rig.agent().run_turn("hi", signal=live().signal)

    tools = rig.server.requests[0].body["tools"]
    assert [t["function"]["name"] for t in tools] == ["echo", "note", "conclude", "gated"]


async def test_a_truncated_response_ends_the_turn_max_tokens_without_running_its_tools(
    rig: Rig,
) -> None:
    rig.server.push(
        reply(
            text("Let me"),
            tool_call(0, id="c1", name="echo", arguments='{"text": "x"}'),
            finish("length"),
        )
    )
    agent = rig.agent()

    outcome = await agent.run_turn("do it", signal=live().signal)

    assert dict(outcome.reason) == {"kind": "max-tokens"}
    assert outcome.text == "Let me"
    log = rig.logs[0]
    assert of_type(log, "tool/call") == []
    assert len(rig.server.requests) == 1
    assert types(log.events)[-3:] == ["assistant/message", "step/end", "turn/end"]
    assert rig.store.check(log.id) == []


async def test_max_steps_bounds_the_model_requests_of_a_turn(rig: Rig) -> None:
    rig.server.push(
        tool_calls_reply(("c1", "echo", '{"text": "a"}')),
        tool_calls_reply(("c2", "echo", '{"text": "b"}')),
        text_reply("never asked"),
    )

    outcome = await rig.agent(max_steps=2).run_turn("loop", signal=live().signal)

    assert dict(outcome.reason) == {"kind": "max-steps", "steps": 2}
    assert len(rig.server.requests) == 2
    assert results(rig.logs[0]) == [("c1", None), ("c2", None)]
    assert rig.store.check(rig.logs[0].id) == []


async def test_a_concluding_tool_result_ends_the_turn_after_its_batch(rig: Rig) -> None:
    rig.server.push(
        tool_calls_reply(("c1", "echo", '{"text": "a"}'), ("c2", "conclude", '{"text": "b"}')),
        text_reply("never asked"),
    )

    outcome = await rig.agent().run_turn("finish up", signal=live().signal)

    assert dict(outcome.reason) == {"kind": "completed"}
    assert len(rig.server.requests) == 1
    assert results(rig.logs[0]) == [("c1", None), ("c2", None)]
    assert types(rig.logs[0].events)[-6:] == [
        "tool/call",
        "tool/result",
        "tool/call",
        "tool/result",
        "step/end",
        "turn/end",
    ]


async def test_deferred_contexts_open_the_next_step_after_all_results(rig: Rig) -> None:
    rig.server.push(
        tool_calls_reply(
            ("n1", "note", '{"note": "remember the port"}'), ("c2", "echo", '{"text": "x"}')
        ),
        text_reply("done"),
    )

    await rig.agent().run_turn("go", signal=live().signal)

    log = rig.logs[0]
    assert types(log.events) == [
        "turn/start",
        "step/start",
        "user/message",
        "request/header",
        "request/context",
        CHUNKS,
        "assistant/message",
        "tool/call",
        "tool/call",
        "tool/result",
        "tool/result",
        "step/end",
        "step/start",
        "user/message",
        CHUNKS,
        "assistant/message",
        "step/end",
        "turn/end",
    ]
    context: Any = of_type(log, "user/message")[1].data
    assert context["content"] == [{"type": "text", "text": "remember the port"}]
    assert rig.server.requests[1].body["messages"][-3:] == [
        {"role": "tool", "tool_call_id": "n1", "content": "noted"},
        {"role": "tool", "tool_call_id": "c2", "content": "X"},
        {"role": "user", "content": "remember the port"},
    ]


# -- model failures -------------------------------------------------------------------------------


async def test_an_http_error_ends_the_turn_with_the_adapter_code(rig: Rig) -> None:
    rig.server.push(http_error(401, "bad key"))

    outcome = await rig.agent().run_turn("hi", signal=live().signal)

    url = rig.server.base_url
    assert dict(outcome.reason) == {
        "kind": "error",
        "error": {
            "message": f"OpenAI-compatible API at {url} error (HTTP 401): bad key; the API key"
            f" comes from OPENAI_API_KEY: set it to a valid key for {url}",
            "code": "AUTH",
            "status": 401,
        },
    }
    log = rig.logs[0]
    assert types(log.events) == [
        "turn/start",
        "step/start",
        "user/message",
        "request/header",
        "request/context",
        CHUNKS,
        "step/end",
        "turn/end",
    ]
    assert of_type(log, "turn/end")[0].data["reason"] == outcome.reason
    assert rig.store.check(log.id) == []


async def test_an_idle_stream_ends_the_turn_as_llm_stream_idle_timeout(rig: Rig) -> None:
    rig.server.push(reply(text("Hel"), hang()))

    outcome = await rig.agent(idle_ms=200).run_turn("hi", signal=live().signal)

    error: Any = outcome.reason["error"]
    assert (outcome.kind, error["code"]) == ("error", "LLM_STREAM_IDLE_TIMEOUT")
    assert error["message"] == (
        f"OpenAI-compatible API at {rig.server.base_url} stream idle timeout after 200ms (no data"
        " from the server; raise stream_idle_timeout_ms in the llm plugin config if the model is"
        " just slow)"
    )
    request = await rig.server.requests[0].ended()
    assert request.client_disconnected
    assert of_type(rig.logs[0], "assistant/message") == []
    assert rig.store.check(rig.logs[0].id) == []


# -- aborts ---------------------------------------------------------------------------------------


async def test_an_abort_mid_stream_closes_the_stream_and_keeps_the_interrupted_text(
    rig: Rig,
) -> None:
    rig.server.push(reply(text("Hello, wor"), hang()))
    controller = live()
    turn = asyncio.create_task(rig.agent().run_turn("hi", signal=controller.signal))
    await rig.first_text.wait()

    controller.abort()
    outcome = await turn

    assert dict(outcome.reason) == {"kind": "aborted", "reason": {"kind": "user"}}
    request = await rig.server.requests[0].ended()
    assert request.client_disconnected
    log = rig.logs[0]
    (message,) = of_type(log, "assistant/message")
    data: Any = message.data
    assert data["interrupted"] is True
    assert data["message"]["content"] == [{"type": "text", "text": "Hello, wor"}]
    assert types(log.events)[-4:] == [CHUNKS, "assistant/message", "step/end", "turn/end"]
    assert rig.store.check(log.id) == []


async def test_an_abort_mid_tool_records_aborted_and_synthesizes_the_unstarted_calls(
    rig: Rig,
) -> None:
    rig.server.push(
        tool_calls_reply(
            ("g1", "gated", '{"note": "g1 note"}'),
            ("c2", "conclude", '{"text": "x"}'),
            ("c3", "echo", '{"text": "y"}'),
        )
    )
    controller = live()
    turn = asyncio.create_task(rig.agent().run_turn("go", signal=controller.signal))
    await rig.gated.entered.wait()

    controller.abort()
    outcome = await turn

    assert dict(outcome.reason) == {"kind": "aborted", "reason": {"kind": "user"}}
    log = rig.logs[0]
    assert [(e.data["call_id"]) for e in of_type(log, "tool/call")] == ["g1", "c2", "c3"]
    assert results(log) == [("g1", ABORTED), ("c2", ABD), ("c3", ABD)]
    assert types(log.events)[-10:] == [
        "assistant/message",
        "tool/call",
        "tool/result",
        "tool/call",
        "tool/result",
        "tool/call",
        "tool/result",
        "step/end",
        "user/message",  # g1's context, recorded for the next turn
        "turn/end",
    ]
    assert len(rig.server.requests) == 1
    assert rig.store.check(log.id) == []


async def test_contexts_of_an_aborted_turn_are_recorded_in_it_for_the_next_turn(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(("g1", "gated", '{"note": "parked note"}')), text_reply("ok"))
    controller = live()
    agent = rig.agent()
    turn = asyncio.create_task(agent.run_turn("first", signal=controller.signal))
    await rig.gated.entered.wait()
    controller.abort()
    await turn

    log = rig.logs[0]
    assert agent.parked_contexts == ()
    kinds = [e.type for e in log.events]
    assert kinds[-2:] == ["user/message", "turn/end"]

    outcome = await agent.run_turn("second", signal=live().signal)

    assert outcome.completed
    messages: list[Any] = [m.data for m in of_type(log, "user/message")]
    texts = [m["content"][0]["text"] for m in messages]
    assert texts == ["first", "parked note", "second"]
    assert rig.store.check(log.id) == []


async def test_cancelling_the_turn_task_aborts_the_tool_records_it_and_closes_the_turn(
    rig: Rig,
) -> None:
    rig.server.push(
        tool_calls_reply(("g1", "gated", '{"note": "n"}'), ("c2", "echo", '{"text": "x"}'))
    )
    agent = rig.agent()
    turn = asyncio.create_task(agent.run_turn("go", signal=live().signal))
    await rig.gated.entered.wait()

    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn

    log = rig.logs[0]
    assert results(log) == [("g1", ABORTED), ("c2", ABORTED)]
    assert of_type(log, "turn/end")[0].data["reason"] == {
        "kind": "aborted",
        "reason": {"kind": "interrupted"},
    }
    assert rig.store.check(log.id) == []


async def test_an_abort_mid_bash_kills_the_command_and_records_aborted(
    rig: Rig, tmp_path: Path
) -> None:
    await rig.ctx.plugin(shell_plugin, {"grace_ms": 200, "cwd": str(tmp_path)})
    await rig.ctx.plugin(jobs_plugin)
    await rig.ctx.plugin(bash_plugin)
    rig.server.push(
        tool_calls_reply(
            ("b1", "bash", '{"command": "sleep 30", "description": "wait"}'),
            ("b2", "bash", '{"command": "echo never", "description": "never"}'),
        )
    )
    controller = live()
    turn = asyncio.create_task(rig.agent().run_turn("go", signal=controller.signal))
    sleeper = await _child_running(["sleep", "30"])

    controller.abort()
    outcome = await turn

    assert outcome.kind == "aborted"
    assert not _alive(sleeper)
    log = rig.logs[0]
    assert results(log) == [("b1", ABORTED), ("b2", ABD)]
    assert rig.store.check(log.id) == []


async def _child_running(argv: list[str], *, timeout_s: float = PATIENCE_S) -> psutil.Process:
    """Poll our descendants until one runs `argv` (bounded)."""
    me = psutil.Process()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while loop.time() < deadline:
        for child in me.children(recursive=True):
            try:
                if child.cmdline() == argv:
                    return child
            except psutil.Error:
                continue
        await asyncio.sleep(0.01)
    raise AssertionError(f"no child process ran {argv}")


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# -- request headers and retries in the log -------------------------------------------------------


async def test_the_request_header_is_logged_once_while_it_stays_the_same(rig: Rig) -> None:
    rig.server.push(text_reply("one"), text_reply("two"))
    agent = rig.agent()

    await agent.run_turn("first", signal=live().signal)
    await agent.run_turn("second", signal=live().signal)

    log = rig.logs[0]
    headers = [e.data for e in log.events if e.type == "request/header"]
    contexts = [dict(e.data) for e in log.events if e.type == "request/context"]
    assert [h["reason"] for h in headers] == ["initial"]
    header: Any = headers[0]["header"]
    assert header["config"] == {"provider": "openai", "model": "scripted"}
    assert [t["name"] for t in header["tools"]] == rig.ctx.tools.names()
    assert contexts == [{"provider": "openai", "model": "scripted"}]


async def test_a_new_agent_over_an_existing_log_records_a_resume_header(rig: Rig) -> None:
    rig.server.push(text_reply("one"), text_reply("two"))
    first = rig.agent()
    await first.run_turn("first", signal=live().signal)
    log = first.session
    second = AgentLoop(
        tools=rig.ctx.tools.runtime,
        llm=first.llm,
        session=log,
        settings=AgentSettings(cwd=rig.tmp),
    )

    await second.run_turn("second", signal=live().signal)

    reasons = [e.data["reason"] for e in log.events if e.type == "request/header"]
    assert reasons == ["initial", "resume"]


async def test_a_retried_model_request_is_logged_with_its_failure(rig: Rig) -> None:
    rig.server.push(http_error(500, "try again"), text_reply("ok"))
    llm = build_llm(
        LlmConfig(
            provider="openai",
            base_url=rig.server.base_url,
            model="scripted",
            retry=RetryPolicy(initial_delay_ms=1, max_delay_ms=1, jitter_ratio=0),
        ),
        environ={},
    )
    rig.llms.append(llm)
    log = rig.store.create(cwd=rig.tmp)
    rig.logs.append(log)
    agent = AgentLoop(
        tools=rig.ctx.tools.runtime, llm=llm, session=log, settings=AgentSettings(cwd=rig.tmp)
    )

    outcome = await agent.run_turn("hi", signal=live().signal)

    assert outcome.completed
    retries: list[Any] = [e.data for e in log.events if e.type == "llm/retry"]
    assert [(r["retry"], r["failure"]["code"]) for r in retries] == [(1, "SERVER")]
    assert [e.data["retry"] for e in log.events if e.type == "llm/retry-started"] == [1]
