"""Ownership: the disposers one plugin (or the root context) has recorded, undone LIFO.

Owns: recording a disposer (an `Effect`), running one early through its idempotent remover, and
disposing everything that is left, last recorded first, awaiting async disposers one after
another. A disposer that raises during disposal is logged (logger `tether.kernel`, WARNING, with
the traceback) and the rest still run. Does not own: what a disposer undoes, or plugin state
(lifecycle.py).

Disposal runs in its own task, started by the first `dispose()`: every caller awaits that same
task (shielded), so a cancelled caller never abandons a half-undone plugin and a second call waits
for the first. Once disposal has started the scope records nothing new: `add` raises PluginError.

An async disposer run early through its (synchronous) remover becomes a task; the scope keeps it
and awaits it before anything else when it is disposed.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable

from .errors import PluginError

__all__ = ["Effect", "Scope"]

logger = logging.getLogger("tether.kernel")

Disposer = Callable[[], object]


class Effect:
    """One recorded disposer. Calling it is the idempotent remover: run once, un-record."""

    __slots__ = ("_scope",)

    def __init__(self, scope: Scope) -> None:
        self._scope = scope

    def __call__(self) -> None:
        disposer = self._scope._effects.pop(self, None)
        if disposer is not None:
            result = disposer()
            if inspect.isawaitable(result):
                self._scope._keep(result)

    def discard(self) -> None:
        """Un-record without running (the owner of the effect runs the disposal itself)."""
        self._scope._effects.pop(self, None)


class Scope:
    """The ordered disposers of one owner; `label` names the owner in messages."""

    __slots__ = ("_early", "_effects", "_task", "label")

    def __init__(self, label: str) -> None:
        self.label = label
        self._effects: dict[Effect, Disposer] = {}  # insertion order; popitem() is LIFO
        self._early: set[asyncio.Task[None]] = set()  # async disposers run by their remover
        self._task: asyncio.Task[None] | None = None  # the disposal, once started

    def ensure_active(self) -> None:
        """Raises PluginError when disposal has started."""
        if self._task is not None:
            raise PluginError(f"{self.label} is disposed; it accepts no new registrations")

    def add(self, disposer: Disposer) -> Effect:
        """Record `disposer`. Raises PluginError (after running it) when the scope is disposed."""
        effect = Effect(self)
        self._effects[effect] = disposer
        if self._task is not None:
            effect()
            self.ensure_active()
        return effect

    async def dispose(self) -> None:
        """Run every remaining disposer, LIFO; idempotent; returns when all have finished."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())
        if self._task is not asyncio.current_task():  # a disposer disposing its own scope
            await asyncio.shield(self._task)

    async def _run(self) -> None:
        await self._drain_early()
        while self._effects:
            _, disposer = self._effects.popitem()
            try:
                result = disposer()
                if inspect.isawaitable(result):
                    await result
            except Exception:
                logger.warning("%s: disposer %r failed", self.label, disposer, exc_info=True)
        await self._drain_early()

    async def _drain_early(self) -> None:
        while self._early:
            await asyncio.wait(set(self._early))

    def _keep(self, awaitable: Awaitable[object]) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            if inspect.iscoroutine(awaitable):
                awaitable.close()
            raise
        task = loop.create_task(_await(awaitable))
        self._early.add(task)
        task.add_done_callback(self._early_done)

    def _early_done(self, task: asyncio.Task[None]) -> None:
        self._early.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            logger.warning("%s: disposer failed", self.label, exc_info=error)


async def _await(awaitable: Awaitable[object]) -> None:
    await awaitable
