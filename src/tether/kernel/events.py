"""The listener table and the four dispatch modes (spec/tool-runtime.md §7).

Owns: per-event listener storage and ordering (`on` appends, `prepend=True` inserts at the
front), and how a snapshot of listeners is run by `emit`, `serial`, `parallel` and `waterfall`.
Does not own: who owns a registration (the remover is recorded on a scope by context.py), scope
filtering, or error containment: no mode contains a listener's failure.

Snapshots are free: the table publishes an immutable tuple per event, rebuilt on registration,
so a dispatch keeps the tuple it looked up; listeners added during a dispatch are not called by
it, listeners removed during it may still be.

Scope tags (spec §7.5). A listener registered through an agent's scoped context carries that
`AgentScope` as its tag (unless registered `global_=True`). Three views are published:
`by_name` holds every listener (plain `ctx.emit`/`serial`/`parallel`/`waterfall`, and
`tools/change`, are unfiltered); `untagged` holds the listeners a dispatch *without* an agent
admits (untagged and global ones; the same tuple as `by_name`'s when an event has no tagged
listener); `admitted(scope)` is the live mapping a dispatch *for* an agent admits: untagged
listeners plus those tagged with the agent's scope or any ancestor of it — events flow up the
chain, never down. It is rebuilt lazily, once per change of the table, and cached on the scope.

The waterfall is one shared, consumable queue: `call_next()` (its arguments are ignored) takes
the next listener off the queue and calls `listener(*args, call_next)`; once the queue is empty
it calls `base()`. A listener that returns without calling `call_next` short-circuits the rest;
a listener that calls `call_next()` twice gets only what is left of the queue the second time
(usually just the base). The queue is a position in the published tuple, held by the one small
object (`call_next`) a dispatch makes.

Known events (issue 38). A misspelt event name must not fail open (`"tools/pre_execute"` would
register a permission check that never runs), so names are declared: constructing an `EventKey`
declares its name, `declare_event(name)` declares a plain string, and `declare_namespace(prefix)`
closes a namespace (every `prefix/...` name must be declared). `check_event(name)` — run by
`Context.on` at registration — raises `UnknownEventError`, naming the nearest known event, for an
undeclared name that is in a closed namespace or is close to a known one (`difflib`). Other
undeclared names (an application's own events, `"e"` in a test) stay accepted, as the contract's
string events require. Declarations are process-wide and idempotent.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping
from types import CoroutineType
from typing import Final, Generic, TypeAlias, TypeVar, cast, final

from .agent_scope import AgentScope
from .errors import PluginError

__all__ = [
    "EventKey",
    "EventTable",
    "Listener",
    "Next",
    "ScopedListeners",
    "UnknownEventError",
    "check_event",
    "declare_event",
    "declare_namespace",
    "emit",
    "known_events",
    "parallel",
    "serial",
    "waterfall",
]

T = TypeVar("T")
L = TypeVar("L", bound=Callable[..., object])

Listener: TypeAlias = Callable[..., object]
Next: TypeAlias = Callable[[], Awaitable[T]]
"""The continuation a waterfall listener receives last (name it `call_next`, not `next`, which
shadows a builtin): call it (no arguments) and await the result."""


_KNOWN: dict[str, None] = {}  # declared event names, in declaration order
_CLOSED: set[str] = set()  # namespaces whose every event must be declared
_NEAR_CUTOFF: Final = 0.8


class UnknownEventError(PluginError):
    """A listener was registered for an event nobody declared (most likely a misspelling)."""


def declare_event(name: str) -> str:
    """Declare `name` as a known event (idempotent); returns it: `X: Final = declare_event(...)`.

    Raises ValueError for an empty name."""
    if not name or not isinstance(name, str):
        raise ValueError(f"an event name must be a non-empty string, not {name!r}")
    _KNOWN[name] = None
    return name


def declare_namespace(prefix: str) -> None:
    """Close `prefix`: from now on every `prefix/...` listener's event must be declared."""
    if not prefix or "/" in prefix:
        raise ValueError(f"a namespace is the part before the first '/', not {prefix!r}")
    _CLOSED.add(prefix)


def known_events() -> tuple[str, ...]:
    """Every declared event name, sorted."""
    return tuple(sorted(_KNOWN))


def check_event(name: str) -> None:
    """Raise UnknownEventError for an undeclared `name` that is in a closed namespace or close to
    a declared one (see the module note); accept everything else."""
    if name in _KNOWN:
        return
    import difflib  # a name that is not declared is rare: not imported at boot

    namespace, slash, _ = name.partition("/")
    near = difflib.get_close_matches(name, list(_KNOWN), n=1, cutoff=_NEAR_CUTOFF)
    if not near and not (slash and namespace in _CLOSED):
        return
    hint = f'did you mean "{near[0]}"? ' if near else ""
    where = (
        f'"{namespace}/" events are all declared; '
        if slash and namespace in _CLOSED
        else "it is not a declared event but close to one; "
    )
    raise UnknownEventError(
        f'unknown event "{name}": {hint}{where}a plugin that dispatches a new event declares it'
        f' before anyone listens: `KEY = EventKey[ListenerType]("{name}")` or'
        f' `declare_event("{name}")` (tether.kernel.events)'
    )


