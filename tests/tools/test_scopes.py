"""Agent scopes in the registry (spec capabilities §1.6.6, tool-runtime §1.6, §1.18, §7.5).

Contract:
- `ctx.scope(agent)` is a context whose tools, guards, restrictions and listeners belong to that
  agent's scope; `scoped.scope(child)` chains a child scope under it; `await scoped.dispose()`
  (or disposing whatever owns the context it came from) removes all of it.
- Visibility: the nearest layer that has a name wins (own, then ancestors, then global); a
  scope's `restrict({"allow", "deny"})` masks what it inherits, masks intersect along the chain,
  a scope's own tools are never masked by its own restrictions, `run_code` is never masked.
  `get`, `names`, `schemas`, `execution_mode` and dispatch agree; a hidden name is
  `UNKNOWN_TOOL` (`unknown tool "<name>"`) at dispatch.
- A scoped guard sees only calls of its agent and its descendants; guards run global first,
  then the chain farthest first.
- A scoped listener of the tools events sees only calls of its agent and its descendants;
  `global_=True` and unscoped listeners see every call; `tools/change` reaches everyone.
- `run_code` can be registered only with `reserved=True` (the Code Mode plugin), never in a scope.
- Nothing accumulates: 10,000 scopes created and disposed leave every table as it was.
- Every error text is exact.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tether import Deny, ToolExecution, ToolExecutionResult
from tether.kernel import Context, PluginError

from .conftest import call, denied_json, error_json, raw_tool, success_json

UNKNOWN = "ToolNotFoundError", "UNKNOWN_TOOL"


class Agent:
    """An agent stand-in: equal to everything and unhashable, so only identity can key it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Agent({self.name!r})"


def says(text: str) -> Callable[[object, object], str]:
    """A body that returns `text` (to tell a shadowing tool from the one it shadows)."""

    def body(args: object, exec: object) -> str:
        return text

    return body


@pytest.fixture
def tools(ctx: Context) -> Context:
    """`ctx` with the global tools read, bash and grep."""
    for name in ("read", "bash", "grep"):
        ctx.tools.register(raw_tool(name, says(f"global {name}")))
    return ctx


def names(ctx: Context, agent: object | None) -> list[str]:
    return [schema["name"] for schema in ctx.tools.runtime.schemas(agent)]  # type: ignore[misc]


async def run(ctx: Context, name: str, agent: object | None = None) -> dict[str, Any]:
    return (await ctx.tools.execute(call(name, agent=agent))).to_json()  # type: ignore[no-any-return]


# -- scoped contexts -----------------------------------------------------------------------------


async def test_a_scoped_context_names_its_agent_and_an_unscoped_one_none(ctx: Context) -> None:
    agent = Agent("a")

    scoped = ctx.scope(agent)

    assert scoped.agent is agent
    assert ctx.agent is None


async def test_an_agent_has_one_live_scope_at_a_time(ctx: Context) -> None:
    agent = Agent("a")
    scoped = ctx.scope(agent)

    with pytest.raises(PluginError) as refused:
        ctx.scope(agent)

    assert str(refused.value) == (
        "agent Agent('a') already has an agent scope, which is live; use that scoped context, "
        "or await its dispose() before scoping the agent again"
    )
    await scoped.dispose()
    assert ctx.scope(agent).agent is agent


async def test_a_scope_needs_an_agent(ctx: Context) -> None:
    with pytest.raises(TypeError) as refused:
        ctx.scope(None)

    assert str(refused.value) == "ctx.scope(agent) needs the object the scope belongs to; got None"


# -- shadowing -----------------------------------------------------------------------------------


async def test_a_scoped_tool_shadows_the_global_one_for_its_agent_only(tools: Context) -> None:
    agent, other = Agent("a"), Agent("b")
    tools.scope(agent).tools.register(raw_tool("read", says("scoped read")))

    assert await run(tools, "read", agent) == success_json("scoped read")
    assert await run(tools, "read", other) == success_json("global read")
    assert await run(tools, "read") == success_json("global read")


