"""The public agent, `tether.Agent`, against the scripted OpenAI-compatible server (real HTTP).

Contract (issue 16 §1, capabilities spec §7): `Agent(...)` boots like `tether run` — the built-in
plugins, the tool registry and timeout policy, the JSONL session store — plus the given `@tool`
functions. `await agent.run(prompt, signal=...)` returns the final text, the turn outcome and
each tool call with its exact code (None for a success, `TOOL_TIMEOUT`, `ABORTED`,
`ABORTED_BEFORE_DISPATCH`); a second run continues the same session, and `Agent(session=id)`
resumes a session, repairing a log a crash cut short. `agent.run_stream(...)` yields the
turn's typed events in order, `TurnFinished` last; a consumer that leaves early aborts the turn,
which is awaited to quiescence (the bash command's process group is gone) before `async with`
exits, or — after a bare `break` — before the agent's next run. Leaving `async with Agent(...)`
aborts and awaits a running turn and releases the session log.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from signal import SIGTERM
from typing import Any

import psutil
import pytest

from tether import (
    AbortController,
    ReasoningDelta,
    ResponseComplete,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallRecord,
    ToolCallStarted,
    ToolRunContext,
    TurnFinished,
    tool,
)
from tether.core.ending import ProcessEnding
from tether.core.signals import AbortSignal
from tether.testing.scripted_model import (
    finish,
    reasoning,
    reply,
    text,
    text_reply,
    tool_calls_reply,
)

from ..patience import PATIENCE_S
from ._rig import Rig, rig

SLEEP_30 = ("b1", "bash", '{"command": "sleep 30", "description": "wait"}')
NEVER = ("b2", "bash", '{"command": "echo never", "description": "never"}')
ABORTED = {"name": "AbortError", "code": "ABORTED"}
ABD = {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"}

__all__ = ["rig"]  # the fixture, imported for pytest


def signal() -> Any:
    return AbortController().signal


def codes(records: tuple[ToolCallRecord, ...]) -> list[tuple[str, str, str | None, bool]]:
    return [(r.call_id, r.name, r.code, r.is_error) for r in records]


def results(events: Any) -> list[tuple[str, Any]]:
    out = []
    for event in events:
        if event.type == "tool/result":
            data = event.data
            error = data.get("error")
            out.append((data["message"]["content"][0]["call_id"], error and dict(error)))
    return out


async def child_running(argv: list[str]) -> psutil.Process:
    """Our descendant running `argv`, waited for (bounded generously)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENCE_S
    while loop.time() < deadline:
        for child in psutil.Process().children(recursive=True):
            try:
                if child.cmdline() == argv and child.status() != psutil.STATUS_ZOMBIE:
                    return child
            except psutil.Error:
                continue
        await asyncio.sleep(0.01)
    raise AssertionError(f"no child process ran {argv}")


def alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def group_alive(pgid: int) -> bool:
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == pgid and process.status() != psutil.STATUS_ZOMBIE:
                return True
        except (ProcessLookupError, psutil.Error):
            continue
    return False


# -- run --------------------------------------------------------------------------------------


async def test_run_returns_the_answer_the_outcome_and_each_tool_call_with_its_code(
    rig: Rig,
) -> None:
    rig.server.push(
        tool_calls_reply(("c1", "shout", '{"text": "hi"}'), ("c2", "slow", "{}")),
        text_reply("Done."),
    )
    async with rig.agent(preset="coding", builtins=False) as agent:
        result = await agent.run("go", signal=signal())

    assert (result.text, result.outcome.reason) == ("Done.", {"kind": "completed"})
    assert codes(result.tool_calls) == [
        ("c1", "shout", None, False),
        ("c2", "slow", "TOOL_TIMEOUT", True),
    ]
    first = result.tool_calls[0]
    assert (first.arguments, first.content) == ('{"text": "hi"}', "HI")
    assert result.tool_calls[1].content.startswith("Error: ")
    assert result.session_id == agent.session_id


async def test_a_host_that_installs_process_ending_gets_a_sigterm_turn_aborted_with_its_cause(
    rig: Rig,
) -> None:
    rig.server.push(tool_calls_reply(("h1", "hold", "{}")))
    async with rig.agent(preset="coding", builtins=False) as agent:
        exits: list[int] = []
        with ProcessEnding(exit=exits.append) as ending:  # what the docs tell a host to do
            mine = AbortController()
            with AbortSignal.any(mine.signal, ending.signal) as turn_signal:
                turn = asyncio.create_task(agent.run("go", signal=turn_signal))
                await rig.held.entered.wait()
                os.kill(os.getpid(), SIGTERM)
                result = await turn

        assert (ending.exit_code(0), exits) == (143, [])
        assert result.outcome.reason == {
            "kind": "aborted",
            "reason": {"kind": "signal", "signal": "SIGTERM"},
        }
        assert codes(result.tool_calls) == [("h1", "hold", "ABORTED", True)]
    assert rig.store.check(result.session_id) == []


