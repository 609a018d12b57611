"""The Context: services, events and plugins, as seen from one owner.

`Context()` is a bare root: it reads no config and mounts nothing. Each mounted plugin receives a
child context that shares the root's services, event table and plugins, but owns what is
registered through it: every `on()`, `provide()`, `effect()` and `plugin()` made through a
child is recorded on that plugin's scope and undone, LIFO, when the plugin is disposed.

Owns: the service table (one provider per name, bound views cached per context), the public
dispatch methods, and wiring mounts to the lifecycle. Does not own: listener storage and the
dispatch modes (events.py), disposer bookkeeping (scope.py), deferral and withdrawal
(lifecycle.py), the plugin shapes (plugins.py).

Agent scopes (spec §7.5): `ctx.scope(agent)` returns a *scoped* context for `agent` (any object,
compared by identity). What is registered through it — tools, guards, restrictions, listeners,
services, plugins, effects — is owned by that agent's scope and undone, LIFO, by
`await scoped.dispose()` (idempotent), or when whatever owns the context it was created from is
disposed. Its listeners carry the scope as a tag: a dispatch for an agent (the tool pipeline's
events, or `agent=` on the dispatch methods here) admits a tagged listener only when the agent's
scope is the tag's scope or one of its descendants; a dispatch without `agent=` is unfiltered;
`on(..., global_=True)` registers an untagged listener that the scope still owns.
`scoped.scope(child)` opens a child scope whose parent is `scoped`'s, so scopes chain. A plugin
mounted through a scoped context belongs to that scope, and so do its registrations. One agent
has at most one live scope per root context (a second `scope()` for it raises PluginError).
Disposal marks the scope closed before undoing anything, so nothing resolves through a scope that
is half torn down (see agent_scope.py).

Bound views: a service object with a method `__tether_bind__(ctx) -> object` is seen, from each
context, as `service.__tether_bind__(that_ctx)`, so `ctx.tools.register(...)` made through a
plugin's context is owned by that plugin. What a context has looked up is cached in its instance
`__dict__` (so `ctx.tools` is a plain attribute hit on the hot path) and evicted from every
context that cached it when the service is withdrawn.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final, TypeVar, overload

from . import events
from .agent_scope import AgentScope, AgentScopes, describe_agent
from .errors import PluginError
from .events import EventKey, EventTable, Listener
from .lifecycle import Lifecycle, PluginHandle
from .plugins import describe_plugin, validate_config
from .scope import Effect, Scope

__all__ = ["Context"]

T = TypeVar("T")
L = TypeVar("L", bound=Callable[..., object])

_MOUNT_HINTS: Final = {"tools": "ToolRuntime"}


class _Unfiltered:
    """The default of the dispatch methods' `agent`: no scope filtering at all."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<every listener>"


_UNFILTERED: Final = _Unfiltered()


@dataclass(frozen=True, slots=True, eq=False)
class _Provision:
    service: object
    provider: str  # the providing scope's label: 'plugin "x"' or 'the root context'
    bind: Callable[[Context], object] | None
    viewers: weakref.WeakSet[Context] = field(default_factory=weakref.WeakSet)  # who cached it


