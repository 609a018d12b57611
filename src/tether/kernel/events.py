"""The listener table and the four dispatch modes (spec/tool-runtime.md §7).

Owns: per-event listener storage and ordering (`on` appends, `prepend=True` inserts at the
front), and how a snapshot of listeners is run by `emit`, `serial`, `parallel` and `waterfall`.
Does not own: who owns a registration (the remover is recorded on a scope by context.py), scope
filtering, or error containment: no mode contains a listener's failure.

Snapshots are free: the table publishes an immutable tuple per event, rebuilt on registration,
so a dispatch keeps the tuple it looked up; listeners added during a dispatch are not called by
it, listeners removed during it may still be.

The waterfall is one shared, consumable queue: `next()` (its arguments are ignored) takes the
next listener off the queue and calls `listener(*args, next)`; once the queue is empty it calls
`base()`. A listener that returns without calling `next` short-circuits the rest; a listener
that calls `next()` twice gets only what is left of the queue the second time (usually just the
base). The queue is a position in the published tuple, held by the one small object (`next`)
a dispatch makes.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from types import CoroutineType
from typing import Generic, TypeAlias, TypeVar, cast, final

__all__ = ["EventKey", "EventTable", "Listener", "Next", "emit", "parallel", "serial", "waterfall"]

T = TypeVar("T")
L = TypeVar("L", bound=Callable[..., object])

Listener: TypeAlias = Callable[..., object]
Next: TypeAlias = Callable[[], Awaitable[T]]
"""The `next` a waterfall listener receives: call it (no arguments) and await the result."""


@final
class EventKey(Generic[L]):
    """A typed event name: `ctx.on(KEY, listener)` type-checks `listener` against `L`.

    `TOOLS_PRE = EventKey[Callable[[ToolExecution, Next[Decision]], Awaitable[Decision]]]("x")`.
    Plain strings keep working everywhere a key is accepted.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"EventKey({self.name!r})"


class EventTable:
    """Listeners per event name; `by_name[event]` is the current snapshot (never empty)."""

    __slots__ = ("_records", "by_name")

    def __init__(self) -> None:
        self.by_name: dict[str, tuple[Listener, ...]] = {}
        self._records: dict[str, list[tuple[object, Listener]]] = {}

    def add(self, event: str, listener: Listener, *, prepend: bool = False) -> Callable[[], None]:
        """Register `listener`; returns an idempotent remover for exactly this registration."""
        records = self._records.setdefault(event, [])
        token = object()
        if prepend:
            records.insert(0, (token, listener))
        else:
            records.append((token, listener))
        self._publish(event, records)

        def remove() -> None:
            for index, (candidate, _) in enumerate(records):
                if candidate is token:
                    del records[index]
                    self._publish(event, records)
                    return

        return remove

    def _publish(self, event: str, records: list[tuple[object, Listener]]) -> None:
        if records:
            self.by_name[event] = tuple(listener for _, listener in records)
        else:
            del self.by_name[event]
            del self._records[event]


def emit(event: str, listeners: tuple[Listener, ...], args: tuple[object, ...]) -> None:
    """Call each listener synchronously; a raise propagates and stops the rest.

    Return values are ignored, except a coroutine: emit never awaits, so an async listener is
    a bug; its coroutine is closed and `TypeError` raised.
    """
    for listener in listeners:
        result = listener(*args)
        if inspect.iscoroutine(result):
            result.close()
            raise TypeError(
                f'listener {listener!r} of event "{event}" returned a coroutine, but emit never'
                " awaits; dispatch async listeners with serial() or parallel()"
            )


async def serial(listeners: tuple[Listener, ...], args: tuple[object, ...]) -> object:
    """Await listeners one by one; return the first result that is not None or False."""
    for listener in listeners:
        result = listener(*args)
        if inspect.isawaitable(result):
            result = await result
        if result is not None and result is not False:
            return result
    return None


async def parallel(event: str, listeners: tuple[Listener, ...], args: tuple[object, ...]) -> None:
    """Run all listeners concurrently and wait for all; raise an ExceptionGroup of failures."""
    outcomes = await asyncio.gather(
        *(_settle(each, args) for each in listeners), return_exceptions=True
    )
    failures = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    if failures:
        raise BaseExceptionGroup(
            f'event "{event}": {len(failures)} of {len(listeners)} parallel listeners failed',
            failures,
        )


async def _settle(listener: Listener, args: tuple[object, ...]) -> None:
    result = listener(*args)
    if inspect.isawaitable(result):
        await result


def waterfall(
    listeners: tuple[Listener, ...], args: tuple[object, ...], base: Callable[[], Awaitable[T]]
) -> Awaitable[T]:
    """Start the chain: returns what the first listener returned (awaitable), see the module doc."""
    return _Queue(listeners, args, base)()


class _Queue(Generic[T]):
    """One waterfall dispatch: the consumable queue and its `next`.

    A class rather than a closure: a closure that passes itself on is a reference cycle, which
    would leave garbage for the cyclic collector on every tool call.
    """

    __slots__ = ("_args", "_base", "_listeners", "_position")

    def __init__(
        self,
        listeners: tuple[Listener, ...],
        args: tuple[object, ...],
        base: Callable[[], Awaitable[T]],
    ) -> None:
        self._listeners = listeners
        self._args = args
        self._base = base
        self._position = 0

    def __call__(self, *_args: object, **_kwargs: object) -> Awaitable[T]:
        position = self._position
        if position == len(self._listeners):
            return self._base()
        self._position = position + 1
        result = self._listeners[position](*self._args, self)
        if type(result) is CoroutineType or inspect.isawaitable(result):
            return result
        return cast("Awaitable[T]", _resolved(result))


async def _resolved(value: object) -> object:
    return value