@final
class EventKey(Generic[L]):
    """A typed, declared event name: `ctx.on(KEY, listener)` type-checks `listener` against `L`.

    `TOOLS_PRE = EventKey[Callable[[ToolExecution, Next[Decision]], Awaitable[Decision]]]("x")`.
    Constructing a key declares its name (see the module note). Plain strings keep working
    everywhere a key is accepted.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = declare_event(name)

    def __repr__(self) -> str:
        return f"EventKey({self.name!r})"


class EventTable:
    """Listeners per event name; each published snapshot is never empty (absent instead)."""

    __slots__ = ("_records", "_tagged", "by_name", "untagged", "version")

    def __init__(self) -> None:
        self.by_name: dict[str, tuple[Listener, ...]] = {}
        """Every listener of each event (unfiltered dispatch)."""
        self.untagged: dict[str, tuple[Listener, ...]] = {}
        """The listeners a dispatch without an agent admits (untagged and global ones)."""
        self.version = 0
        """Bumped on every change; scoped views rebuild when it moved."""
        self._records: dict[str, list[tuple[object, Listener, AgentScope | None]]] = {}
        self._tagged: dict[str, int] = {}  # event -> how many of its listeners carry a tag

    def add(
        self,
        event: str,
        listener: Listener,
        *,
        prepend: bool = False,
        tag: AgentScope | None = None,
    ) -> Callable[[], None]:
        """Register `listener` (tagged with an agent scope, or not); returns an idempotent
        remover for exactly this registration."""
        records = self._records.setdefault(event, [])
        token = object()
        record = (token, listener, tag)
        if prepend:
            records.insert(0, record)
        else:
            records.append(record)
        if tag is not None:
            self._tagged[event] = self._tagged.get(event, 0) + 1
        self._publish(event, records)

        def remove() -> None:
            for index, (candidate, _, _) in enumerate(records):
                if candidate is token:
                    del records[index]
                    if tag is not None:
                        left = self._tagged[event] - 1
                        if left:
                            self._tagged[event] = left
                        else:
                            del self._tagged[event]
                    self._publish(event, records)
                    return

        return remove

    def _publish(
        self, event: str, records: list[tuple[object, Listener, AgentScope | None]]
    ) -> None:
        self.version += 1
        if not records:
            del self.by_name[event]
            self.untagged.pop(event, None)
            del self._records[event]
            return
        every = tuple(listener for _, listener, _ in records)
        self.by_name[event] = every
        if event not in self._tagged:
            self.untagged[event] = every
            return
        plain = tuple(listener for _, listener, tag in records if tag is None)
        if plain:
            self.untagged[event] = plain
        else:
            self.untagged.pop(event, None)

    def admitted(self, scope: AgentScope) -> Mapping[str, tuple[Listener, ...]]:
        """The live listener mapping a dispatch for an agent in `scope` uses (see the module
        note): `untagged` itself while no listener anywhere is tagged."""
        if not self._tagged:
            return self.untagged
        view = scope.listeners
        if view is None:
            view = scope.listeners = ScopedListeners(self, scope)
        return view

    def filtered(self, event: str, scope: AgentScope) -> tuple[Listener, ...]:
        """`event`'s listeners a dispatch for an agent in `scope` admits (may be empty)."""
        if event not in self._tagged:
            return self.untagged.get(event, ())
        lineage = scope.lineage
        return tuple(
            listener for _, listener, tag in self._records[event] if tag is None or tag in lineage
        )

    def tagged_events(self) -> tuple[str, ...]:
        """The events that have at least one tagged listener."""
        return tuple(self._tagged)


class ScopedListeners(Mapping[str, tuple[Listener, ...]]):
    """What one agent scope's dispatches see: a read-only mapping like `EventTable.untagged`,
    rebuilt on first read after the table changed."""

    __slots__ = ("_built", "_scope", "_table", "_view")

    def __init__(self, table: EventTable, scope: AgentScope) -> None:
        self._table = table
        self._scope = scope
        self._built = -1
        self._view: dict[str, tuple[Listener, ...]] = {}

    def _current(self) -> dict[str, tuple[Listener, ...]]:
        table = self._table
        if self._built != table.version:
            view = dict(table.untagged)
            for event in table.tagged_events():
                picked = table.filtered(event, self._scope)
                if picked:
                    view[event] = picked
            self._view = view
            self._built = table.version
        return self._view

    def get(self, event: str, default: object = None) -> tuple[Listener, ...] | None:  # type: ignore[override]
        return self._current().get(event, default)  # type: ignore[arg-type]

    def __contains__(self, event: object) -> bool:
        return event in self._current()

    def __getitem__(self, event: str) -> tuple[Listener, ...]:
        return self._current()[event]

    def __iter__(self) -> Iterator[str]:
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())


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
