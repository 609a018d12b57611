"""What an interactive front end does with an `Agent` between turns (issue 26 §10: `tether chat`
is a client of `Agent`), against the scripted OpenAI-compatible server.

Contract: `set_model` asks another model from the next request; `new_session` continues in a
fresh session and `resume(id)` in an earlier one (the old log closed and balanced); `compact`
summarises the conversation into a new, linked session that starts from the summary, with
`CompactionStarted`/`CompactionFinished` events; `Agent(context_window=N)` compacts before a turn
whose request would not fit, and once more after the model refused a request as too long;
`call_tool` runs a call as the agent outside the conversation (nothing in the model's history);
`inject` parks context for the next turn; `approver` answers the calls the rules ask about.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tether import AbortController, ToolFailure, ToolSuccess, tool
from tether.agent.events import (
    AgentEvent,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    ToolSlowToStop,
    TurnFinished,
)
from tether.agent.session import SessionError
from tether.agent.session.events import SESSION_COMPACTION
from tether.plugins.approval import ApprovalAnswer, ApprovalQuestion
from tether.testing.scripted_model import http_error, text_reply, tool_calls_reply

from ._rig import Rig, rig

__all__ = ["rig"]  # the fixture, imported for pytest


def signal() -> Any:
    return AbortController().signal


def compaction_events(events: list[AgentEvent]) -> list[AgentEvent]:
    kinds = (CompactionStarted, CompactionFinished, CompactionFailed)
    return [e for e in events if isinstance(e, kinds)]


async def test_set_model_asks_the_new_model_from_the_next_request(rig: Rig) -> None:
    rig.server.push(text_reply("one"), text_reply("two"))
    async with rig.agent(preset="coding", builtins=False) as agent:
        await agent.run("first", signal=signal())
        await agent.set_model("other-model")
        await agent.run("second", signal=signal())
        assert agent.llm.model == "other-model"
    assert [r.body["model"] for r in rig.server.requests] == ["scripted", "other-model"]


async def test_new_session_continues_without_the_old_messages_and_keeps_the_old_log(
    rig: Rig,
) -> None:
    rig.server.push(text_reply("one"), text_reply("two"))
    async with rig.agent(preset="coding", builtins=False) as agent:
        await agent.run("remember kiwi", signal=signal())
        old = agent.session_id
        fresh = await agent.new_session()
        result = await agent.run("what word?", signal=signal())
        assert (fresh.id, result.session_id) == (agent.session_id, agent.session_id)
    assert old != fresh.id
    assert rig.users(1) == ["what word?"]
    assert rig.store.check(old) == []
    assert rig.store.check(fresh.id) == []


async def test_resume_continues_an_earlier_session_in_the_same_agent(rig: Rig) -> None:
    rig.server.push(text_reply("one"), text_reply("two"), text_reply("three"))
    async with rig.agent(preset="coding", builtins=False) as agent:
        await agent.run("remember kiwi", signal=signal())
        first = agent.session_id
        await agent.new_session()
        await agent.run("elsewhere", signal=signal())
        resumed = await agent.resume(first)
        result = await agent.run("what word?", signal=signal())
    assert (resumed.id, result.session_id, result.outcome.turn) == (first, first, 2)
    assert rig.users(2) == ["remember kiwi", "what word?"]


async def test_resume_of_a_missing_session_raises_and_stays_in_the_current_one(rig: Rig) -> None:
    async with rig.agent(preset="coding", builtins=False) as agent:
        current = agent.session_id
        with pytest.raises(SessionError):
            await agent.resume("no-such-session")
        assert agent.session_id == current


async def test_compact_moves_the_conversation_into_a_linked_session_that_starts_from_the_summary(
    rig: Rig,
) -> None:
    rig.server.push(text_reply("kiwi noted"), text_reply("SUMMARY: likes kiwi"), text_reply("kiwi"))
    async with rig.agent(preset="coding", builtins=False) as agent:
        await agent.run("remember kiwi", signal=signal())
        old = agent.session_id
        done = await agent.compact(signal=signal(), focus="the fruit")
        assert done is not None
        await agent.run("what do I like?", signal=signal())
        new = agent.session_id
    assert done == CompactionFinished(old, new, 3)
    started, finished = compaction_events(rig.events)
    assert isinstance(started, CompactionStarted)
    assert (started.trigger, started.window, started.overflow) == ("manual", None, False)
    assert finished == done
    assert "Focus the summary on: the fruit" in rig.users(1)[-1]
    after = rig.users(2)
    assert len(after) == 2
    assert "SUMMARY: likes kiwi" in after[0]
    links = [e.data for e in rig.store.load(new).events if e.type == SESSION_COMPACTION]
    assert [(d["from_session"], d["trigger"], d["focus"]) for d in links] == [
        (old, "manual", "the fruit")
    ]


async def test_compact_with_nothing_to_summarise_does_nothing(rig: Rig) -> None:
    async with rig.agent(preset="coding", builtins=False) as agent:
        before = agent.session_id
        assert await agent.compact(signal=signal()) is None
        assert agent.session_id == before
    assert compaction_events(rig.events) == []
    assert rig.server.requests == []


async def test_a_failed_summary_leaves_the_conversation_where_it_was(rig: Rig) -> None:
    rig.server.push(text_reply("noted"), http_error(400, "bad request"))
    async with rig.agent(preset="coding", builtins=False) as agent:
        await agent.run("remember kiwi", signal=signal())
        before = agent.session_id
        assert await agent.compact(signal=signal()) is None
        assert agent.session_id == before
    started, failed = compaction_events(rig.events)
    assert isinstance(started, CompactionStarted)
    assert isinstance(failed, CompactionFailed)
    assert "bad request" in failed.message


async def test_a_context_window_compacts_before_a_turn_that_would_not_fit(rig: Rig) -> None:
    rig.server.push(text_reply("noted"), text_reply("SUMMARY: a long note"), text_reply("done"))
    async with rig.agent(preset="coding", builtins=False, context_window=300) as agent:
        await agent.run("note " + "x" * 1200, signal=signal())
        first = agent.session_id
        result = await agent.run("and now?", signal=signal())
    assert result.session_id != first
    last = rig.users(2)
    assert "SUMMARY: a long note" in last[0]
    assert last[1:] == ["and now?"]
    started = compaction_events(rig.events)[0]
    assert isinstance(started, CompactionStarted)
    assert (started.trigger, started.window) == ("auto", 300)
    assert isinstance(rig.events[-1], TurnFinished)


async def test_a_turn_the_model_refuses_as_too_long_is_compacted_and_sent_once_more(
    rig: Rig,
) -> None:
    rig.server.push(
        text_reply("noted"),
        http_error(400, "This model's maximum context length is 8192 tokens"),
        text_reply("SUMMARY: one note"),
        text_reply("answered after compaction"),
    )
    async with rig.agent(preset="coding", builtins=False, context_window=128_000) as agent:
        await agent.run("remember this note", signal=signal())
        result = await agent.run("and now?", signal=signal())
        assert agent.context_window is not None
        assert agent.context_window < 128_000
    assert (result.text, result.outcome.kind) == ("answered after compaction", "completed")
    started = compaction_events(rig.events)[0]
    assert isinstance(started, CompactionStarted)
    assert started.overflow
    last = rig.users(3)
    assert "SUMMARY: one note" in last[0]
    assert last[1] == "and now?"


async def test_call_tool_runs_a_call_as_the_agent_outside_the_conversation(rig: Rig) -> None:
    rig.server.push(text_reply("ok"))
    async with rig.agent(preset="coding", builtins=False) as agent:
        result = await agent.call_tool("shout", {"text": "hi"}, signal=signal())
        missing = await agent.call_tool("nope", {}, signal=signal())
        await agent.run("hello", signal=signal())
    assert isinstance(result, ToolSuccess)
    assert result.value == "HI"
    assert isinstance(missing, ToolFailure)
    assert missing.code == "UNKNOWN_TOOL"
    sent = rig.server.requests[0].messages
    assert [m["role"] for m in sent if m["role"] != "system"] == ["user"]


async def test_inject_parks_context_for_the_next_turn(rig: Rig) -> None:
    rig.server.push(text_reply("ok"))
    async with rig.agent(preset="coding", builtins=False) as agent:
        agent.inject("<bash-input>ls</bash-input>")
        await agent.run("what did I list?", signal=signal())
    assert rig.users(0) == ["what did I list?", "<bash-input>ls</bash-input>"]


class Answers:
    def __init__(self, answer: ApprovalAnswer) -> None:
        self.answer = answer
        self.questions: list[ApprovalQuestion] = []

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        self.questions.append(question)
        return self.answer


async def test_the_approver_answers_the_calls_the_rules_ask_about(rig: Rig) -> None:
    made = rig.work / "made.txt"
    touch = json.dumps({"command": f"touch {made}", "description": "make it"})
    rig.server.push(tool_calls_reply(("t1", "bash", touch)), text_reply("made"))
    answers = Answers("allow-once")
    async with rig.agent(preset="coding", approver=answers) as agent:
        result = await agent.run("make the file", signal=signal())
    assert [(q.tool_name, q.call_id) for q in answers.questions] == [("bash", "t1")]
    assert [(c.name, c.code) for c in result.tool_calls] == [("bash", None)]
    assert made.exists()


async def test_an_approver_without_the_approval_plugin_is_refused_at_start(rig: Rig) -> None:
    agent = rig.agent(preset="coding", builtins=False, approver=Answers("allow-once"))
    with pytest.raises(ValueError, match="approver needs the approval plugin"):
        await agent.start()


async def test_a_rule_allowed_for_the_session_holds_again_when_the_session_is_resumed(
    rig: Rig,
) -> None:
    made = rig.work / "made.txt"
    touch = json.dumps({"command": f"touch {made}", "description": "make it"})
    rig.server.push(
        tool_calls_reply(("t1", "bash", touch)),
        text_reply("made"),
        tool_calls_reply(("t2", "bash", touch)),
        text_reply("made again"),
    )
    session_answers = Answers("allow-session")
    async with rig.agent(preset="coding", approver=session_answers) as agent:
        await agent.run("make it", signal=signal())
        session_id = agent.session_id
    later_answers = Answers("reject")
    async with rig.agent(preset="coding", approver=later_answers, session=session_id) as resumed:
        result = await resumed.run("again", signal=signal())
    assert [q.call_id for q in session_answers.questions] == ["t1"]
    assert later_answers.questions == []  # the grant of this session held
    assert [(c.call_id, c.code) for c in result.tool_calls] == [("t2", None)]


async def test_an_aborted_call_whose_body_does_not_stop_is_reported_while_the_turn_waits(
    rig: Rig,
) -> None:
    entered, release = asyncio.Event(), asyncio.Event()

    @tool(cooperative=True)  # not interrupted: it stops only when the test releases it
    async def stubborn() -> str:
        """Waits for the test, whatever its signal says."""
        entered.set()
        await release.wait()
        return "done at last"

    rig.server.push(tool_calls_reply(("s1", "stubborn", "{}")))
    controller = AbortController()
    async with rig.agent(preset="coding", builtins=False, tools=[stubborn]) as agent:
        turn = asyncio.create_task(agent.run("go", signal=controller.signal))
        await entered.wait()
        controller.abort()
        while not any(isinstance(e, ToolSlowToStop) for e in rig.events):
            await asyncio.sleep(0.05)  # the registry reports it 5 s after the abort
        assert not turn.done()  # the call is still awaited, not abandoned
        release.set()
        result = await turn
    (slow,) = [e for e in rig.events if isinstance(e, ToolSlowToStop)]
    assert (slow.call_id, slow.name, slow.waited_s) == ("s1", "stubborn", 5.0)
    assert "in stubborn" in slow.where
    assert result.outcome.kind == "aborted"
    assert [(c.call_id, c.code) for c in result.tool_calls] == [("s1", "ABORTED")]
