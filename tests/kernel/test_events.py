"""Event dispatch (spec/tool-runtime.md §7, CONTRACT §3).

Contract: listeners are stored per event name; `on` appends and `prepend=True` inserts at the
front. A dispatch snapshots the list, so listeners added meanwhile are not called by it. `emit`
is synchronous and contains nothing. `serial` returns the first result that is not None/False.
`parallel` runs every listener concurrently and raises an ExceptionGroup of the failures.
`waterfall` is one shared consumable queue: `next()` (arguments ignored) pops the next listener
and calls `listener(*args, next)`, then `base()` once the queue is empty.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from tether.kernel import Context, EventKey, Next


@pytest.fixture
def ctx() -> Context:
    return Context()


def recorder(log: list[str], label: str) -> Callable[..., None]:
    def listener(*args: object) -> None:
        log.append(label)

    return listener


async def base_returning(log: list[str], value: str = "base") -> str:
    log.append("base")
    return value


# -- storage and ordering -------------------------------------------------------------------------


def test_listeners_are_called_in_registration_order(ctx: Context) -> None:
    log: list[str] = []
    ctx.on("e", recorder(log, "a"))
    ctx.on("e", recorder(log, "b"))
    ctx.emit("e")
    assert log == ["a", "b"]


def test_prepended_listeners_run_first_most_recent_first(ctx: Context) -> None:
    log: list[str] = []
    ctx.on("e", recorder(log, "a"))
    ctx.on("e", recorder(log, "p1"), prepend=True)
    ctx.on("e", recorder(log, "b"))
    ctx.on("e", recorder(log, "p2"), prepend=True)
    ctx.emit("e")
    assert log == ["p2", "p1", "a", "b"]


def test_the_remover_removes_exactly_its_own_registration(ctx: Context) -> None:
    log: list[str] = []
    listener = recorder(log, "x")
    ctx.on("e", recorder(log, "a"))
    ctx.on("e", listener, prepend=True)
    remove_appended = ctx.on("e", listener)
    remove_appended()
    assert ctx.listeners("e")[0] is listener
    assert len(ctx.listeners("e")) == 2


def test_the_remover_is_idempotent(ctx: Context) -> None:
    log: list[str] = []
    listener = recorder(log, "x")
    ctx.on("e", listener)
    remove = ctx.on("e", listener)
    remove()
    remove()
    assert ctx.listeners("e") == (listener,)


def test_listeners_returns_a_snapshot_in_dispatch_order(ctx: Context) -> None:
    log: list[str] = []
    a, b = recorder(log, "a"), recorder(log, "b")
    ctx.on("e", a)
    ctx.on("e", b, prepend=True)
    snapshot = ctx.listeners("e")
    ctx.on("e", recorder(log, "c"))
    assert snapshot == (b, a)


def test_an_event_without_listeners_has_an_empty_snapshot(ctx: Context) -> None:
    remove = ctx.on("e", recorder([], "a"))
    remove()
    assert ctx.listeners("e") == ()


def test_a_dispatch_does_not_call_listeners_added_during_it(ctx: Context) -> None:
    log: list[str] = []

    def adder() -> None:
        log.append("adder")
        ctx.on("e", recorder(log, "late"))

    ctx.on("e", adder)
    ctx.emit("e")
    assert log == ["adder"]


def test_a_dispatch_still_calls_listeners_removed_during_it(ctx: Context) -> None:
    log: list[str] = []
    removers: list[Callable[[], None]] = []

    def remover() -> None:
        log.append("remover")
        removers[0]()

    ctx.on("e", remover)
    removers.append(ctx.on("e", recorder(log, "removed")))
    ctx.emit("e")
    assert log == ["remover", "removed"]
    assert len(ctx.listeners("e")) == 1


def test_an_event_key_names_the_same_event_as_its_string(ctx: Context) -> None:
    key: EventKey[Callable[[int], None]] = EventKey("e")
    seen: list[object] = []
    ctx.on(key, seen.append)
    ctx.emit("e", 1)
    ctx.emit(key, 2)
    assert seen == [1, 2]
    assert repr(key) == "EventKey('e')"


# -- emit ------------------------------------------------------------------------------------------


def test_emit_passes_the_arguments_and_ignores_return_values(ctx: Context) -> None:
    seen: list[tuple[object, ...]] = []

    def listener(*args: object) -> str:
        seen.append(args)
        return "ignored"

    ctx.on("e", listener)
    ctx.emit("e", 1, "two")
    assert seen == [(1, "two")]


def test_emit_stops_at_a_raising_listener_and_propagates(ctx: Context) -> None:
    log: list[str] = []

    def boom() -> None:
        raise RuntimeError("boom")

    ctx.on("e", recorder(log, "a"))
    ctx.on("e", boom)
    ctx.on("e", recorder(log, "c"))
    with pytest.raises(RuntimeError, match=r"^boom$"):
        ctx.emit("e")
    assert log == ["a"]


def test_emit_rejects_an_async_listener_instead_of_dropping_its_coroutine(ctx: Context) -> None:
    async def listener() -> None:
        raise AssertionError("never runs")

    ctx.on("e", listener)
    with pytest.raises(TypeError, match="emit never awaits"):
        ctx.emit("e")


def test_emit_without_listeners_does_nothing(ctx: Context) -> None:
    ctx.emit("nobody-listens", 1)


# -- serial ----------------------------------------------------------------------------------------


async def test_serial_returns_the_first_value_that_is_not_none_or_false(ctx: Context) -> None:
    log: list[str] = []

    async def nothing() -> None:
        log.append("none")

    def false() -> bool:
        log.append("false")
        return False

    async def zero() -> int:
        log.append("zero")
        return 0

    ctx.on("e", nothing)
    ctx.on("e", false)
    ctx.on("e", zero)
    ctx.on("e", recorder(log, "after"))
    assert await ctx.serial("e") == 0
    assert log == ["none", "false", "zero"]


async def test_serial_returns_none_when_no_listener_bails(ctx: Context) -> None:
    ctx.on("e", lambda: None)
    ctx.on("e", lambda: False)
    assert await ctx.serial("e") is None


async def test_serial_awaits_listeners_one_after_another(ctx: Context) -> None:
    log: list[str] = []

    async def slow() -> None:
        log.append("slow start")
        await asyncio.sleep(0)
        log.append("slow end")

    ctx.on("e", slow)
    ctx.on("e", recorder(log, "next"))
    await ctx.serial("e")
    assert log == ["slow start", "slow end", "next"]


async def test_serial_propagates_a_failure_and_stops(ctx: Context) -> None:
    log: list[str] = []

    async def boom() -> None:
        raise ValueError("bad")

    ctx.on("e", boom)
    ctx.on("e", recorder(log, "after"))
    with pytest.raises(ValueError, match=r"^bad$"):
        await ctx.serial("e")
    assert log == []


# -- parallel --------------------------------------------------------------------------------------


async def test_parallel_runs_listeners_concurrently(ctx: Context) -> None:
    first, second = asyncio.Event(), asyncio.Event()

    async def a() -> None:
        first.set()
        await second.wait()

    async def b() -> None:
        await first.wait()
        second.set()

    ctx.on("e", a)
    ctx.on("e", b)
    await ctx.parallel("e")
    assert first.is_set()
    assert second.is_set()


async def test_parallel_raises_an_exception_group_after_every_listener_settled(
    ctx: Context,
) -> None:
    finished: list[str] = []
    release = asyncio.Event()

    async def slow_ok() -> None:
        await release.wait()
        finished.append("slow")

    async def fails() -> None:
        release.set()
        raise ValueError("one")

    def fails_sync() -> None:
        raise KeyError("two")

    ctx.on("e", fails)
    ctx.on("e", slow_ok)
    ctx.on("e", fails_sync)
    with pytest.raises(ExceptionGroup) as caught:
        await ctx.parallel("e")
    assert finished == ["slow"]
    assert caught.value.message == 'event "e": 2 of 3 parallel listeners failed'
    assert [type(error) for error in caught.value.exceptions] == [ValueError, KeyError]


# -- waterfall -------------------------------------------------------------------------------------


async def test_waterfall_without_listeners_returns_the_base(ctx: Context) -> None:
    log: list[str] = []
    assert await ctx.waterfall("w", 1, base=lambda: base_returning(log)) == "base"
    assert log == ["base"]


async def test_waterfall_wraps_in_order_around_the_base(ctx: Context) -> None:
    log: list[str] = []

    def wrapper(label: str) -> Callable[[object, Next[str]], Awaitable[str]]:
        async def listener(payload: object, next: Next[str]) -> str:
            log.append(f"{label} {payload}")
            return f"{label}({await next()})"

        return listener

    ctx.on("w", wrapper("a"))
    ctx.on("w", wrapper("b"))
    assert await ctx.waterfall("w", "p", base=lambda: base_returning(log)) == "a(b(base))"
    assert log == ["a p", "b p", "base"]


async def test_waterfall_listener_that_skips_next_short_circuits(ctx: Context) -> None:
    log: list[str] = []

    async def short(next: Next[str]) -> str:
        return "short"

    ctx.on("w", short)
    ctx.on("w", recorder(log, "later"))
    assert await ctx.waterfall("w", base=lambda: base_returning(log)) == "short"
    assert log == []


async def test_waterfall_double_next_runs_only_the_base_the_second_time(ctx: Context) -> None:
    log: list[str] = []

    async def retry(next: Next[str]) -> str:
        first = await next()
        second = await next()
        return f"{first}+{second}"

    async def inner(next: Next[str]) -> str:
        log.append("inner")
        return f"inner({await next()})"

    ctx.on("w", retry)
    ctx.on("w", inner)
    assert await ctx.waterfall("w", base=lambda: base_returning(log)) == "inner(base)+base"
    assert log == ["inner", "base", "base"]


async def test_waterfall_second_next_takes_what_is_left_of_the_queue(ctx: Context) -> None:
    log: list[str] = []

    async def twice(next: Next[str]) -> str:
        return f"{await next()}+{await next()}"

    async def stops(next: Next[str]) -> str:
        log.append("stops")
        return "stopped"

    async def last(next: Next[str]) -> str:
        log.append("last")
        return f"last({await next()})"

    for listener in (twice, stops, last):
        ctx.on("w", listener)
    assert await ctx.waterfall("w", base=lambda: base_returning(log)) == "stopped+last(base)"
    assert log == ["stops", "last", "base"]


async def test_waterfall_next_ignores_its_arguments(ctx: Context) -> None:
    seen: list[object] = []

    async def passes_args(payload: object, next: Callable[..., Awaitable[str]]) -> str:
        return await next("replacement", extra=1)

    async def sees(payload: object, next: Next[str]) -> str:
        seen.append(payload)
        return await next()

    ctx.on("w", passes_args)
    ctx.on("w", sees)
    assert await ctx.waterfall("w", "original", base=lambda: base_returning([])) == "base"
    assert seen == ["original"]


async def test_waterfall_listeners_share_the_same_payload_objects(ctx: Context) -> None:
    payload: dict[str, str] = {}

    async def writes(shared: dict[str, str], next: Next[str]) -> str:
        shared["by"] = "writes"
        return await next()

    async def reads(shared: dict[str, str], next: Next[str]) -> str:
        return shared["by"]

    ctx.on("w", writes)
    ctx.on("w", reads)
    assert await ctx.waterfall("w", payload, base=lambda: base_returning([])) == "writes"


async def test_waterfall_accepts_sync_listeners(ctx: Context) -> None:
    def passes(next: Next[str]) -> Awaitable[str]:
        return next()

    def answers(next: Next[str]) -> str:
        return "sync"

    ctx.on("w", passes)
    ctx.on("w", answers)
    assert await ctx.waterfall("w", base=lambda: base_returning([])) == "sync"


async def test_waterfall_propagates_a_listener_failure(ctx: Context) -> None:
    async def boom(next: Next[str]) -> str:
        raise RuntimeError("boom")

    ctx.on("w", boom)
    with pytest.raises(RuntimeError, match=r"^boom$"):
        await ctx.waterfall("w", base=lambda: base_returning([]))


async def test_waterfall_propagates_a_base_failure_through_the_listeners(ctx: Context) -> None:
    async def passes(next: Next[str]) -> str:
        return await next()

    async def base() -> str:
        raise LookupError("base failed")

    ctx.on("w", passes)
    with pytest.raises(LookupError, match=r"^base failed$"):
        await ctx.waterfall("w", base=base)
