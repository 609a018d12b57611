"""A subagent's cancellation is as strict as a tool call's.

Contract (issue 16 §4): the child's turn signal is the `task` call's signal. Aborting the
caller's turn aborts the child's turn, and the `task` call returns only once the child is
disposed — every child tool call settled (a running command's process group is gone when the
result is recorded, not later), the child's log balanced — with `ABORTED` and a deferred
context naming the child's session and carrying its partial output. A call aborted before the
child made its first model request is `ABORTED_BEFORE_DISPATCH`. A background child
(`run_in_background: true`) is a job under its own controller: aborting the caller's turn does
not touch it; `job_kill` stops it, and the job settles `killed` only once the child is disposed.
Disposing the plugin stops every background child the same way.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest

from tether import AbortController, ToolExecutionInput
from tether.agent.loop import AgentLoop, AgentSettings
from tether.testing.scripted_model import hang, reply, text, text_reply, tool_calls_reply

from ...patience import PATIENCE_S
from ._support import Rig, alive, bash_call, child_running, group_members, results, task_call

pytestmark = pytest.mark.slow

ABORTED = {"name": "AbortError", "code": "ABORTED"}
ABD = {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"}


def context_texts(parent: Any) -> list[str]:
    """The texts of the contexts the subagents plugin gave the parent, as its log has them."""
    return [
        "".join(str(b.get("text")) for b in e.data["content"])
        for e in parent.session.events
        if e.type == "user/message" and e.data.get("source", {}).get("plugin") == "subagents"
    ]


async def test_aborting_the_caller_mid_child_bash_kills_it_before_the_call_ends(rig: Rig) -> None:
    rig.router.script("parent task", tool_calls_reply(task_call("t1", "wait a while")))
    rig.router.script(
        "wait a while", tool_calls_reply(bash_call("b1", "sleep 30"), content="Waiting now.")
    )
    parent = rig.parent()
    controller = AbortController()
    turn = asyncio.create_task(parent.run_turn("parent task", signal=controller.signal))
    sleeper = await child_running(["sleep", "30"])
    group = os.getpgid(sleeper.pid)

    controller.abort()
    outcome = await turn

    assert not alive(sleeper)  # gone when the call's result was recorded, not eventually
    assert group_members(group) == []
    assert outcome.kind == "aborted"
    assert results(parent.session.events) == [("t1", ABORTED)]
    (child_id,) = rig.children_of(parent.session.id)
    child = rig.store.load(child_id)
    assert results(child.events) == [("b1", ABORTED)]
    assert rig.store.check(child_id) == []
    assert rig.store.check(parent.session.id) == []


async def test_an_aborted_call_defers_the_child_session_and_partial_output(rig: Rig) -> None:
    rig.router.script("parent task", tool_calls_reply(task_call("t1", "wait a while")))
    rig.router.script(
        "wait a while", tool_calls_reply(bash_call("b1", "sleep 30"), content="Waiting now.")
    )
    parent = rig.parent()
    controller = AbortController()
    turn = asyncio.create_task(parent.run_turn("parent task", signal=controller.signal))
    await child_running(["sleep", "30"])

    controller.abort()
    await turn

    (child_id,) = rig.children_of(parent.session.id)
    assert context_texts(parent) == [
        f"The general-purpose agent (session {child_id}) was aborted before it finished; its"
        " tool calls were stopped and recorded. Its partial output:\nWaiting now."
    ]


async def abort_while_the_child_streams(rig: Rig) -> tuple[Any, str]:
    """A parent whose `task` call was aborted while its child streamed "Half a thought"; the
    parent and the child's session id."""
    rig.router.script("parent task", tool_calls_reply(task_call("t1", "think")))
    rig.router.script("think", reply(text("Half a thought"), hang()))
    parent = rig.parent()
    controller = AbortController()
    turn = asyncio.create_task(parent.run_turn("parent task", signal=controller.signal))
    child_id = await spawned(parent)
    await eventually(lambda: streamed(rig, child_id), what="the child's first chunk")
    controller.abort()
    await turn
    return parent, child_id


async def test_an_abort_while_the_child_streams_keeps_its_interrupted_text(rig: Rig) -> None:
    parent, child_id = await abort_while_the_child_streams(rig)

    assert results(parent.session.events) == [("t1", ABORTED)]
    assert context_texts(parent)[0].endswith("Its partial output:\nHalf a thought")
    child = rig.store.load(child_id)
    (message,) = [e.data for e in child.events if e.type == "assistant/message"]
    assert message["interrupted"] is True
    assert rig.store.check(child_id) == []


async def test_the_partial_output_of_an_aborted_child_reaches_the_model_after_a_resume(
    rig: Rig,
) -> None:
    parent, child_id = await abort_while_the_child_streams(rig)
    parent.session.close()
    rig.router.script("parent task", text_reply("resumed"))

    resumed = AgentLoop(
        tools=rig.ctx.tools.runtime,
        llm=rig.llm(),
        session=rig.store.open(parent.session.id),  # a new process would do this
        settings=AgentSettings(cwd=rig.work),
        ctx=rig.ctx,
    )
    outcome = await resumed.run_turn("go on", signal=AbortController().signal)
    resumed.session.close()

    assert outcome.completed
    request = rig.router.seen["parent task"][-1]
    said = [str(m["content"]) for m in request.messages if m["role"] == "user"]
    assert any(f"(session {child_id}) was aborted" in m and "Half a thought" in m for m in said)
    assert said[-1] == "go on"