async def test_get_resolves_the_shadowing_definition_for_the_agent(tools: Context) -> None:
    agent = Agent("a")
    mine = raw_tool("read", says("scoped read"))
    tools.scope(agent).tools.register(mine)

    assert tools.tools.get("read", agent) is mine
    assert tools.tools.get("read") is not mine


async def test_a_shadowing_tool_keeps_the_place_of_the_name_it_shadows(tools: Context) -> None:
    agent = Agent("a")
    scoped = tools.scope(agent)
    scoped.tools.register(raw_tool("mine"))
    scoped.tools.register(raw_tool("read", says("scoped read")))

    assert names(tools, agent) == ["read", "bash", "grep", "mine"]
    assert tools.tools.names(agent) == ["read", "bash", "grep", "mine"]


async def test_a_descendant_sees_its_ancestors_shadowing_tool(tools: Context) -> None:
    parent, child = Agent("parent"), Agent("child")
    scoped = tools.scope(parent)
    scoped.tools.register(raw_tool("read", says("parent read")))
    scoped.scope(child)

    assert await run(tools, "read", child) == success_json("parent read")


async def test_a_scoped_tool_is_unknown_to_other_agents_and_to_calls_without_one(
    ctx: Context,
) -> None:
    agent, other = Agent("a"), Agent("b")
    ctx.scope(agent).tools.register(raw_tool("mine"))

    assert await run(ctx, "mine", agent) == success_json("ok")
    assert await run(ctx, "mine", other) == error_json('unknown tool "mine"', *UNKNOWN)
    assert await run(ctx, "mine") == error_json('unknown tool "mine"', *UNKNOWN)


async def test_a_name_taken_in_a_scope_is_refused_there(ctx: Context) -> None:
    scoped = ctx.scope(Agent("a"))
    scoped.tools.register(raw_tool("mine"))

    with pytest.raises(ValueError) as refused:
        scoped.tools.register(raw_tool("mine"))

    assert str(refused.value) == 'tool "mine" is already registered in this scope'


async def test_a_scoped_view_defaults_lookups_to_its_agent(tools: Context) -> None:
    agent = Agent("a")
    scoped = tools.scope(agent)
    mine = raw_tool("read", says("scoped read"))
    scoped.tools.register(mine)
    scoped.tools.restrict({"deny": ["bash"]})

    assert scoped.tools.get("read") is mine
    assert scoped.tools.names() == ["read", "grep"]
    assert [schema["name"] for schema in scoped.tools.schemas()] == ["read", "grep"]


# -- restrict ------------------------------------------------------------------------------------


async def test_an_allow_list_keeps_only_the_listed_inherited_tools(tools: Context) -> None:
    agent = Agent("a")

    tools.scope(agent).tools.restrict({"allow": ["read", "grep"]})

    assert names(tools, agent) == ["read", "grep"]
    assert names(tools, None) == ["read", "bash", "grep"]


async def test_a_deny_list_hides_the_listed_inherited_tools(tools: Context) -> None:
    agent = Agent("a")

    tools.scope(agent).tools.restrict({"deny": ["bash"]})

    assert names(tools, agent) == ["read", "grep"]


async def test_allow_and_deny_together_keep_the_allowed_ones_not_denied(tools: Context) -> None:
    agent = Agent("a")

    tools.scope(agent).tools.restrict({"allow": ["read", "bash"], "deny": ["bash"]})

    assert names(tools, agent) == ["read"]


async def test_an_empty_allow_list_hides_everything_inherited(tools: Context) -> None:
    agent = Agent("a")

    tools.scope(agent).tools.restrict({"allow": []})

    assert names(tools, agent) == []


async def test_restrictions_of_one_scope_intersect(tools: Context) -> None:
    agent = Agent("a")
    scoped = tools.scope(agent)

    scoped.tools.restrict({"allow": ["read", "bash"]})
    scoped.tools.restrict({"allow": ["bash", "grep"]})

    assert names(tools, agent) == ["bash"]