async def test_an_aborted_run_records_the_started_call_aborted_and_the_queued_one_undispatched(
    rig: Rig,
) -> None:
    rig.server.push(tool_calls_reply(("h1", "hold", "{}"), ("c1", "shout", '{"text": "x"}')))
    controller = AbortController()
    async with rig.agent(preset="coding", builtins=False) as agent:
        turn = asyncio.create_task(agent.run("go", signal=controller.signal))
        await rig.held.entered.wait()
        controller.abort()
        result = await turn

        assert result.outcome.reason == {"kind": "aborted", "reason": {"kind": "user"}}
        assert codes(result.tool_calls) == [
            ("h1", "hold", "ABORTED", True),
            ("c1", "shout", "ABORTED_BEFORE_DISPATCH", True),
        ]
        assert results(agent.session.events) == [("h1", ABORTED), ("c1", ABD)]
    assert rig.store.check(result.session_id) == []


async def test_a_second_run_continues_the_same_session(rig: Rig) -> None:
    rig.server.push(text_reply("One."), text_reply("Two."))
    async with rig.agent(preset="coding", builtins=False) as agent:
        first = await agent.run("first", signal=signal())
        second = await agent.run("second", signal=signal())

    assert (first.text, second.text) == ("One.", "Two.")
    assert first.session_id == second.session_id
    assert (first.outcome.turn, second.outcome.turn) == (1, 2)
    sent = rig.server.requests[1].messages
    assert [(m["role"], m["content"]) for m in sent if m["role"] != "system"] == [
        ("user", "first"),
        ("assistant", "One."),
        ("user", "second"),
    ]


async def test_agent_session_resumes_an_earlier_session_and_continues_its_log(rig: Rig) -> None:
    rig.server.push(text_reply("One."), text_reply("Two."))
    async with rig.agent(preset="coding", builtins=False) as agent:
        await agent.run("first", signal=signal())
        session_id = agent.session_id

    async with rig.agent(preset="coding", builtins=False, session=session_id) as resumed:
        result = await resumed.run("second", signal=signal())

    assert (result.session_id, result.outcome.turn, result.text) == (session_id, 2, "Two.")
    sent = rig.server.requests[1].messages
    assert [m["content"] for m in sent if m["role"] == "user"] == ["first", "second"]
    assert rig.store.check(session_id) == []


