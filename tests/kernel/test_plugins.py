"""Plugins: shapes, config, ownership, disposal, services, `inject` (CONTRACT §3).

Contract: a plugin is an object or module with `name`, optional `inject` and `Config`, and
`apply(ctx, config)` (or `apply(ctx)`), sync or async; or a `Service` subclass. `apply` gets a
child context whose registrations the plugin owns; `PluginHandle.dispose()` undoes them LIFO,
awaiting async disposers one after another, logging (and surviving) a raising disposer. A plugin
mounted from another plugin's context is disposed with it; `Context.dispose()` disposes every
plugin, LIFO. A plugin whose injected services are missing waits and is applied, in mount order,
once the last one is provided; it is disposed when one of them is withdrawn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from types import SimpleNamespace

import pytest
from pydantic import BaseModel, ConfigDict

from tether.kernel import (
    Context,
    InvalidPluginConfig,
    PluginError,
    PluginHandle,
    PluginState,
    Service,
)


def plugin(name: str, apply: Callable[..., object], inject: tuple[str, ...] = ()) -> object:
    return SimpleNamespace(name=name, apply=apply, inject=inject)


class Web:
    name = "web"

    class Config(BaseModel):
        model_config = ConfigDict(extra="forbid")
        fetch_timeout_ms: int = 30_000

    received: list[object] = []

    @classmethod
    def apply(cls, ctx: Context, config: Config) -> None:
        cls.received.append(config)


# -- shapes and config -----------------------------------------------------------------------------


async def test_apply_receives_a_child_context_and_none_without_a_config_model() -> None:
    root = Context()
    seen: list[object] = []
    await root.plugin(plugin("p", lambda ctx, config: seen.extend([ctx, config])))
    assert isinstance(seen[0], Context)
    assert seen[0] is not root
    assert seen[1] is None


async def test_apply_may_take_only_the_context() -> None:
    seen: list[Context] = []
    handle = await Context().plugin(plugin("p", seen.append))
    assert len(seen) == 1
    assert handle.applied


async def test_an_async_apply_is_awaited_before_plugin_returns() -> None:
    log: list[str] = []

    async def apply(ctx: Context) -> None:
        await asyncio.sleep(0)
        log.append("applied")

    await Context().plugin(plugin("p", apply))
    assert log == ["applied"]


async def test_a_config_model_validates_and_apply_receives_the_instance() -> None:
    Web.received.clear()
    await Context().plugin(Web, {"fetch_timeout_ms": "250"})
    assert Web.received == [Web.Config(fetch_timeout_ms=250)]


async def test_an_invalid_config_value_fails_the_mount_with_one_line() -> None:
    with pytest.raises(InvalidPluginConfig) as caught:
        await Context().plugin(Web, {"fetch_timeout_ms": "soon"})
    assert str(caught.value) == (
        'plugin "web": config.fetch_timeout_ms: Input should be a valid integer, got "soon"'
    )
    assert caught.value.detail.startswith("config.fetch_timeout_ms: ")


async def test_config_for_a_plugin_without_a_config_model_is_an_error() -> None:
    with pytest.raises(InvalidPluginConfig) as caught:
        await Context().plugin(plugin("p", print), {"a": 1})
    assert str(caught.value) == (
        'plugin "p": config: this plugin takes no config (it has no Config model), got "a"'
    )


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (object(), "is not a plugin: it needs a non-empty `name` string"),
        (SimpleNamespace(name="p"), 'plugin "p" has no apply(ctx, config) function'),
        (SimpleNamespace(name="p", apply=print, inject="tools"), "inject must be a list"),
        (
            SimpleNamespace(name="p", apply=lambda ctx: None, Config=BaseModel),
            "declares a Config model, so apply must accept (ctx, config)",
        ),
        (SimpleNamespace(name="p", apply=print, Config=dict), "Config must be a pydantic"),
    ],
)
async def test_a_malformed_plugin_is_refused_with_what_is_wrong(
    candidate: object, message: str
) -> None:
    with pytest.raises(PluginError) as caught:
        await Context().plugin(candidate)
    assert message in str(caught.value)


# -- ownership and disposal ------------------------------------------------------------------------


async def test_dispose_undoes_registrations_in_reverse_order_awaiting_each() -> None:
    log: list[str] = []

    async def slow(label: str) -> None:
        log.append(f"{label} start")
        await asyncio.sleep(0)
        log.append(f"{label} end")

    def apply(ctx: Context) -> None:
        ctx.effect(lambda: slow("first"))
        ctx.effect(lambda: log.append("second"))
        ctx.effect(lambda: slow("third"))

    handle = await Context().plugin(plugin("p", apply))
    await handle.dispose()
    assert log == ["third start", "third end", "second", "first start", "first end"]
    assert handle.state is PluginState.DISPOSED


async def test_dispose_removes_the_plugins_listeners_and_services() -> None:
    root = Context()

    def apply(ctx: Context) -> None:
        ctx.on("e", print)
        ctx.provide("shell", "a shell")

    handle = await root.plugin(plugin("p", apply))
    await handle.dispose()
    assert root.listeners("e") == ()
    assert root.get("shell") is None


async def test_a_raising_disposer_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[str] = []

    def fails() -> None:
        raise RuntimeError("disposer broke")

    def apply(ctx: Context) -> None:
        ctx.effect(lambda: log.append("first"))
        ctx.effect(fails)
        ctx.effect(lambda: log.append("last"))

    handle = await Context().plugin(plugin("p", apply))
    with caplog.at_level(logging.WARNING, logger="tether.kernel"):
        await handle.dispose()
    assert log == ["last", "first"]
    [record] = caplog.records
    assert record.name == "tether.kernel"
    assert record.levelno == logging.WARNING
    assert record.getMessage().startswith('plugin "p": disposer ')
    assert record.exc_info is not None
    assert str(record.exc_info[1]) == "disposer broke"


async def test_dispose_is_idempotent() -> None:
    log: list[str] = []
    handle = await Context().plugin(plugin("p", lambda ctx: ctx.effect(lambda: log.append("x"))))
    await handle.dispose()
    await handle.dispose()
    assert log == ["x"]


async def test_concurrent_disposals_both_wait_for_the_one_disposal() -> None:
    log: list[str] = []
    release = asyncio.Event()

    async def disposer() -> None:
        await release.wait()
        log.append("disposed")

    handle = await Context().plugin(plugin("p", lambda ctx: ctx.effect(disposer)))
    first = asyncio.ensure_future(handle.dispose())
    second = asyncio.ensure_future(handle.dispose())
    await asyncio.sleep(0)
    assert not second.done()
    release.set()
    await asyncio.gather(first, second)
    assert log == ["disposed"]


async def test_a_failing_apply_undoes_what_it_registered_and_propagates() -> None:
    root = Context()
    log: list[str] = []

    def apply(ctx: Context) -> None:
        ctx.on("e", print)
        ctx.effect(lambda: log.append("undone"))
        raise RuntimeError("apply broke")

    with pytest.raises(RuntimeError) as caught:
        await root.plugin(plugin("p", apply))
    assert str(caught.value) == "apply broke"
    assert caught.value.__notes__ == ['while applying plugin "p"']
    assert log == ["undone"]
    assert root.listeners("e") == ()


async def test_a_plugin_mounted_by_a_plugin_is_disposed_with_it() -> None:
    root = Context()
    log: list[str] = []

    async def outer(ctx: Context) -> None:
        ctx.effect(lambda: log.append("outer"))
        await ctx.plugin(plugin("inner", lambda c: c.effect(lambda: log.append("inner"))))
        ctx.effect(lambda: log.append("outer after inner"))

    handle = await root.plugin(plugin("outer", outer))
    await handle.dispose()
    assert log == ["outer after inner", "inner", "outer"]


async def test_root_dispose_disposes_every_plugin_last_mounted_first() -> None:
    root = Context()
    log: list[str] = []
    handles: list[PluginHandle] = []

    def logs(name: str) -> Callable[[Context], None]:
        def apply(ctx: Context) -> None:
            ctx.effect(lambda: log.append(name))

        return apply

    for name in ("a", "b", "c"):
        handles.append(await root.plugin(plugin(name, logs(name))))
    await handles[1].dispose()
    await root.dispose()
    assert log == ["b", "c", "a"]
    assert [handle.state for handle in handles] == [PluginState.DISPOSED] * 3


# -- services --------------------------------------------------------------------------------------


class Shell(Service):
    name = "shell"
    log: list[str] = []

    class Config(BaseModel):
        shell: str = "/bin/sh"

    def __init__(self, ctx: Context, config: Config) -> None:
        super().__init__(ctx, config)
        self.shell = config.shell
        ctx.effect(lambda: Shell.log.append("constructor registration undone"))

    async def start(self) -> None:
        Shell.log.append(f"start, provided: {self.ctx.get('shell') is not None}")

    async def stop(self) -> None:
        Shell.log.append(f"stop, provided: {self.ctx.get('shell') is not None}")


async def test_a_service_is_constructed_started_and_provided_under_its_name() -> None:
    Shell.log.clear()
    root = Context()
    handle = await root.plugin(Shell, {"shell": "/bin/bash"})
    assert isinstance(root.shell, Shell)
    assert root.shell.shell == "/bin/bash"
    assert Shell.log == ["start, provided: False"]
    assert handle.name == "shell"
    assert handle.plugin is Shell


async def test_a_disposed_service_is_withdrawn_then_stopped() -> None:
    Shell.log.clear()
    root = Context()
    handle = await root.plugin(Shell)
    await handle.dispose()
    assert root.get("shell") is None
    assert Shell.log == [
        "start, provided: False",
        "stop, provided: False",
        "constructor registration undone",
    ]


async def test_a_second_provider_of_a_service_fails_its_mount() -> None:
    root = Context()
    await root.plugin(Shell)
    with pytest.raises(PluginError) as caught:
        await root.plugin(Shell)
    assert str(caught.value) == 'service "shell" is already provided by plugin "shell"'
    assert caught.value.__notes__ == ['while applying plugin "shell"']


# -- inject ----------------------------------------------------------------------------------------


async def test_a_plugin_waits_for_its_injected_services() -> None:
    root = Context()
    applied: list[object] = []
    handle = await root.plugin(plugin("policy", lambda ctx: applied.append(ctx.tools), ("tools",)))
    assert not handle.applied
    assert handle.state is PluginState.WAITING
    assert handle.missing == ("tools",)
    assert root.pending() == [("policy", ("tools",))]
    root.provide("tools", "the tools")
    await handle.ready()
    assert handle.applied
    assert applied == ["the tools"]
    assert root.pending() == []


async def test_waiting_plugins_apply_in_mount_order_once_the_last_service_appears() -> None:
    root = Context()
    log: list[str] = []
    first = await root.plugin(plugin("first", lambda c: log.append("first"), ("a", "b")))
    second = await root.plugin(plugin("second", lambda c: log.append("second"), ("b",)))
    root.provide("a", 1)
    assert root.pending() == [("first", ("b",)), ("second", ("b",))]
    root.provide("b", 2)
    await second.ready()
    await first.ready()
    assert log == ["first", "second"]


async def test_mounting_the_provider_applies_waiting_plugins_before_it_returns() -> None:
    root = Context()
    handle = await root.plugin(plugin("policy", lambda ctx: None, ("shell",)))
    await root.plugin(Shell)
    assert handle.applied


async def test_withdrawing_a_service_disposes_the_plugins_that_inject_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    root = Context()
    shell = await root.plugin(Shell)
    dependent = await root.plugin(plugin("uses-shell", lambda ctx: ctx.on("e", print), ("shell",)))
    with caplog.at_level(logging.INFO, logger="tether.kernel"):
        await shell.dispose()
    assert dependent.state is PluginState.DISPOSED
    assert root.listeners("e") == ()
    assert [record.getMessage() for record in caplog.records] == [
        'disposing plugin "uses-shell": service "shell" it injects was withdrawn'
    ]


async def test_ready_raises_when_the_waiting_plugin_is_disposed() -> None:
    handle = await Context().plugin(plugin("policy", print, ("tools",)))
    waiter = asyncio.ensure_future(handle.ready())
    await handle.dispose()
    with pytest.raises(PluginError, match=r'^plugin "policy" is disposed$'):
        await waiter


async def test_a_deferred_apply_that_fails_is_logged_and_ready_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    root = Context()

    def apply(ctx: Context) -> None:
        raise ValueError("late failure")

    handle = await root.plugin(plugin("policy", apply, ("tools",)))
    with caplog.at_level(logging.ERROR, logger="tether.kernel"):
        root.provide("tools", "the tools")
        with pytest.raises(PluginError, match=r'^plugin "policy" failed to apply: late failure$'):
            await handle.ready()
    assert handle.state is PluginState.FAILED
    assert isinstance(handle.error, ValueError)
    assert [record.getMessage() for record in caplog.records] == ['plugin "policy" failed to apply']


async def test_a_chain_of_waiting_plugins_is_applied_by_the_one_mount_that_unblocks_it() -> None:
    root = Context()
    second = await root.plugin(plugin("second", lambda c: None, ("middle",)))
    first = await root.plugin(plugin("first", lambda c: c.provide("middle", 1), ("shell",)))
    await root.plugin(Shell)
    assert (first.applied, second.applied) == (True, True)


async def test_a_deferred_plugin_may_mount_plugins_while_it_is_applied() -> None:
    root = Context()
    inner: list[PluginHandle] = []

    async def apply(ctx: Context) -> None:
        inner.append(await ctx.plugin(plugin("inner", lambda c: None)))

    outer = await root.plugin(plugin("outer", apply, ("shell",)))
    await root.plugin(Shell)
    assert outer.applied
    assert inner[0].applied
    await outer.dispose()
    assert inner[0].state is PluginState.DISPOSED


async def test_root_dispose_undoes_its_own_registrations_and_plugins_in_one_lifo_order() -> None:
    root = Context()
    log: list[str] = []
    root.effect(lambda: log.append("root first"))
    await root.plugin(plugin("p", lambda ctx: ctx.effect(lambda: log.append("plugin"))))
    root.effect(lambda: log.append("root last"))
    await root.dispose()
    assert log == ["root last", "plugin", "root first"]