async def test_restrictions_along_a_chain_intersect(tools: Context) -> None:
    parent, child = Agent("parent"), Agent("child")
    scoped = tools.scope(parent)
    scoped.tools.restrict({"allow": ["read", "bash"]})

    scoped.scope(child).tools.restrict({"allow": ["bash", "grep"]})

    assert names(tools, parent) == ["read", "bash"]
    assert names(tools, child) == ["bash"]


async def test_a_scopes_own_tools_are_never_masked_by_its_own_restrictions(
    tools: Context,
) -> None:
    agent = Agent("a")
    scoped = tools.scope(agent)
    scoped.tools.register(raw_tool("mine"))

    scoped.tools.restrict({"allow": ["read"]})

    assert names(tools, agent) == ["read", "mine"]
    assert await run(tools, "mine", agent) == success_json("ok")


async def test_a_parents_own_tool_is_inherited_and_maskable_by_the_child(tools: Context) -> None:
    parent, child, sibling = Agent("parent"), Agent("child"), Agent("sibling")
    scoped = tools.scope(parent)
    scoped.tools.register(raw_tool("task"))
    scoped.tools.restrict({"allow": ["read"]})

    scoped.scope(child).tools.restrict({"deny": ["task"]})
    scoped.scope(sibling)

    assert names(tools, child) == ["read"]
    assert names(tools, sibling) == ["read", "task"]


async def test_a_masked_name_shadowed_below_the_mask_is_visible(tools: Context) -> None:
    parent, child = Agent("parent"), Agent("child")
    scoped = tools.scope(parent)
    scoped.tools.restrict({"deny": ["bash"]})
    nested = scoped.scope(child)

    nested.tools.register(raw_tool("bash", says("child bash")))

    assert await run(tools, "bash", parent) == error_json('unknown tool "bash"', *UNKNOWN)
    assert await run(tools, "bash", child) == success_json("child bash")


async def test_a_tool_registered_later_is_masked_by_an_allow_list(tools: Context) -> None:
    agent = Agent("a")
    tools.scope(agent).tools.restrict({"allow": ["read"]})

    tools.tools.register(raw_tool("web_fetch"))

    assert names(tools, agent) == ["read"]


async def test_removing_a_restriction_lifts_its_mask(tools: Context) -> None:
    agent = Agent("a")
    remove = tools.scope(agent).tools.restrict({"deny": ["bash"]})

    remove()

    assert names(tools, agent) == ["read", "bash", "grep"]


async def test_a_restriction_emits_tools_change(tools: Context) -> None:
    changes: list[str] = []
    tools.on("tools/change", lambda: changes.append("changed"))

    tools.scope(Agent("a")).tools.restrict({"deny": ["bash"]})()

    assert changes == ["changed", "changed"]


async def test_restrict_names_unknown_tools_with_the_known_ones(tools: Context) -> None:
    scoped = tools.scope(Agent("a"))

    with pytest.raises(ValueError) as refused:
        scoped.tools.restrict({"allow": ["read", "zeta", "alpha"], "deny": ["bash"]})

    assert str(refused.value) == (
        'tools.restrict() names unknown global tool(s) "alpha", "zeta"; '
        'known global tools: "bash", "grep", "read"'
    )


async def test_restrict_says_none_are_known_when_nothing_is_registered(ctx: Context) -> None:
    scoped = ctx.scope(Agent("a"))

    with pytest.raises(ValueError) as refused:
        scoped.tools.restrict({"deny": ["bash"]})

    assert str(refused.value) == (
        'tools.restrict() names unknown global tool(s) "bash"; known global tools: none'
    )


async def test_a_scopes_own_tool_is_not_a_name_it_can_restrict(tools: Context) -> None:
    scoped = tools.scope(Agent("a"))
    scoped.tools.register(raw_tool("mine"))

    with pytest.raises(ValueError) as refused:
        scoped.tools.restrict({"deny": ["mine"]})

    assert str(refused.value) == (
        'tools.restrict() names unknown global tool(s) "mine"; '
        'known global tools: "bash", "grep", "read"'
    )