async def test_resuming_a_session_a_crash_cut_short_repairs_it_first(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(("h1", "hold", "{}")), text_reply("Recovered."))
    controller = AbortController()
    async with rig.agent(preset="coding", builtins=False) as agent:
        turn = asyncio.create_task(agent.run("go", signal=controller.signal))
        await rig.held.entered.wait()
        crashed = agent.session.path.read_bytes()  # the file as a kill -9 now would leave it
        controller.abort()
        await turn
        session_id = agent.session_id
    agent.session.path.write_bytes(crashed)

    async with rig.agent(preset="coding", builtins=False, session=session_id) as resumed:
        assert resumed.session.repair is not None
        assert resumed.session.repair.describe() == [
            "closed interrupted turn 1 with synthetic tool results (1 TOOL_OUTCOME_UNKNOWN)"
        ]
        result = await resumed.run("again", signal=signal())

    assert (result.outcome.turn, result.text) == (2, "Recovered.")
    loaded = rig.store.load(session_id)
    unknown = {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
    assert results(loaded.events) == [("h1", unknown)]
    assert rig.store.check(session_id) == []


async def test_a_tool_call_carries_the_agents_loop_a_top_level_one(rig: Rig) -> None:
    seen: list[object] = []

    @tool
    async def whoami(exec: ToolRunContext) -> str:
        """Reports the calling agent."""
        seen.append(exec.agent)
        return "me"

    rig.server.push(tool_calls_reply(("w1", "whoami", "{}")), text_reply("Done."))
    async with rig.agent(preset="coding", builtins=False, tools=[whoami]) as agent:
        await agent.run("who?", signal=signal())

        assert seen == [agent.loop]
        assert (agent.loop.depth, agent.loop.parent) == (0, None)
        assert agent.loop.session is agent.session


# -- run_stream -------------------------------------------------------------------------------


async def test_run_stream_yields_the_turns_events_in_order_and_the_result_last(rig: Rig) -> None:
    rig.server.push(
        tool_calls_reply(("c1", "shout", '{"text": "hi"}')),
        reply(reasoning("Think."), text("Hel"), text("lo"), finish("stop")),
    )
    async with rig.agent(preset="coding", builtins=False) as agent:
        events = [event async for event in agent.run_stream("go", signal=signal())]

    first, finished, second, last = events[1], events[3], events[8], events[-1]
    assert isinstance(first, ResponseComplete)
    assert isinstance(finished, ToolCallFinished)
    assert isinstance(second, ResponseComplete)
    assert isinstance(last, TurnFinished)
    assert events == [
        StepStarted(1, 1),
        first,
        ToolCallStarted("c1", "shout", '{"text": "hi"}'),
        finished,
        StepStarted(1, 2),
        ReasoningDelta("Think."),
        TextDelta("Hel"),
        TextDelta("lo"),
        second,
        last,
    ]
    assert (first.turn, first.step, first.stopped) == (1, 1, "tool-calls")
    assert [c.id for c in first.message.tool_calls] == ["c1"]
    assert (second.step, second.stopped, second.message.text) == (2, "stop", "Hello")
    assert (finished.call_id, finished.code, finished.is_error) == ("c1", None, False)
    assert (last.result.text, last.result.outcome.reason) == ("Hello", {"kind": "completed"})
    assert codes(last.result.tool_calls) == [("c1", "shout", None, False)]


async def test_leaving_run_stream_early_aborts_the_turn_and_awaits_its_process_group(
    rig: Rig,
) -> None:
    rig.server.push(tool_calls_reply(SLEEP_30, NEVER))
    async with rig.agent(preset="coding", allow=["Bash(sleep 30)"]) as agent:
        async with agent.run_stream("wait for it", signal=signal()) as events:
            async for event in events:
                if isinstance(event, ToolCallStarted) and event.call_id == "b1":
                    sleeper = await child_running(["sleep", "30"])
                    group = os.getpgid(sleeper.pid)
                    break

        assert not alive(sleeper)
        assert not group_alive(group)
        assert results(agent.session.events) == [("b1", ABORTED), ("b2", ABD)]
        turn_end = [e for e in agent.session.events if e.type == "turn/end"]
        assert turn_end[-1].data["reason"] == {"kind": "aborted", "reason": {"kind": "user"}}
        assert rig.store.check(agent.session_id) == []


async def test_a_bare_break_aborts_the_turn_and_the_next_run_awaits_it_first(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(SLEEP_30, NEVER), text_reply("Next."))
    async with rig.agent(preset="coding", allow=["Bash(sleep 30)"]) as agent:
        async for event in agent.run_stream("wait for it", signal=signal()):
            if isinstance(event, ToolCallStarted):
                sleeper = await child_running(["sleep", "30"])
                break
        result = await agent.run("next", signal=signal())

        assert not alive(sleeper)
        assert (result.outcome.turn, result.text) == (2, "Next.")
        assert results(agent.session.events) == [("b1", ABORTED), ("b2", ABD)]
        assert rig.store.check(agent.session_id) == []


async def test_cancelling_the_consumer_of_run_stream_aborts_the_turn_and_awaits_it(
    rig: Rig,
) -> None:
    rig.server.push(tool_calls_reply(("h1", "hold", "{}")))
    async with rig.agent(preset="coding", builtins=False) as agent:

        async def consume() -> None:
            async with agent.run_stream("go", signal=signal()) as events:
                async for _event in events:
                    pass

        consumer = asyncio.create_task(consume())
        await rig.held.entered.wait()
        consumer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await consumer

        assert results(agent.session.events) == [("h1", ABORTED)]
        assert rig.store.check(agent.session_id) == []


# -- disposal ---------------------------------------------------------------------------------


async def test_leaving_async_with_aborts_the_running_turn_awaits_it_and_releases_the_log(
    rig: Rig,
) -> None:
    rig.server.push(tool_calls_reply(("h1", "hold", "{}")))
    async with rig.agent(preset="coding", builtins=False) as agent:
        turn = asyncio.create_task(agent.run("go", signal=signal()))
        await rig.held.entered.wait()
    assert turn.done()

    result = turn.result()
    assert result.outcome.kind == "aborted"
    assert codes(result.tool_calls) == [("h1", "hold", "ABORTED", True)]
    assert agent.session.closed
    reopened = rig.store.open(result.session_id)  # the writer lock was released
    reopened.close()
    assert rig.store.check(result.session_id) == []
    with pytest.raises(RuntimeError, match="the agent is closed"):
        await agent.run("more", signal=signal())


# -- the README's example -----------------------------------------------------------------------


def readme_example() -> str:
    """The first code block of the README's "Using the library" section."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Using the library\n", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


async def test_the_readme_example_runs_as_written(
    rig: Rig, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(rig.work)
    monkeypatch.setenv("TETHER_HOME", str(rig.home))
    (rig.work / "README.md").write_text("one two three\n")
    rig.server.push(
        tool_calls_reply(("c1", "word_count", '{"path": "README.md"}')),
        text_reply("3 words."),
        reply(text("No "), text("docs."), finish("stop")),
    )
    code = readme_example()
    assert code.count("http://127.0.0.1:8000/v1") == 1
    code = code.replace("http://127.0.0.1:8000/v1", rig.server.base_url)
    namespace: dict[str, Any] = {}
    exec(code.replace("asyncio.run(main())", ""), namespace)

    await namespace["main"]()

    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "3 words. completed"
    assert printed[1].startswith("word_count None ")
    assert printed[2:] == ["No docs."]
    assert [m["content"] for m in rig.server.requests[2].messages if m["role"] == "user"] == [
        "How many words are in README.md?",
        "And in the docs?",
    ]
