"""Policy in code (agent/policy.py, issue 38): `Agent(deny=[...])`, `Agent(policy=...)`, and the
application's own tools.

Contract: deny rules use the settings syntax and refuse a matching call with the rule named, in
any mode; a check function `(exec) -> Deny | Ask | None` runs in the `tools/pre-execute`
waterfall for every call (a `Deny` refuses it, `None` lets it through); a bad rule is a
ValueError at construction; the tools the application passes run without an approval channel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from tether import AbortController, Agent, Deny, ToolCallRecord, ToolExecution
from tether.agent.policy import LIBRARY_PROMPT, DenyRules
from tether.testing.scripted_model import text_reply, tool_calls_reply

from ._rig import Rig, rig

__all__ = ["rig"]  # the fixture, imported for pytest

ECHO = ("b1", "bash", '{"command": "echo hi", "description": "say hi"}')
RM = ("b2", "bash", '{"command": "rm -rf build", "description": "clean"}')


def signal() -> Any:
    return AbortController().signal


def fates(records: tuple[ToolCallRecord, ...]) -> list[tuple[str, str | None, str]]:
    return [(r.call_id, r.code, r.content) for r in records]


async def test_a_deny_rule_refuses_the_matching_call_naming_the_rule(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(RM), text_reply("ok"))
    async with rig.agent(
        preset="coding", deny=["Bash(rm:*)"], permission_mode="bypassPermissions"
    ) as agent:
        result = await agent.run("clean", signal=signal())
    (record,) = result.tool_calls
    assert record.is_error
    assert 'denied by permission rule "Bash(rm:*)"' in record.content


async def test_a_deny_rule_lets_other_calls_run(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(ECHO), text_reply("ok"))
    async with rig.agent(
        preset="coding", deny=["Bash(rm:*)"], permission_mode="bypassPermissions"
    ) as agent:
        result = await agent.run("greet", signal=signal())
    assert [(r.code, r.content.strip()) for r in result.tool_calls] == [(None, "hi")]


def test_a_rule_that_does_not_parse_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="is not a permission rule"):
        Agent(deny=["Bash(rm"])


def test_one_string_for_deny_is_refused_naming_the_list_form() -> None:
    with pytest.raises(ValueError, match=r"deny=\['Bash\(rm:\*\)'\]"):
        Agent(deny="Bash(rm:*)")


async def test_a_check_function_refuses_a_call_with_its_reason(rig: Rig) -> None:
    seen: list[str] = []

    def no_shouting(exec: ToolExecution) -> Deny | None:
        seen.append(exec.name)
        return Deny("no shouting today") if exec.name == "shout" else None

    rig.server.push(tool_calls_reply(("c1", "shout", '{"text": "hi"}')), text_reply("ok"))
    async with rig.agent(preset="coding", builtins=False, policy=no_shouting) as agent:
        result = await agent.run("go", signal=signal())
    assert seen == ["shout"]
    assert fates(result.tool_calls) == [("c1", "DENIED", "Error: no shouting today")]


async def test_an_async_check_that_returns_none_lets_the_call_run(rig: Rig) -> None:
    async def anything_goes(exec: ToolExecution) -> None:
        return None

    rig.server.push(tool_calls_reply(("c1", "shout", '{"text": "hi"}')), text_reply("ok"))
    async with rig.agent(preset="coding", builtins=False, policy=[anything_goes]) as agent:
        result = await agent.run("go", signal=signal())
    assert fates(result.tool_calls) == [("c1", None, "HI")]


async def test_the_applications_own_tool_runs_with_the_builtins_and_no_approval_channel(
    rig: Rig,
) -> None:
    rig.server.push(tool_calls_reply(("c1", "shout", '{"text": "hi"}')), text_reply("ok"))
    async with rig.agent(preset="coding") as agent:
        result = await agent.run("go", signal=signal())
    assert fates(result.tool_calls) == [("c1", None, "HI")]


# -- presets ----------------------------------------------------------------------------------


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or ()]


async def test_the_library_preset_sends_a_neutral_prompt_and_only_the_applications_tools(
    rig: Rig,
) -> None:
    rig.server.push(text_reply("ok"))
    async with rig.agent(preset="library") as agent:
        await agent.run("hi", signal=signal())
    request = rig.server.requests[0]
    assert request.messages[0] == {"role": "system", "content": LIBRARY_PROMPT}
    assert sorted(tool_names(request.body)) == ["hold", "shout", "slow"]


async def test_the_coding_preset_sends_the_builtin_tools(rig: Rig) -> None:
    rig.server.push(text_reply("ok"))
    async with rig.agent(preset="coding") as agent:
        await agent.run("hi", signal=signal())
    assert "bash" in tool_names(rig.server.requests[0].body)


class _Call:
    """What `DenyRules.check` reads of a call: its tool name and arguments."""

    name = "bash"
    arguments = {"command": "rm -rf build"}


def test_deny_rules_check_takes_the_old_exec_keyword_with_a_deprecation_warning(
    tmp_path: Path,
) -> None:
    rules = DenyRules(["Bash(rm:*)"], workspace=tmp_path, home=None)
    call = cast(ToolExecution, _Call())
    with pytest.warns(DeprecationWarning, match="the keyword 'exec' is deprecated"):
        old = rules.check(exec=call)  # type: ignore[call-arg]
    assert old == rules.check(call=call) == rules.check(call)
    assert isinstance(old, Deny)


def test_an_unknown_preset_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown preset 'chat': one of 'coding', 'library'"):
        Agent(preset="chat")  # type: ignore[arg-type]