class Context:
    """A root context (`Context()`), or the context a mounted plugin receives."""

    __slots__ = (
        "__dict__",  # the service cache: name -> service or this context's bound view
        "__weakref__",
        "_agent",
        "_agents",
        "_events",
        "_handle",
        "_lifecycle",
        "_listeners",
        "_release",
        "_scope",
        "_services",
    )

    def __init__(self) -> None:
        self._services: dict[str, _Provision] = {}
        self._events = EventTable()
        self._listeners = self._events.by_name
        self._lifecycle = Lifecycle(self._services)
        self._scope = Scope("the root context")
        self._handle: PluginHandle | None = None
        self._agents = AgentScopes()  # the live agent scopes of this root, shared by its children
        self._agent: AgentScope | None = None  # the scope this context registers into
        self._release: Effect | None = None  # a scoped context: its record on its owner

    def _child(self, handle: PluginHandle | None, scope: Scope) -> Context:
        child = object.__new__(Context)
        child._services = self._services
        child._events = self._events
        child._listeners = self._listeners
        child._lifecycle = self._lifecycle
        child._scope = scope
        child._handle = handle
        child._agents = self._agents
        child._agent = self._agent
        child._release = None
        return child

    def __repr__(self) -> str:
        return f"<Context of {self._scope.label}>"

    # -- agent scopes --------------------------------------------------------------------------

    def scope(self, agent: object) -> Context:
        """A context for `agent`'s own scope (see the module note), owned by this context.

        Raises TypeError for `agent=None`, PluginError when this context is disposed or `agent`
        already has a live scope in this root.
        """
        self._scope.ensure_active()
        node = self._agents.open(agent, self._agent)
        owned = Scope(f"the scope of {describe_agent(agent)}")
        scoped = self._child(None, owned)
        scoped._agent = node
        owned.add(partial(self._agents.close, node))  # recorded first: undone last
        scoped._release = self._scope.add(scoped._dispose_scope)
        return scoped

    @property
    def agent(self) -> object | None:
        """The agent this context's scope belongs to; None for an unscoped context."""
        node = self._agent
        return None if node is None else node.key

    async def _dispose_scope(self) -> None:
        node = self._agent
        if node is not None:
            node.closed = True
        await self._scope.dispose()
        for provision in list(self._services.values()):
            provision.viewers.discard(self)
        self.__dict__.clear()

    # -- plugins -------------------------------------------------------------------------------

    async def plugin(
        self, plugin: object, config: Mapping[str, object] | object = None
    ) -> PluginHandle:
        """Mount `plugin`, owned by this context. Applies it now, or once its injects exist.

        Raises PluginError when it is not a plugin or this context is disposed,
        InvalidPluginConfig when `config` (a mapping, or already an instance of the plugin's
        `Config`, handed on as is) fails its `Config`, and whatever apply raised (the
        partial registrations undone first).
        """
        spec = describe_plugin(plugin)
        model = validate_config(spec, config)
        self._scope.ensure_active()
        handle = PluginHandle(spec, model, self._lifecycle, self._scope, self._child)
        try:
            await self._lifecycle.mount(handle)
        except Exception as error:
            error.add_note(f'while applying plugin "{spec.name}"')
            raise
        return handle

    def pending(self) -> list[tuple[str, tuple[str, ...]]]:
        """(plugin name, missing service names) for every plugin still waiting, mount order."""
        return self._lifecycle.pending()

    async def dispose(self) -> None:
        """Root: undo everything registered through it, plugins included, LIFO; it accepts no
        registrations afterwards. A plugin's context: dispose that plugin (`handle.dispose()`).
        A scoped context (`ctx.scope(agent)`): undo that agent's scope (idempotent).
        """
        if self._handle is not None:
            await self._handle.dispose()
        elif self._release is not None:
            self._release.discard()
            await self._dispose_scope()
        else:
            await self._scope.dispose()

    def effect(self, disposer: Callable[[], object]) -> Callable[[], None]:
        """Record `disposer` (sync or async) on this context's owner; returns its remover.

        The remover is idempotent: it runs the disposer once (an async one as a task the owner
        awaits when disposed), un-records it, and raises what a sync disposer raises. `effect`
        raises PluginError (after running the disposer) when the owner is already disposed.
        """
        return self._scope.add(disposer)

    # -- services ------------------------------------------------------------------------------

    def provide(self, name: str, service: object) -> Callable[[], None]:
        """Provide `service` as `ctx.<name>` / `ctx.get(name)` until the returned remover runs.

        Raises PluginError when the name is taken, reserved or empty, or the service is None.
        """
        if not name or name.startswith("_") or hasattr(Context, name):
            raise PluginError(
                f"{name!r} cannot be a service name: it is empty, private or a Context method"
            )
        if service is None:
            raise PluginError(f'service "{name}" cannot be None')
        self._scope.ensure_active()
        existing = self._services.get(name)
        if existing is not None:
            raise PluginError(f'service "{name}" is already provided by {existing.provider}')
        bind = None if isinstance(service, type) else getattr(service, "__tether_bind__", None)
        provision = _Provision(service, self._scope.label, bind)
        self._services[name] = provision
        remover = self._scope.add(partial(self._withdraw, name, provision))
        self._lifecycle.wake()
        return remover

    def _withdraw(self, name: str, provision: _Provision) -> Awaitable[None] | None:
        if self._services.get(name) is not provision:
            return None
        del self._services[name]
        for viewer in provision.viewers:
            viewer.__dict__.pop(name, None)
        return self._lifecycle.withdrawn(name)

    def get(self, name: str) -> object | None:
        """The service (or this context's bound view of it), None when nothing provides it."""
        cache: dict[str, object] = self.__dict__
        if name in cache:
            return cache[name]
        provision = self._services.get(name)
        if provision is None:
            return None
        view = provision.service if provision.bind is None else provision.bind(self)
        cache[name] = view
        provision.viewers.add(self)
        return view

    # Any, not object: services are declared by plugins at runtime, so `ctx.tools.register(...)`
    # must type-check without a cast (typed code can use `get()` and narrow instead).
    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        service = self.get(name)
        if service is None:
            hint = _MOUNT_HINTS.get(name)
            example = f" (e.g. await ctx.plugin({hint}))" if hint else ""
            raise AttributeError(
                f'no service "{name}" on this context; mount the plugin that provides it{example}'
            )
        return service

    # -- events --------------------------------------------------------------------------------

    @overload
    def on(
        self, event: EventKey[L], listener: L, *, prepend: bool = False, global_: bool = False
    ) -> Callable[[], None]: ...
    @overload
    def on(
        self,
        event: str,
        listener: Callable[..., object],
        *,
        prepend: bool = False,
        global_: bool = False,
    ) -> Callable[[], None]: ...
    def on(
        self,
        event: str | EventKey[L],
        listener: Listener,
        *,
        prepend: bool = False,
        global_: bool = False,
    ) -> Callable[[], None]:
        """Listen to `event` (after the others, or first with `prepend`); returns the remover.

        Through a scoped context the listener is tagged with the agent's scope (it sees only
        dispatches for that agent and its descendants, see the module note) unless `global_`.
        Raises UnknownEventError for a name that looks misspelt (events.check_event): it names
        the nearest known event and says how a plugin declares a new one.
        """
        self._scope.ensure_active()
        name = event if isinstance(event, str) else event.name
        events.check_event(name)
        tag = None if global_ else self._agent
        return self._scope.add(self._events.add(name, listener, prepend=prepend, tag=tag))

    def _admitted(self, name: str, agent: object) -> tuple[Listener, ...] | None:
        """`name`'s listeners for a dispatch on behalf of `agent` (`_UNFILTERED`: all)."""
        if agent is _UNFILTERED:
            return self._listeners.get(name)
        table = self._events
        scope = None if agent is None else self._agents.lookup(agent)
        if scope is None:
            return table.untagged.get(name)
        return table.filtered(name, scope) or None

    def listeners(
        self, event: str | EventKey[L], *, agent: object = _UNFILTERED
    ) -> tuple[Listener, ...]:
        """A snapshot of `event`'s listeners in dispatch order (for custom containment); with
        `agent=`, only those a dispatch on behalf of that agent admits (None: no agent)."""
        name = event if isinstance(event, str) else event.name
        return self._admitted(name, agent) or ()

    def emit(self, event: str | EventKey[L], *args: object, agent: object = _UNFILTERED) -> None:
        """Call listeners synchronously; no containment (see events.emit). `agent=` filters by
        scope (see the module note)."""
        name = event if isinstance(event, str) else event.name
        listeners = (
            self._listeners.get(name) if agent is _UNFILTERED else self._admitted(name, agent)
        )
        if listeners:
            events.emit(name, listeners, args)

    async def serial(
        self, event: str | EventKey[L], *args: object, agent: object = _UNFILTERED
    ) -> object:
        """Await listeners in order; the first result that is not None/False, else None."""
        listeners = self._admitted(event if isinstance(event, str) else event.name, agent)
        return await events.serial(listeners, args) if listeners else None

    async def parallel(
        self, event: str | EventKey[L], *args: object, agent: object = _UNFILTERED
    ) -> None:
        """Run listeners concurrently; raises an ExceptionGroup of every failure."""
        name = event if isinstance(event, str) else event.name
        listeners = self._admitted(name, agent)
        if listeners:
            await events.parallel(name, listeners, args)

    async def waterfall(
        self,
        event: str | EventKey[L],
        *args: object,
        base: Callable[[], Awaitable[T]],
        agent: object = _UNFILTERED,
    ) -> T:
        """Around-middleware: `listener(*args, call_next)`, one shared consumable queue, then
        base."""
        listeners = self._admitted(event if isinstance(event, str) else event.name, agent)
        if not listeners:
            return await base()
        return await events.waterfall(listeners, args, base)