@pytest.mark.parametrize("spec", [{}, {"deny": []}, {"allow": None}])
async def test_an_empty_restriction_is_refused_as_a_no_op(tools: Context, spec: Any) -> None:
    scoped = tools.scope(Agent("a"))

    with pytest.raises(ValueError) as refused:
        scoped.tools.restrict(spec)

    assert str(refused.value) == (
        'tools.restrict({}) is a no-op: pass {"allow": [...]} to keep only the listed inherited '
        'tools, or {"deny": [...]} to hide the listed ones'
    )


async def test_restrict_through_an_unscoped_context_is_refused(tools: Context) -> None:
    with pytest.raises(ValueError) as refused:
        tools.tools.restrict({"deny": ["bash"]})

    assert str(refused.value) == (
        "tools.restrict() requires a scoped context (agent.ctx): this context belongs to no "
        "agent; create one with ctx.scope(agent) and restrict through it"
    )


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        (["read"], 'tools.restrict() takes {"allow": [...], "deny": [...]}; got list'),
        (
            {"allw": ["read"]},
            'tools.restrict() takes {"allow": [...], "deny": [...]}; got unknown key(s) \'allw\'',
        ),
        (
            {"deny": "bash"},
            'tools.restrict() takes {"allow": [...], "deny": [...]}; got "deny": \'bash\' '
            "(a list of tool names is expected)",
        ),
        (
            {"allow": ["read", 3]},
            'tools.restrict() takes {"allow": [...], "deny": [...]}; got 3 in "allow" '
            "(tool names are strings)",
        ),
    ],
)
async def test_a_malformed_restriction_is_refused(tools: Context, spec: Any, text: str) -> None:
    scoped = tools.scope(Agent("a"))

    with pytest.raises(TypeError) as refused:
        scoped.tools.restrict(spec)

    assert str(refused.value) == text


async def test_run_code_cannot_be_denied(tools: Context) -> None:
    tools.tools.register(raw_tool("run_code"), reserved=True)
    scoped = tools.scope(Agent("a"))

    with pytest.raises(ValueError) as refused:
        scoped.tools.restrict({"deny": ["run_code"]})

    assert str(refused.value) == (
        'tools.restrict() cannot deny "run_code": the Code Mode transport is never '
        'restrictable; remove it from "deny"'
    )


async def test_an_allow_list_never_hides_run_code(tools: Context) -> None:
    tools.tools.register(raw_tool("run_code", says("ran code")), reserved=True)
    agent = Agent("a")

    tools.scope(agent).tools.restrict({"allow": ["read"]})

    assert tools.tools.names(agent) == ["read", "run_code"]
    assert await run(tools, "run_code", agent) == success_json("ran code")


# -- hidden tools --------------------------------------------------------------------------------


async def test_a_filtered_tool_is_absent_from_the_agents_schemas(tools: Context) -> None:
    agent = Agent("a")

    tools.scope(agent).tools.restrict({"deny": ["bash"]})

    assert "bash" not in names(tools, agent)
    assert tools.tools.get("bash", agent) is None


async def test_a_call_to_a_filtered_tool_is_unknown_and_never_runs(tools: Context) -> None:
    agent = Agent("a")
    ran: list[str] = []
    tools.scope(agent).tools.register(raw_tool("probe", lambda args, exec: ran.append("probe")))
    child = Agent("child")
    tools.scope(child).tools.restrict({"allow": ["read"]})

    assert await run(tools, "bash", child) == error_json('unknown tool "bash"', *UNKNOWN)
    assert await run(tools, "probe", child) == error_json('unknown tool "probe"', *UNKNOWN)
    assert ran == []