async def test_a_call_aborted_before_the_child_asked_its_model_never_dispatched(
    rig: Rig,
) -> None:
    controller = AbortController()

    def abort_at_start(parent: object, child: object, agent_type: str, signal: object) -> None:
        controller.abort()

    rig.ctx.on("subagent/start", abort_at_start)
    rig.router.script("parent task", tool_calls_reply(task_call("t1", "never asked")))
    parent = rig.parent()

    outcome = await parent.run_turn("parent task", signal=controller.signal)

    assert outcome.kind == "aborted"
    assert results(parent.session.events) == [("t1", ABD)]
    assert "never asked" not in rig.router.seen
    assert context_texts(parent) == []
    (child_id,) = rig.children_of(parent.session.id)
    child = rig.store.load(child_id)
    assert [e.type for e in child.events] == ["turn/start", "turn/end"]
    assert rig.store.check(child_id) == []


async def test_a_background_child_outlives_the_callers_aborted_turn(rig: Rig) -> None:
    rig.router.script(
        "parent task",
        tool_calls_reply(task_call("t1", "wait in the back", background=True)),
        reply(hang()),
    )
    rig.router.script("wait in the back", tool_calls_reply(bash_call("b1", "sleep 30")))
    parent = rig.parent()
    controller = AbortController()
    turn = asyncio.create_task(parent.run_turn("parent task", signal=controller.signal))
    sleeper = await child_running(["sleep", "30"])
    await rig.server.request(2)  # the caller's second request: the call has returned

    controller.abort()
    outcome = await turn

    assert outcome.kind == "aborted"
    assert results(parent.session.events) == [("t1", None)]
    assert alive(sleeper)
    assert rig.ctx.jobs.get("task-1", parent).status.value == "running"
    rig.ctx.jobs.kill("task-1", parent)
    await rig.ctx.jobs.wait(
        "task-1", signal=AbortController().signal, timeout_ms=60_000, caller=parent
    )


async def test_job_kill_stops_a_background_child_and_it_settles_once_disposed(rig: Rig) -> None:
    rig.router.script(
        "parent task",
        tool_calls_reply(task_call("t1", "wait in the back", background=True)),
        text_reply("started"),
    )
    rig.router.script(
        "wait in the back", tool_calls_reply(bash_call("b1", "sleep 30"), content="Sleeping.")
    )
    parent = rig.parent()
    outcome = await parent.run_turn("parent task", signal=AbortController().signal)
    assert outcome.completed
    sleeper = await child_running(["sleep", "30"])

    group = os.getpgid(sleeper.pid)

    killed = await call(rig, parent, "job_kill", {"job_id": "task-1"})
    read = await call(rig, parent, "job_output", {"job_id": "task-1", "wait": True})

    assert not killed.is_error
    assert not alive(sleeper)
    assert group_members(group) == []
    value: Any = read.value
    (child_id,) = rig.children_of(parent.session.id)
    assert (value["job"]["status"], value["job"]["detail"], value["text"]) == (
        "killed",
        f"stopped; session {child_id}",
        "Sleeping.",
    )
    child = rig.store.load(child_id)
    assert results(child.events) == [("b1", ABORTED)]
    assert rig.store.check(child_id) == []


async def test_a_background_child_completes_as_a_job_with_its_final_text(rig: Rig) -> None:
    rig.router.script(
        "parent task",
        tool_calls_reply(task_call("t1", "quick job", background=True)),
        text_reply("started"),
    )
    rig.router.script("quick job", text_reply("job done"))
    parent = rig.parent()
    await parent.run_turn("parent task", signal=AbortController().signal)

    read = await call(rig, parent, "job_output", {"job_id": "task-1", "wait": True})

    value: Any = read.value
    (child_id,) = rig.children_of(parent.session.id)
    assert (value["job"]["status"], value["job"]["label"], value["text"]) == (
        "completed",
        "general-purpose: a subtask",
        "job done",
    )
    (result,) = [e for e in parent.session.events if e.type == "tool/result"]
    message: Any = result.data["message"]
    assert message["content"][0]["content"][0]["text"] == (
        f"Started a general-purpose agent in the background as job task-1 (session {child_id})."
        " Read its result with job_output; stop it with job_kill."
    )


async def test_disposing_the_plugin_stops_a_running_background_child(rig: Rig) -> None:
    rig.router.script(
        "parent task",
        tool_calls_reply(task_call("t1", "wait in the back", background=True)),
        text_reply("started"),
    )
    rig.router.script("wait in the back", tool_calls_reply(bash_call("b1", "sleep 30")))
    parent = rig.parent()
    await parent.run_turn("parent task", signal=AbortController().signal)
    sleeper = await child_running(["sleep", "30"])
    (child_id,) = rig.children_of(parent.session.id)

    await rig.ctx.dispose()

    assert not alive(sleeper)
    assert rig.store.check(child_id) == []


async def spawned(parent: Any) -> str:
    """The child session id, once the caller's log links it."""
    await eventually(
        lambda: any(e.type == "subagent/spawned" for e in parent.session.events),
        what="the subagent/spawned link",
    )
    (link,) = [e for e in parent.session.events if e.type == "subagent/spawned"]
    return str(link.data["session_id"])


def streamed(rig: Rig, child_id: str) -> bool:
    path = rig.store.path(child_id)
    return path.exists() and b'"text-delta"' in path.read_bytes()


async def eventually(condition: Any, *, what: str, timeout_s: float = PATIENCE_S) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        await asyncio.sleep(0.01)


async def call(rig: Rig, agent: object, name: str, arguments: dict[str, object]) -> Any:
    return await rig.ctx.tools.execute(
        ToolExecutionInput(
            call_id=f"{name}-call",
            name=name,
            arguments=arguments,
            signal=AbortController().signal,
            agent=agent,
        )
    )
