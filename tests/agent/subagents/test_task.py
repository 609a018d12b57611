"""The `task` tool in the foreground: a child agent loop of a named type, answering its caller.

Contract (issue 16 §3, capabilities spec §7.6): a `task` call starts a child agent in its own
session log — header `parent_session` = the caller's session, `origin: "subagent"`,
`delegation_depth` = the caller's + 1 — with its type's system prompt and its type's tool list
installed as a restriction before it runs: a filtered tool is absent from the child's request
and answers `UNKNOWN_TOOL` when the child calls it anyway. The caller's log records the link as
`subagent/spawned`; the call's result is the child's final text, with the child session in its
`meta`. Beyond `max_depth` (default 3) the call fails with `SUBAGENT_DEPTH_EXCEEDED`; an unknown
type with `UNKNOWN_SUBAGENT_TYPE`; a child whose turn ends otherwise with `SUBAGENT_FAILED`.
Several calls of read-only types in one step run concurrently.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tether import AbortController, ToolOutput, ToolRunContext, define_tool
from tether.agent.session import SessionStore
from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ._support import Rig, Router, results, task_call, types

pytestmark = pytest.mark.slow

REVIEWER = {
    "description": "Reads code and reports problems.",
    "prompt": "You review code. Report problems only.",
    "tools": ["read", "grep", "glob"],
}


@pytest.fixture
async def typed(tmp_path: Path, server: ScriptedModelServer, router: Router) -> Any:
    built = await Rig.start(tmp_path, server, router, subagents={"agents": {"reviewer": REVIEWER}})
    try:
        yield built
    finally:
        await built.aclose()


def request_tools(rig: Rig, prompt: str, index: int = 0) -> list[str]:
    body = rig.router.seen[prompt][index].body
    return [tool["function"]["name"] for tool in body.get("tools", [])]


def system_prompt(rig: Rig, prompt: str) -> str:
    messages = rig.router.seen[prompt][0].messages
    return str(messages[0]["content"]) if messages[0]["role"] == "system" else ""


async def run_parent(rig: Rig, task: str = "parent task") -> Any:
    parent = rig.parent()
    outcome = await parent.run_turn(task, signal=AbortController().signal)
    return parent, outcome


async def test_a_child_answers_its_caller_and_the_result_is_its_final_text(rig: Rig) -> None:
    rig.router.script(
        "parent task", tool_calls_reply(task_call("t1", "count the files")), text_reply("ok")
    )
    rig.router.script("count the files", text_reply("there are 3 files"))

    parent, outcome = await run_parent(rig)

    assert outcome.completed
    (result,) = [e for e in parent.session.events if e.type == "tool/result"]
    message: Any = result.data["message"]
    assert message["content"][0]["content"] == [{"type": "text", "text": "there are 3 files"}]
    (child_id,) = rig.children_of(parent.session.id)
    assert dict(result.data["meta"]) == {
        "subagent_session": child_id,
        "agent_type": "general-purpose",
    }
    follow_up = rig.router.seen["parent task"][1].messages
    assert any(m.get("role") == "tool" and "there are 3 files" in str(m) for m in follow_up)


async def test_the_child_log_names_its_parent_origin_and_depth_and_is_balanced(rig: Rig) -> None:
    rig.router.script("parent task", tool_calls_reply(task_call("t1", "look")), text_reply("ok"))
    rig.router.script("look", text_reply("looked"))

    parent, _ = await run_parent(rig)

    (child_id,) = rig.children_of(parent.session.id)
    child = rig.store.load(child_id)
    assert (child.header.parent_session, child.header.origin, child.header.delegation_depth) == (
        parent.session.id,
        "subagent",
        1,
    )
    assert types(child.events) == [
        "turn/start",
        "step/start",
        "user/message",
        "request/header",
        "request/context",
        "assistant/chunk*",
        "assistant/message",
        "step/end",
        "turn/end",
    ]
    assert rig.store.check(child_id) == []
    assert rig.store.check(parent.session.id) == []


async def test_the_caller_log_links_the_call_to_the_child_session(rig: Rig) -> None:
    rig.router.script("parent task", tool_calls_reply(task_call("t1", "look")), text_reply("ok"))
    rig.router.script("look", text_reply("looked"))

    parent, _ = await run_parent(rig)

    (child_id,) = rig.children_of(parent.session.id)
    (link,) = [e for e in parent.session.events if e.type == "subagent/spawned"]
    assert dict(link.data) == {
        "turn": 1,
        "call_id": "t1",
        "session_id": child_id,
        "agent_type": "general-purpose",
        "background": False,
    }


async def test_a_general_purpose_child_sees_every_tool_of_its_caller(rig: Rig) -> None:
    rig.router.script("parent task", tool_calls_reply(task_call("t1", "look")), text_reply("ok"))
    rig.router.script("look", text_reply("looked"))

    await run_parent(rig)

    assert request_tools(rig, "look") == request_tools(rig, "parent task")
    assert "bash" in request_tools(rig, "look")


async def test_a_typed_child_gets_its_prompt_and_only_its_tools(typed: Rig) -> None:
    typed.router.script(
        "parent task", tool_calls_reply(task_call("t1", "review", "reviewer")), text_reply("ok")
    )
    typed.router.script("review", text_reply("no problems"))

    await run_parent(typed)

    assert request_tools(typed, "review") == ["read", "grep", "glob"]
    assert system_prompt(typed, "review").startswith("You review code. Report problems only.")


async def test_a_filtered_tool_called_anyway_is_unknown_to_the_child(typed: Rig) -> None:
    typed.router.script(
        "parent task", tool_calls_reply(task_call("t1", "review", "reviewer")), text_reply("ok")
    )
    typed.router.script(
        "review",
        tool_calls_reply(("b1", "bash", json.dumps({"command": "touch hacked"}))),
        text_reply("could not"),
    )

    parent, _ = await run_parent(typed)

    (child_id,) = typed.children_of(parent.session.id)
    child = typed.store.load(child_id)
    assert results(child.events) == [("b1", {"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"})]
    (result,) = [e for e in child.events if e.type == "tool/result"]
    message: Any = result.data["message"]
    assert message["content"][0]["content"] == [
        {"type": "text", "text": 'Error: unknown tool "bash"'}
    ]
    assert not (typed.work / "hacked").exists()


async def test_an_unknown_type_fails_the_call_naming_the_available_types(typed: Rig) -> None:
    typed.router.script(
        "parent task", tool_calls_reply(task_call("t1", "x", "nobody")), text_reply("ok")
    )

    parent, _ = await run_parent(typed)

    assert results(parent.session.events) == [
        ("t1", {"name": "UnknownSubagentType", "code": "UNKNOWN_SUBAGENT_TYPE"})
    ]
    (result,) = [e for e in parent.session.events if e.type == "tool/result"]
    message: Any = result.data["message"]
    assert message["content"][0]["content"][0]["text"] == (
        'Error: unknown subagent_type "nobody"; available types: general-purpose, reviewer'
    )
    assert typed.children_of(parent.session.id) == []


async def test_a_child_whose_turn_fails_fails_the_call_with_its_reason(rig: Rig) -> None:
    rig.router.script("parent task", tool_calls_reply(task_call("t1", "look")), text_reply("ok"))
    # nothing scripted for "look": the router answers HTTP 500

    parent, _ = await run_parent(rig)

    (child_id,) = rig.children_of(parent.session.id)
    assert results(parent.session.events) == [
        ("t1", {"name": "SubagentFailed", "code": "SUBAGENT_FAILED"})
    ]
    (result,) = [e for e in parent.session.events if e.type == "tool/result"]
    message: Any = result.data["message"]
    text = message["content"][0]["content"][0]["text"]
    assert text.startswith(
        f"Error: the general-purpose agent (session {child_id}) did not complete: SERVER: "
    )
    assert rig.store.check(child_id) == []


async def test_delegation_beyond_max_depth_fails_with_a_clear_error(
    tmp_path: Path, server: ScriptedModelServer, router: Router
) -> None:
    rig = await Rig.start(tmp_path, server, router, subagents={"max_depth": 1})
    try:
        router.script(
            "parent task", tool_calls_reply(task_call("t1", "level one")), text_reply("ok")
        )
        router.script(
            "level one", tool_calls_reply(task_call("t2", "level two")), text_reply("done")
        )

        parent, outcome = await run_parent(rig)
    finally:
        await rig.aclose()

    assert outcome.completed
    (child_id,) = rig.children_of(parent.session.id)
    child = rig.store.load(child_id)
    assert results(child.events) == [
        ("t2", {"name": "DelegationTooDeep", "code": "SUBAGENT_DEPTH_EXCEEDED"})
    ]
    (result,) = [e for e in child.events if e.type == "tool/result"]
    message: Any = result.data["message"]
    assert message["content"][0]["content"][0]["text"] == (
        "Error: cannot start a subagent: this agent is at delegation depth 1 and the subagents"
        " max_depth is 1; do this work yourself instead of delegating"
    )
    assert rig.children_of(child_id) == []


async def test_a_grandchild_is_at_depth_two_under_its_parent_child(rig: Rig) -> None:
    rig.router.script(
        "parent task", tool_calls_reply(task_call("t1", "level one")), text_reply("ok")
    )
    rig.router.script(
        "level one", tool_calls_reply(task_call("t2", "level two")), text_reply("one")
    )
    rig.router.script("level two", text_reply("two"))

    parent, _ = await run_parent(rig)

    (child_id,) = rig.children_of(parent.session.id)
    (grandchild_id,) = rig.children_of(child_id)
    assert SessionStore(rig.store.root).load(grandchild_id).header.delegation_depth == 2


class Nothing(BaseModel):
    pass


async def test_three_read_only_children_run_concurrently(
    tmp_path: Path, server: ScriptedModelServer, router: Router
) -> None:
    inside: set[str] = set()
    all_in = asyncio.Event()

    async def barrier(args: Nothing, exec: ToolRunContext) -> str:
        inside.add(exec.call_id)
        if len(inside) == 3:
            all_in.set()
        async with asyncio.timeout(30):  # a child alone here fails its call: not concurrent
            await all_in.wait()
        return "together"

    rig = await Rig.start(
        tmp_path,
        server,
        router,
        subagents={
            "agents": {"scout": {"description": "Looks.", "tools": ["barrier", "read"]}},
            "read_only_tools": ["read", "barrier"],
        },
    )
    rig.ctx.tools.register(
        define_tool(
            name="barrier",
            description="waits for the others",
            parameters=Nothing,
            output=ToolOutput(schema=str),
            execute=barrier,
            is_concurrency_safe=lambda _args: True,
        )
    )
    try:
        router.script(
            "parent task",
            tool_calls_reply(*(task_call(f"t{i}", f"scout {i}", "scout") for i in (1, 2, 3))),
            text_reply("ok"),
        )
        for i in (1, 2, 3):
            router.script(
                f"scout {i}", tool_calls_reply((f"b{i}", "barrier", "{}")), text_reply(f"saw {i}")
            )

        parent, outcome = await run_parent(rig)
    finally:
        await rig.aclose()

    assert outcome.completed
    assert results(parent.session.events) == [("t1", None), ("t2", None), ("t3", None)]
    for child_id in rig.children_of(parent.session.id):
        child = rig.store.load(child_id)
        (call,) = [e for e in child.events if e.type == "tool/call"]
        assert results(child.events) == [(call.data["call_id"], None)]


async def test_task_calls_of_types_with_side_effects_are_exclusive(typed: Rig) -> None:
    from tether import ToolExecutionInput

    def mode(subagent_type: str) -> str:
        return typed.ctx.tools.execution_mode(
            ToolExecutionInput(
                call_id="c",
                name="task",
                arguments={"description": "d", "prompt": "p", "subagent_type": subagent_type},
                signal=AbortController().signal,
            )
        )

    assert (mode("reviewer"), mode("general-purpose"), mode("nobody")) == (
        "parallel",
        "exclusive",
        "exclusive",
    )