async def test_a_filtered_tool_is_scheduled_exclusive(tools: Context) -> None:
    agent = Agent("a")
    tools.tools.register(raw_tool("look", is_concurrency_safe=lambda args: True))
    tools.scope(agent).tools.restrict({"allow": ["read"]})

    assert tools.tools.execution_mode(call("look")) == "parallel"
    assert tools.tools.execution_mode(call("look", agent=agent)) == "exclusive"


async def test_a_call_created_in_a_scope_disposed_before_dispatch_is_unknown(
    tools: Context,
) -> None:
    agent = Agent("a")
    scoped = tools.scope(agent)
    scoped.tools.restrict({"deny": ["bash"]})
    prepared = await tools.tools.runtime.prepare(call("read", agent=agent))

    await scoped.dispose()
    dispatched = await tools.tools.runtime.dispatch(prepared.call)
    final = tools.tools.runtime.finish(prepared.call, dispatched.result)

    assert final.to_json() == error_json('unknown tool "read"', *UNKNOWN)


# -- guards --------------------------------------------------------------------------------------


async def test_a_scoped_guard_sees_only_its_agents_and_descendants_calls(tools: Context) -> None:
    parent, child, other = Agent("parent"), Agent("child"), Agent("other")
    scoped = tools.scope(parent)
    scoped.tools.guard(lambda exec: "parent says no")
    scoped.scope(child)
    tools.scope(other)

    assert await run(tools, "read", parent) == denied_json("parent says no")
    assert await run(tools, "read", child) == denied_json("parent says no")
    assert await run(tools, "read", other) == success_json("global read")
    assert await run(tools, "read") == success_json("global read")


async def test_guards_run_global_first_then_the_chain_farthest_first(tools: Context) -> None:
    parent, child = Agent("parent"), Agent("child")
    seen: list[str] = []
    scoped = tools.scope(parent)
    nested = scoped.scope(child)
    nested.tools.guard(lambda exec: seen.append("child"))  # type: ignore[func-returns-value]
    scoped.tools.guard(lambda exec: seen.append("parent"))  # type: ignore[func-returns-value]
    tools.tools.guard(lambda exec: seen.append("global"))  # type: ignore[func-returns-value]

    await run(tools, "read", child)

    assert seen == ["global", "parent", "child"]


# -- listeners -----------------------------------------------------------------------------------


def observe(into: list[object]) -> Callable[[ToolExecution, ToolExecutionResult], None]:
    return lambda exec, result: into.append(exec.agent)


async def test_a_scoped_listener_sees_only_its_agents_and_descendants_calls(
    tools: Context,
) -> None:
    parent, child, other = Agent("parent"), Agent("child"), Agent("other")
    seen: list[object] = []
    scoped = tools.scope(parent)
    scoped.on("tools/result", observe(seen))
    scoped.scope(child)
    tools.scope(other)

    for agent in (parent, child, other, None):
        await run(tools, "read", agent)

    assert seen == [parent, child]


async def test_a_childs_listener_does_not_see_its_parents_calls(tools: Context) -> None:
    parent, child = Agent("parent"), Agent("child")
    seen: list[object] = []
    tools.scope(parent).scope(child).on("tools/result", observe(seen))

    await run(tools, "read", parent)
    await run(tools, "read", child)

    assert seen == [child]


async def test_a_global_listener_of_a_scope_sees_every_call(tools: Context) -> None:
    agent, other = Agent("a"), Agent("b")
    seen: list[object] = []
    tools.scope(agent).on("tools/result", observe(seen), global_=True)

    for each in (agent, other, None):
        await run(tools, "read", each)

    assert seen == [agent, other, None]


async def test_an_unscoped_listener_sees_every_call(tools: Context) -> None:
    agent = Agent("a")
    seen: list[object] = []
    tools.on("tools/result", observe(seen))
    tools.scope(agent).on("tools/result", lambda exec, result: None)

    for each in (agent, None):
        await run(tools, "read", each)

    assert seen == [agent, None]


