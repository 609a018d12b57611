"""Context services and ownership (CONTRACT §3).

Contract: `Context()` is a bare root. One provider per service name; `ctx.get(name)` is None when
absent and `ctx.<name>` raises an AttributeError that says what to mount. A service with
`__tether_bind__(ctx)` is seen from each context as its bound view, built once per context. Every
registration made through a context (`on`, `provide`, `effect`) is owned by that context's plugin
and undone when it is disposed; `effect()` returns an idempotent remover.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import SimpleNamespace

import pytest

from tether.kernel import Context, PluginError, PluginState


class Registry:
    """A service whose bound view records registrations on the caller's scope."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.binds: list[Context] = []

    def __tether_bind__(self, ctx: Context) -> RegistryView:
        self.binds.append(ctx)
        return RegistryView(self, ctx)


class RegistryView:
    def __init__(self, registry: Registry, ctx: Context) -> None:
        self.registry = registry
        self.ctx = ctx

    def register(self, item: str) -> Callable[[], None]:
        self.registry.items.append(item)
        return self.ctx.effect(lambda: self.registry.items.remove(item))


def plugin(name: str, apply: Callable[..., object], inject: tuple[str, ...] = ()) -> object:
    return SimpleNamespace(name=name, apply=apply, inject=inject)


def test_a_bare_context_has_no_services_and_nothing_pending() -> None:
    ctx = Context()
    assert ctx.get("tools") is None
    assert ctx.pending() == []
    assert repr(ctx) == "<Context of the root context>"


def test_a_provided_service_is_reachable_by_get_and_attribute() -> None:
    ctx = Context()
    service = object()
    ctx.provide("shell", service)
    assert ctx.get("shell") is service
    assert ctx.shell is service


def test_a_missing_tools_service_says_which_plugin_to_mount() -> None:
    with pytest.raises(AttributeError) as caught:
        _ = Context().tools
    assert str(caught.value) == (
        'no service "tools" on this context; mount the plugin that provides it'
        " (e.g. await ctx.plugin(ToolRuntime))"
    )


def test_a_missing_service_attribute_raises_attribute_error() -> None:
    ctx = Context()
    with pytest.raises(AttributeError) as caught:
        _ = ctx.shell
    assert str(caught.value) == (
        'no service "shell" on this context; mount the plugin that provides it'
    )
    assert not hasattr(ctx, "_private")


async def test_providing_a_taken_name_names_the_current_provider() -> None:
    ctx = Context()
    await ctx.plugin(plugin("x", lambda c: c.provide("tools", object())))
    with pytest.raises(PluginError) as caught:
        ctx.provide("tools", object())
    assert str(caught.value) == 'service "tools" is already provided by plugin "x"'


def test_providing_a_taken_name_from_the_root_names_the_root() -> None:
    ctx = Context()
    ctx.provide("tools", object())
    with pytest.raises(
        PluginError, match=r'^service "tools" is already provided by the root context$'
    ):
        ctx.provide("tools", object())


@pytest.mark.parametrize("name", ["", "_hidden", "emit", "plugin"])
def test_service_names_that_could_not_be_reached_are_refused(name: str) -> None:
    with pytest.raises(PluginError, match="cannot be a service name"):
        Context().provide(name, object())


def test_the_provide_remover_withdraws_the_service_once() -> None:
    ctx = Context()
    first = object()
    withdraw = ctx.provide("shell", first)
    withdraw()
    second = object()
    ctx.provide("shell", second)
    withdraw()
    assert ctx.get("shell") is second


def test_a_bound_view_is_built_once_per_context() -> None:
    ctx = Context()
    registry = Registry()
    ctx.provide("registry", registry)
    view = ctx.registry
    assert isinstance(view, RegistryView)
    assert view.ctx is ctx
    assert ctx.registry is view
    assert ctx.get("registry") is view
    assert registry.binds == [ctx]


async def test_each_plugin_context_gets_its_own_bound_view() -> None:
    root = Context()
    registry = Registry()
    root.provide("registry", registry)
    views: list[object] = []
    await root.plugin(plugin("a", lambda c: views.append(c.registry)))
    await root.plugin(plugin("b", lambda c: views.append(c.registry)))
    assert views[0] is not views[1]
    assert [view.ctx for view in views if isinstance(view, RegistryView)] == registry.binds[:2]


async def test_a_registration_through_a_bound_view_is_owned_by_the_calling_plugin() -> None:
    root = Context()
    registry = Registry()
    root.provide("registry", registry)
    handle = await root.plugin(plugin("a", lambda c: c.registry.register("a-item")))
    root.registry.register("root-item")
    assert registry.items == ["a-item", "root-item"]
    await handle.dispose()
    assert registry.items == ["root-item"]


def test_a_reprovided_service_gets_a_fresh_view() -> None:
    ctx = Context()
    withdraw = ctx.provide("registry", Registry())
    old_view = ctx.registry
    withdraw()
    ctx.provide("registry", Registry())
    assert ctx.registry is not old_view


async def test_effect_remover_runs_the_disposer_once_and_unrecords_it() -> None:
    ctx = Context()
    calls: list[str] = []
    remove = ctx.effect(lambda: calls.append("disposed"))
    remove()
    remove()
    await ctx.dispose()
    assert calls == ["disposed"]


async def test_an_async_disposer_run_by_its_remover_is_awaited_at_dispose() -> None:
    ctx = Context()
    log: list[str] = []
    release = asyncio.Event()

    async def disposer() -> None:
        await release.wait()
        log.append("async disposer done")

    ctx.effect(lambda: log.append("recorded earlier"))
    remove = ctx.effect(disposer)
    remove()
    release.set()
    await ctx.dispose()
    assert log == ["async disposer done", "recorded earlier"]


async def test_a_disposed_context_refuses_new_registrations() -> None:
    ctx = Context()
    await ctx.dispose()
    with pytest.raises(PluginError, match=r"^the root context is disposed; it accepts no new"):
        ctx.on("e", print)
    with pytest.raises(PluginError, match="is disposed"):
        await ctx.plugin(plugin("late", lambda c: None))


async def test_a_plugin_context_refuses_registrations_after_its_plugin_is_disposed() -> None:
    root = Context()
    kept: list[Context] = []
    handle = await root.plugin(plugin("a", kept.append))
    await handle.dispose()
    with pytest.raises(PluginError, match=r'^plugin "a" is disposed; it accepts no new'):
        kept[0].provide("late", object())
    assert root.get("late") is None


async def test_an_effect_recorded_on_a_disposed_context_runs_at_once_and_raises() -> None:
    ctx = Context()
    await ctx.dispose()
    calls: list[str] = []
    with pytest.raises(PluginError):
        ctx.effect(lambda: calls.append("undone"))
    assert calls == ["undone"]


async def test_a_plugin_context_shares_the_roots_services_and_events() -> None:
    root = Context()
    root.provide("shell", "the shell")
    seen: list[object] = []

    def apply(c: Context) -> None:
        seen.append(c.shell)
        c.on("e", seen.append)

    handle = await root.plugin(plugin("a", apply))
    root.emit("e", "emitted at the root")
    assert seen == ["the shell", "emitted at the root"]
    assert handle.state is PluginState.APPLIED


async def test_disposing_a_plugin_context_disposes_its_plugin() -> None:
    root = Context()
    kept: list[Context] = []

    def apply(ctx: Context) -> None:
        kept.append(ctx)
        ctx.on("e", print)

    handle = await root.plugin(plugin("a", apply))
    await kept[0].dispose()
    assert handle.state is PluginState.DISPOSED
    assert root.listeners("e") == ()
