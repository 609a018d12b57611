"""Agent scopes in the kernel: scoped contexts, their ownership, and scope-filtered dispatch
(spec tool-runtime §7.5, §8 items 16–17).

Contract: `ctx.scope(agent)` is a context whose registrations (listeners, effects, services,
plugins) belong to the agent's scope and are undone, LIFO, by `await scoped.dispose()`. A
listener registered through it is tagged with the scope: a dispatch with `agent=` admits it only
for that agent or a descendant; a dispatch with `agent=None` admits untagged listeners only; a
dispatch without `agent=` is unfiltered. `global_=True` registers an untagged listener the scope
still owns.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tether.kernel import Context


class Agent:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Agent({self.name!r})"


def test_a_scoped_context_says_whose_scope_it_is() -> None:
    root = Context()

    scoped = root.scope(Agent("a"))

    assert repr(scoped) == "<Context of the scope of agent Agent('a')>"


def test_listeners_for_an_agent_are_its_scopes_its_ancestors_and_the_untagged_ones() -> None:
    root = Context()
    parent, child = Agent("parent"), Agent("child")
    scoped = root.scope(parent)
    nested = scoped.scope(child)

    def untagged() -> None: ...
    def for_parent() -> None: ...
    def for_child() -> None: ...
    def everywhere() -> None: ...

    root.on("e", untagged)
    scoped.on("e", for_parent)
    nested.on("e", for_child)
    nested.on("e", everywhere, global_=True)

    assert root.listeners("e") == (untagged, for_parent, for_child, everywhere)
    assert root.listeners("e", agent=None) == (untagged, everywhere)
    assert root.listeners("e", agent=parent) == (untagged, for_parent, everywhere)
    assert root.listeners("e", agent=child) == (untagged, for_parent, for_child, everywhere)
    assert root.listeners("e", agent=Agent("unscoped")) == (untagged, everywhere)


async def test_a_waterfall_for_an_agent_skips_other_scopes_listeners() -> None:
    root = Context()
    agent = Agent("a")

    async def wrap(value: list[str], next: Callable[[], Awaitable[str]]) -> str:
        return "wrapped " + await next()

    root.scope(agent).on("e", wrap)

    async def base() -> str:
        return "base"

    assert await root.waterfall("e", [], base=base, agent=agent) == "wrapped base"
    assert await root.waterfall("e", [], base=base, agent=Agent("b")) == "base"


async def test_disposing_a_scope_undoes_its_effects_last_first() -> None:
    root = Context()
    undone: list[str] = []
    scoped = root.scope(Agent("a"))
    scoped.effect(lambda: undone.append("first"))
    scoped.effect(lambda: undone.append("second"))

    await scoped.dispose()

    assert undone == ["second", "first"]


async def test_a_service_provided_through_a_scope_is_withdrawn_with_it() -> None:
    root = Context()
    scoped = root.scope(Agent("a"))
    scoped.provide("notes", object())

    await scoped.dispose()

    assert root.get("notes") is None


async def test_disposing_the_root_disposes_its_scopes() -> None:
    root = Context()
    undone: list[str] = []
    root.scope(Agent("a")).effect(lambda: undone.append("scope"))

    await root.dispose()

    assert undone == ["scope"]