async def test_a_scoped_pre_execute_listener_decides_only_its_agents_calls(
    tools: Context,
) -> None:
    agent = Agent("a")

    async def deny(exec: ToolExecution, next: Any) -> Deny:
        return Deny("scoped policy")

    tools.scope(agent).on("tools/pre-execute", deny)

    assert await run(tools, "read", agent) == denied_json("scoped policy")
    assert await run(tools, "read", Agent("b")) == success_json("global read")


async def test_a_scoped_tools_execute_wrapper_wraps_only_its_agents_calls(tools: Context) -> None:
    agent = Agent("a")
    wrapped: list[object] = []

    async def around(exec: ToolExecution, next: Any) -> Any:
        wrapped.append(exec.agent)
        return await next()

    tools.scope(agent).on("tools/execute", around)
    await run(tools, "read", agent)
    await run(tools, "read")

    assert wrapped == [agent]


async def test_tools_change_reaches_scoped_listeners(tools: Context) -> None:
    changes: list[str] = []
    tools.scope(Agent("a")).on("tools/change", lambda: changes.append("changed"))

    tools.tools.register(raw_tool("web_fetch"))

    assert changes == ["changed"]


async def test_a_dispatch_for_an_agent_admits_its_scopes_listeners(ctx: Context) -> None:
    agent = Agent("a")
    heard: list[str] = []
    ctx.on("agent/status", lambda: heard.append("root"))
    ctx.scope(agent).on("agent/status", lambda: heard.append("scoped"))

    ctx.emit("agent/status", agent=None)
    ctx.emit("agent/status", agent=agent)
    ctx.emit("agent/status")

    assert heard == ["root", "root", "scoped", "root", "scoped"]


# -- disposal ------------------------------------------------------------------------------------


async def test_disposing_a_scope_removes_its_tools_guards_restrictions_and_listeners(
    tools: Context,
) -> None:
    agent = Agent("a")
    seen: list[object] = []
    scoped = tools.scope(agent)
    scoped.tools.register(raw_tool("read", says("scoped read")))
    scoped.tools.register(raw_tool("mine"))
    scoped.tools.guard(lambda exec: "no grep" if exec.name == "grep" else None)
    scoped.tools.restrict({"deny": ["bash"]})
    scoped.on("tools/result", observe(seen))

    await scoped.dispose()

    assert await run(tools, "read", agent) == success_json("global read")
    assert await run(tools, "mine", agent) == error_json('unknown tool "mine"', *UNKNOWN)
    assert await run(tools, "grep", agent) == success_json("global grep")
    assert await run(tools, "bash", agent) == success_json("global bash")
    assert seen == []


async def test_disposing_a_scope_twice_is_harmless(ctx: Context) -> None:
    scoped = ctx.scope(Agent("a"))
    scoped.tools.register(raw_tool("mine"))

    await scoped.dispose()
    await scoped.dispose()

    assert ctx.tools.names() == []


async def test_a_disposed_scope_accepts_no_registrations(ctx: Context) -> None:
    scoped = ctx.scope(Agent("a"))
    await scoped.dispose()

    with pytest.raises(PluginError) as refused:
        scoped.tools.register(raw_tool("mine"))

    assert str(refused.value) == (
        "the scope of agent Agent('a') is disposed; it accepts no new registrations"
    )


async def test_disposing_a_scope_disposes_its_child_scopes(tools: Context) -> None:
    parent, child = Agent("parent"), Agent("child")
    scoped = tools.scope(parent)
    scoped.scope(child).tools.restrict({"deny": ["bash"]})

    await scoped.dispose()

    assert names(tools, child) == ["read", "bash", "grep"]
    assert tools.scope(child).agent is child


async def test_disposing_the_plugin_that_made_a_scope_disposes_the_scope(ctx: Context) -> None:
    agent = Agent("a")

    class Owner:
        name = "owner"
        inject = ("tools",)

        @staticmethod
        def apply(plugin_ctx: Context) -> None:
            plugin_ctx.scope(agent).tools.register(raw_tool("mine"))

    handle = await ctx.plugin(Owner)
    assert ctx.tools.names(agent) == ["mine"]

    await handle.dispose()

    assert ctx.tools.names(agent) == []
    assert ctx.scope(agent).agent is agent


