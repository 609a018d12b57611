"""What a turn's tool-call records say (agent/events.py, issue 38): durations that mean one thing
and the parsed arguments.

Contract: `duration_ms` runs from the call recorded to its result recorded; `queued_ms` up to the
body's dispatch and `ran_ms` from there to its result, so they never add up to more than
`duration_ms`; both are None for a call whose body was never dispatched. `arguments` stays the raw
JSON text, `parsed_arguments` is it parsed (None when it is not JSON).
"""

from __future__ import annotations

from typing import Any

from tether import AbortController, Deny, ToolExecution
from tether.testing.scripted_model import text_reply, tool_calls_reply

from ._rig import Rig, rig

__all__ = ["rig"]  # the fixture, imported for pytest


def signal() -> Any:
    return AbortController().signal


def no_slow(exec: ToolExecution) -> Deny | None:
    return Deny("not today") if exec.name == "slow" else None


async def test_a_dispatched_call_has_queued_and_ran_within_its_duration(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(("c1", "shout", '{"text": "hi"}')), text_reply("ok"))
    async with rig.agent(preset="coding", builtins=False) as agent:
        result = await agent.run("go", signal=signal())
    (record,) = result.tool_calls
    queued, ran = record.queued_ms, record.ran_ms
    assert queued is not None
    assert ran is not None
    assert min(queued, ran) >= 0
    assert queued + ran <= record.duration_ms


async def test_a_call_refused_before_dispatch_has_no_queued_or_ran_time(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(("c1", "slow", "{}")), text_reply("ok"))
    async with rig.agent(preset="coding", builtins=False, policy=no_slow) as agent:
        result = await agent.run("go", signal=signal())
    (record,) = result.tool_calls
    assert (record.code, record.queued_ms, record.ran_ms) == ("DENIED", None, None)


async def test_a_record_has_its_arguments_parsed_beside_the_raw_text(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(("c1", "shout", '{"text": "hi"}')), text_reply("ok"))
    async with rig.agent(preset="coding", builtins=False) as agent:
        result = await agent.run("go", signal=signal())
    (record,) = result.tool_calls
    assert (record.arguments, record.parsed_arguments) == ('{"text": "hi"}', {"text": "hi"})
    assert record.ok


async def test_arguments_that_are_not_json_parse_to_none(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(("c1", "shout", '{"text": ')), text_reply("ok"))
    async with rig.agent(preset="coding", builtins=False) as agent:
        result = await agent.run("go", signal=signal())
    (record,) = result.tool_calls
    assert (record.parsed_arguments, record.ok) == (None, False)
