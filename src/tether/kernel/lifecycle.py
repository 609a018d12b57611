"""Plugin lifecycle: handles, deferred apply on `inject`, withdrawal of dependents.

Owns: `PluginState` and `PluginHandle` (apply, `ready()`, `dispose()`); the mount-ordered list
of live plugins; applying waiting plugins, in mount order, as soon as the last service they
inject is provided; disposing applied dependents when a service they inject is withdrawn.
Does not own: the service table and the contexts (context.py), recording and running disposers
(scope.py), the plugin shapes (plugins.py).

Waiting plugins are applied by one drain task, started when a service is provided. A mount that
applies immediately awaits that drain before returning, so after `await ctx.plugin(ToolRuntime)`
every plugin that was waiting only for `tools` has been applied too (unless the mount runs inside
the drain itself, which then carries on after it). A plugin that fails to apply in the drain is
logged (ERROR) and its `ready()` raises.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from enum import Enum
from typing import TYPE_CHECKING

from .errors import PluginError
from .plugins import PluginSpec, Service
from .scope import Effect, Scope

if TYPE_CHECKING:
    from .context import Context

__all__ = ["Lifecycle", "PluginHandle", "PluginState"]

logger = logging.getLogger("tether.kernel")


class PluginState(Enum):
    WAITING = "waiting"  # mounted; an injected service is not provided yet
    APPLYING = "applying"  # apply (or the Service's construction and start) is running
    APPLIED = "applied"  # its registrations are live until dispose
    FAILED = "failed"  # apply raised; whatever it had registered is undone
    DISPOSED = "disposed"  # disposed, before or after it was applied


class PluginHandle:
    """One mounted plugin. `dispose()` undoes everything it registered, LIFO."""

    def __init__(
        self,
        spec: PluginSpec,
        config: object,
        lifecycle: Lifecycle,
        owner: Scope,
        make_context: Callable[[PluginHandle, Scope], Context],
    ) -> None:
        self._scope = Scope(f'plugin "{spec.name}"')
        self._spec = spec
        self._config = config
        self._lifecycle = lifecycle
        self._state = PluginState.WAITING
        self._error: BaseException | None = None
        self._settled = asyncio.Event()  # set when it leaves WAITING/APPLYING
        self._context = make_context(self, self._scope)
        self._owner: Effect = owner.add(self._teardown)  # raises when the owner is disposed

    def __repr__(self) -> str:
        return f'<PluginHandle "{self.name}" {self._state.value}>'

    @property
    def name(self) -> str:
        return self._spec.name

    @property
    def plugin(self) -> object:
        """The module, object or Service subclass that was mounted."""
        return self._spec.target

    @property
    def state(self) -> PluginState:
        return self._state

    @property
    def applied(self) -> bool:
        return self._state is PluginState.APPLIED

    @property
    def missing(self) -> tuple[str, ...]:
        """Injected services not provided yet (empty unless WAITING)."""
        if self._state is not PluginState.WAITING:
            return ()
        return self._lifecycle.missing(self._spec.inject)

    @property
    def error(self) -> BaseException | None:
        """What apply raised, when FAILED."""
        return self._error

    async def ready(self) -> None:
        """Wait until applied. Raises PluginError if apply failed or the plugin is disposed."""
        if self._state in (PluginState.WAITING, PluginState.APPLYING):
            await self._settled.wait()
        if self._state is PluginState.FAILED:
            raise PluginError(
                f'plugin "{self.name}" failed to apply: {self._error}'
            ) from self._error
        if self._state is PluginState.DISPOSED:
            raise PluginError(f'plugin "{self.name}" is disposed')

    async def dispose(self) -> None:
        """Undo the plugin (idempotent); also forgets it on the context that mounted it."""
        self._owner.discard()
        await self._teardown()

    async def _teardown(self) -> None:
        if self._state is not PluginState.FAILED:
            self._state = PluginState.DISPOSED
        self._lifecycle.forget(self)
        try:
            await self._scope.dispose()
        finally:
            self._settled.set()

    async def _apply(self, *, log_failure: bool = False) -> None:
        self._state = PluginState.APPLYING
        try:
            await self._run()
        except BaseException as error:
            if self._state is PluginState.APPLYING:
                self._state = PluginState.FAILED
            self._error = error
            if log_failure and isinstance(error, Exception):
                logger.error('plugin "%s" failed to apply', self.name, exc_info=error)
            self._owner.discard()
            await self._teardown()
            raise
        if self._state is PluginState.APPLYING:
            self._state = PluginState.APPLIED
        self._settled.set()

    async def _run(self) -> None:
        spec, ctx = self._spec, self._context
        result = spec.call(ctx, self._config) if spec.takes_config else spec.call(ctx)
        if not spec.is_service:
            if inspect.isawaitable(result):
                await result
            return
        if not isinstance(result, Service):  # pragma: no cover - a Service subclass builds one
            raise PluginError(f'plugin "{spec.name}" did not construct a Service')
        await result.start()
        self._scope.add(result.stop)
        ctx.provide(spec.name, result)


class Lifecycle:
    """The live plugins of one root context, in mount order, and their `inject` resolution."""

    def __init__(self, provided: Mapping[str, object]) -> None:
        self._provided = provided  # the shared service table (read only here)
        self._live: list[PluginHandle] = []
        self._drain: asyncio.Task[None] | None = None

    def missing(self, inject: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(name for name in inject if name not in self._provided)

    def pending(self) -> list[tuple[str, tuple[str, ...]]]:
        return [(handle.name, handle.missing) for handle in self._live if handle.missing]

    async def mount(self, handle: PluginHandle) -> None:
        """Apply now if every injected service is there (raising what apply raised), else wait."""
        self._live.append(handle)
        if handle.missing:
            return
        await handle._apply()
        await self.settle()

    def forget(self, handle: PluginHandle) -> None:
        if handle in self._live:
            self._live.remove(handle)

    def wake(self) -> None:
        """A service was provided: start the drain if a waiting plugin can now be applied."""
        if self._drain is not None and not self._drain.done():
            return  # the running drain rescans after each apply
        if self._next_ready() is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # provided outside the loop: the next mount drains
            return
        self._drain = loop.create_task(self._run_drain())

    async def settle(self) -> None:
        """Wait for the drain, unless called from inside it."""
        self.wake()
        drain = self._drain
        if drain is not None and drain is not asyncio.current_task():
            await asyncio.shield(drain)

    def withdrawn(self, name: str) -> Awaitable[None] | None:
        """Service `name` is gone: dispose the plugins that inject it, last mounted first."""
        dependents = [
            handle
            for handle in self._live
            if handle.state in (PluginState.APPLYING, PluginState.APPLIED)
            and name in handle._spec.inject
        ]
        return self._dispose_dependents(name, dependents) if dependents else None

    async def _dispose_dependents(self, name: str, dependents: list[PluginHandle]) -> None:
        for handle in reversed(dependents):
            logger.info(
                'disposing plugin "%s": service "%s" it injects was withdrawn', handle.name, name
            )
            await handle.dispose()

    def _next_ready(self) -> PluginHandle | None:
        for handle in self._live:
            if handle.state is PluginState.WAITING and not self.missing(handle._spec.inject):
                return handle
        return None

    async def _run_drain(self) -> None:
        while (handle := self._next_ready()) is not None:
            try:
                await handle._apply(log_failure=True)
            except Exception:  # logged by _apply; ready() raises it
                pass