async def test_a_plugin_mounted_through_a_scope_registers_into_that_scope(ctx: Context) -> None:
    agent = Agent("a")

    class Plugged:
        name = "plugged"
        inject = ("tools",)

        @staticmethod
        def apply(plugin_ctx: Context) -> None:
            plugin_ctx.tools.register(raw_tool("mine"))

    scoped = ctx.scope(agent)
    await scoped.plugin(Plugged)
    assert ctx.tools.names(agent) == ["mine"]
    assert ctx.tools.names() == []

    await scoped.dispose()

    assert ctx.tools.names(agent) == []


def table_sizes(ctx: Context) -> dict[str, int]:
    """Every registry and listener table a scope could leave something in."""
    runtime = ctx.tools.runtime
    events = ctx._events
    return {
        "tools": len(runtime._tools),
        "layers": len(runtime._layers),
        "schema cache": len(runtime._schemas),
        "global guards": len(runtime._guards.fns),
        "live guards": runtime._live_guards,
        "agent scopes": len(ctx._agents),
        "root effects": len(ctx._scope._effects),
        "listener records": sum(len(records) for records in events._records.values()),
        "events": len(events.by_name),
        "untagged events": len(events.untagged),
        "tagged events": len(events._tagged),
        "tools viewers": len(ctx._services["tools"].viewers),
    }


async def test_ten_thousand_scopes_leave_every_table_as_it_was(tools: Context) -> None:
    tools.on("tools/result", lambda exec, result: None)
    tools.tools.schemas()  # the global tools' schemas are cached once, and stay
    before = table_sizes(tools)

    for index in range(10_000):
        agent = Agent(str(index))
        scoped = tools.scope(agent)
        scoped.tools.register(raw_tool("mine"))
        scoped.tools.guard(lambda exec: None)
        scoped.tools.restrict({"deny": ["bash"]})
        scoped.on("tools/result", lambda exec, result: None)
        if index % 1_000 == 0:
            assert await run(tools, "mine", agent) == success_json("ok")
            tools.tools.schemas(agent)
        await scoped.dispose()

    assert table_sizes(tools) == before


# -- run_code ------------------------------------------------------------------------------------


async def test_run_code_is_refused_without_the_reservation(ctx: Context) -> None:
    with pytest.raises(ValueError) as refused:
        ctx.tools.register(raw_tool("run_code"))

    assert str(refused.value) == (
        'tool name "run_code" is reserved for the Code Mode presentation transport and cannot be '
        "registered or shadowed; only tether.plugins.code_mode registers it"
    )
    assert ctx.tools.get("run_code") is None


async def test_a_scope_can_never_register_run_code(ctx: Context) -> None:
    ctx.tools.register(raw_tool("run_code"), reserved=True)
    scoped = ctx.scope(Agent("a"))

    with pytest.raises(ValueError) as refused:
        scoped.tools.register(raw_tool("run_code"), reserved=True)

    assert str(refused.value) == (
        'tool name "run_code" is reserved for the Code Mode presentation transport and cannot be '
        "registered or shadowed"
    )


async def test_the_reservation_is_only_for_run_code(ctx: Context) -> None:
    with pytest.raises(ValueError) as refused:
        ctx.tools.register(raw_tool("echo"), reserved=True)

    assert str(refused.value) == (
        'register(reserved=True) is only for the Code Mode tool "run_code"; register "echo" '
        "without it"
    )


def test_only_the_code_mode_plugin_claims_the_reservation() -> None:
    src = Path(__file__).resolve().parents[2] / "src" / "tether"
    claims = sorted(
        str(path.relative_to(src))
        for path in src.rglob("*.py")
        if path.parent != src / "tools" and re.search(r"reserved=True", path.read_text())
    )

    assert claims == ["plugins/code_mode/plugin.py"]
