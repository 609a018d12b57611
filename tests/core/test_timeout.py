"""Contract of `tether.core.timeout` (CONTRACT §2, spec §3.1–§3.6), on a manual clock.

- `TimeoutReason(code, ms)` is the abort reason of a timer and reads `<code> after <ms>ms`.
- `clamp_timeout(requested, default, maximum, name)` returns `min(requested or default, maximum)`
  and rejects a given value that is not a positive finite number, naming it.
- `deadline(upstream, ms, code)` aborts at exactly `ms` with `TimeoutReason(code, ms)` unless
  upstream aborted first (first reason wins, upstream's abort is never a timeout); `ms <= 0` means
  no timer and returns `upstream` itself; dispose stops the timer and detaches from upstream.
- `timeout_of(x, code)` returns `x.reason` iff it is a `TimeoutReason` with that code (any code
  when omitted): an outer deadline's expiry is not *ours*.
- `idle_watchdog(upstream, ms, code)` times only the wait on one outstanding `next()`;
  `pulse()` re-arms it; `next` returns or raises exactly what the iterator does; dispose stops an
  outstanding timer; upstream's reason is never reclassified as a timeout.

Every timing case runs on `ManualClock`; one test checks the real event loop's timer.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable
from types import SimpleNamespace
from typing import Any, Generic, TypeVar

import pytest

from tether.core.signals import AbortController, AbortSignal
from tether.core.timeout import (
    MAX_TIMER_DELAY_MS,
    TimeoutReason,
    clamp_timeout,
    deadline,
    format_ms,
    idle_watchdog,
    timeout_of,
)
from tether.testing.clock import ManualClock

T = TypeVar("T")

DEADLINE_RANGE = "deadline timeout_ms must be a positive finite number no greater than 2147483647"
WATCHDOG_RANGE = (
    "idle_watchdog timeout_ms must be a positive finite number no greater than 2147483647"
)


class Demand(Generic[T]):
    """An async iterator whose every `__anext__` waits until the test resolves or rejects it."""

    def __init__(self) -> None:
        self.calls = 0
        self._pending: asyncio.Future[T] | None = None

    def __aiter__(self) -> Demand[T]:
        return self

    def __anext__(self) -> Awaitable[T]:
        self.calls += 1
        self._pending = asyncio.get_running_loop().create_future()
        return self._pending

    def resolve(self, item: T) -> None:
        assert self._pending is not None
        self._pending.set_result(item)

    def reject(self, error: BaseException) -> None:
        assert self._pending is not None
        self._pending.set_exception(error)


async def started(awaitable: Awaitable[T]) -> asyncio.Task[T]:
    """Run `awaitable` as a task up to its first suspension."""

    async def run() -> T:
        return await awaitable

    task = asyncio.create_task(run())
    await asyncio.sleep(0)
    assert not task.done()
    return task


# -- TimeoutReason and format_ms ----------------------------------------------------------------


def test_timeout_reason_reads_code_after_ms() -> None:
    reason = TimeoutReason("BASH_TIMEOUT", 100)

    assert str(reason) == "BASH_TIMEOUT after 100ms"
    assert reason.code == "BASH_TIMEOUT"
    assert reason.timeout_ms == 100
    assert isinstance(reason, Exception)


def test_timeout_reason_prints_an_integral_float_without_a_decimal_point() -> None:
    assert str(TimeoutReason("X", 100.0)) == "X after 100ms"


def test_timeout_reason_keeps_a_fractional_ms() -> None:
    assert str(TimeoutReason("X", 1.5)) == "X after 1.5ms"


@pytest.mark.parametrize(
    ("ms", "text"),
    [(0, "0"), (100, "100"), (100.0, "100"), (2.25, "2.25"), (MAX_TIMER_DELAY_MS, "2147483647")],
)
def test_format_ms_prints_like_javascript(ms: float, text: str) -> None:
    assert format_ms(ms) == text


def test_max_timer_delay_is_the_32_bit_limit() -> None:
    assert MAX_TIMER_DELAY_MS == 2_147_483_647


# -- clamp_timeout ------------------------------------------------------------------------------


def test_clamp_timeout_returns_a_requested_value_below_the_maximum() -> None:
    assert clamp_timeout(500, 1000, 2000) == 500


def test_clamp_timeout_uses_the_default_when_nothing_is_requested() -> None:
    assert clamp_timeout(None, 1000, 2000) == 1000


def test_clamp_timeout_caps_a_requested_value_at_the_maximum() -> None:
    assert clamp_timeout(5000, 1000, 2000) == 2000


def test_clamp_timeout_caps_a_default_above_the_maximum() -> None:
    assert clamp_timeout(None, 900_000, 600_000) == 600_000


@pytest.mark.parametrize("requested", [0, -1, -0.5, math.nan, math.inf, -math.inf])
def test_clamp_timeout_rejects_a_requested_value_that_is_not_positive_finite(
    requested: float,
) -> None:
    with pytest.raises(ValueError) as caught:
        clamp_timeout(requested, 1000, 2000)

    assert str(caught.value) == "timeout_ms must be a positive finite number"


def test_clamp_timeout_names_the_rejected_value_with_the_given_name() -> None:
    with pytest.raises(ValueError) as caught:
        clamp_timeout(0, 1000, 2000, "bash-local: request.timeout_ms")

    assert str(caught.value) == "bash-local: request.timeout_ms must be a positive finite number"


@pytest.mark.parametrize("requested", [True, False])
def test_clamp_timeout_rejects_a_bool(requested: bool) -> None:
    with pytest.raises(ValueError) as caught:
        clamp_timeout(requested, 1000, 2000)

    assert str(caught.value) == "timeout_ms must be a positive finite number"


# -- deadline: timer ----------------------------------------------------------------------------


@pytest.mark.parametrize("with_upstream", [False, True], ids=["no upstream", "with upstream"])
def test_deadline_aborts_exactly_at_timeout_ms_with_a_timeout_reason(with_upstream: bool) -> None:
    clock = ManualClock()
    upstream = AbortController().signal if with_upstream else None
    d = deadline(upstream, 100, "BASH_TIMEOUT", scheduler=clock)

    clock.advance(99)
    assert d.signal.aborted is False

    clock.advance(1)
    assert d.signal.aborted is True
    reason = d.signal.reason
    assert isinstance(reason, TimeoutReason)
    assert (reason.code, reason.timeout_ms) == ("BASH_TIMEOUT", 100)
    assert timeout_of(d.signal, "BASH_TIMEOUT") is reason


def test_deadline_detaches_from_upstream_when_its_timer_fires() -> None:
    clock = ManualClock()
    upstream = AbortController()
    d = deadline(upstream.signal, 100, "X", scheduler=clock)
    assert upstream.signal.listener_count == 1

    clock.advance(100)

    assert d.signal.aborted is True
    assert upstream.signal.listener_count == 0


def test_deadline_dispose_then_advance_never_aborts() -> None:
    clock = ManualClock()
    d = deadline(None, 100, "X", scheduler=clock)

    d.dispose()
    clock.advance(1000)

    assert d.signal.aborted is False
    assert timeout_of(d.signal) is None
    assert clock.pending == 0


def test_deadline_dispose_is_idempotent() -> None:
    clock = ManualClock()
    d = deadline(AbortController().signal, 100, "X", scheduler=clock)

    d.dispose()
    d.dispose()

    assert clock.pending == 0


def test_deadline_with_exit_cancels_the_timer_and_detaches_from_upstream() -> None:
    clock = ManualClock()
    upstream = AbortController()

    with deadline(upstream.signal, 100, "X", scheduler=clock) as d:
        assert upstream.signal.listener_count == 1
    clock.advance(1000)
    upstream.abort("later")

    assert upstream.signal.listener_count == 0
    assert d.signal.aborted is False


def test_deadline_dispose_detaches_so_a_later_upstream_abort_is_not_followed() -> None:
    clock = ManualClock()
    upstream = AbortController()
    d = deadline(upstream.signal, 100, "X", scheduler=clock)

    d.dispose()
    upstream.abort("stop")

    assert upstream.signal.listener_count == 0
    assert d.signal.aborted is False


def test_a_deadline_disposed_by_an_earlier_upstream_listener_does_not_follow_that_abort() -> None:
    clock = ManualClock()
    upstream = AbortController()
    holder: list[Any] = []
    upstream.signal.add_listener(lambda _: holder[0].dispose())
    holder.append(deadline(upstream.signal, 100, "X", scheduler=clock))

    upstream.abort("stop")

    assert holder[0].signal.aborted is False


@pytest.mark.parametrize(
    "timeout_ms", [MAX_TIMER_DELAY_MS + 1, math.inf, math.nan], ids=["MAX+1", "inf", "nan"]
)
def test_deadline_rejects_a_budget_that_is_out_of_range(timeout_ms: float) -> None:
    clock = ManualClock()

    with pytest.raises(ValueError) as caught:
        deadline(None, timeout_ms, "X", scheduler=clock)

    assert str(caught.value) == DEADLINE_RANGE
    assert clock.pending == 0


def test_deadline_rejection_leaves_no_listener_on_upstream() -> None:
    upstream = AbortController().signal

    with pytest.raises(ValueError):
        deadline(upstream, math.inf, "X", scheduler=ManualClock())

    assert upstream.listener_count == 0


def test_deadline_accepts_exactly_max_timer_delay() -> None:
    clock = ManualClock()
    d = deadline(None, MAX_TIMER_DELAY_MS, "X", scheduler=clock)

    clock.advance(MAX_TIMER_DELAY_MS)

    assert timeout_of(d.signal, "X") is not None


# -- deadline: upstream -------------------------------------------------------------------------


def test_an_upstream_abort_aborts_the_deadline_signal_and_is_not_a_timeout() -> None:
    clock = ManualClock()
    upstream = AbortController()
    d = deadline(upstream.signal, 100, "X", scheduler=clock)

    upstream.abort("caller cancelled")

    assert d.signal.aborted is True
    assert d.signal.reason == "caller cancelled"
    assert timeout_of(d.signal) is None
    assert clock.pending == 0


def test_cancel_before_timer_stays_a_cancel_when_the_timer_would_have_fired() -> None:
    clock = ManualClock()
    upstream = AbortController()
    d = deadline(upstream.signal, 100, "X", scheduler=clock)

    clock.advance(50)
    upstream.abort("caller cancelled")
    clock.advance(1000)

    assert d.signal.reason == "caller cancelled"
    assert timeout_of(d.signal) is None


def test_timer_before_cancel_stays_a_timeout_when_upstream_aborts_later() -> None:
    clock = ManualClock()
    upstream = AbortController()
    d = deadline(upstream.signal, 100, "WEB_FETCH_TIMEOUT", scheduler=clock)

    clock.advance(100)
    reason = d.signal.reason
    upstream.abort("caller cancelled")

    assert d.signal.reason is reason
    timed_out = timeout_of(d.signal, "WEB_FETCH_TIMEOUT")
    assert timed_out is reason
    assert str(timed_out) == "WEB_FETCH_TIMEOUT after 100ms"


def test_a_pre_aborted_upstream_aborts_the_deadline_at_once_and_is_not_a_timeout() -> None:
    clock = ManualClock()
    upstream = AbortController()
    upstream.abort("already cancelled")

    d = deadline(upstream.signal, 100, "X", scheduler=clock)

    assert d.signal.aborted is True
    assert d.signal.reason == "already cancelled"
    assert timeout_of(d.signal) is None
    assert clock.pending == 0
    clock.advance(1000)
    assert d.signal.reason == "already cancelled"


# -- deadline: the `<= 0` sentinel --------------------------------------------------------------


@pytest.mark.parametrize("timeout_ms", [0, -5])
def test_a_non_positive_budget_with_upstream_returns_upstream_itself(timeout_ms: float) -> None:
    clock = ManualClock()
    upstream = AbortController()

    d = deadline(upstream.signal, timeout_ms, "X", scheduler=clock)

    assert d.signal is upstream.signal
    assert clock.pending == 0
    assert upstream.signal.listener_count == 0


def test_a_zero_budget_never_times_out_and_upstream_abort_still_propagates() -> None:
    clock = ManualClock()
    upstream = AbortController()
    d = deadline(upstream.signal, 0, "X", scheduler=clock)

    clock.advance(MAX_TIMER_DELAY_MS)
    assert d.signal.aborted is False
    upstream.abort("caller cancelled")

    assert d.signal.reason == "caller cancelled"
    assert timeout_of(d.signal) is None


@pytest.mark.parametrize("timeout_ms", [0, -5])
def test_a_non_positive_budget_without_upstream_gives_a_never_aborting_signal(
    timeout_ms: float,
) -> None:
    clock = ManualClock()

    d = deadline(None, timeout_ms, "X", scheduler=clock)
    clock.advance(MAX_TIMER_DELAY_MS)
    d.dispose()
    d.dispose()

    assert isinstance(d.signal, AbortSignal)
    assert d.signal.aborted is False
    assert clock.pending == 0


def test_a_non_positive_budget_does_not_dispose_the_upstream_it_returns() -> None:
    upstream = AbortController()
    upstream.signal.add_listener(lambda _: None)

    deadline(upstream.signal, 0, "X", scheduler=ManualClock()).dispose()

    assert upstream.signal.listener_count == 1


# -- deadline: nesting --------------------------------------------------------------------------


def test_an_outer_timeout_reads_as_not_ours_to_an_inner_deadline() -> None:
    clock = ManualClock()
    outer = AbortController()
    outer.abort(TimeoutReason("OUTER_TIMEOUT", 30))

    inner = deadline(outer.signal, 100, "BASH_TIMEOUT", scheduler=clock)

    assert inner.signal.aborted is True
    assert timeout_of(inner.signal, "BASH_TIMEOUT") is None
    any_code = timeout_of(inner.signal)
    assert any_code is not None
    assert any_code.code == "OUTER_TIMEOUT"


def test_an_outer_deadline_firing_first_reads_as_the_outer_code_on_the_inner_signal() -> None:
    clock = ManualClock()
    outer = deadline(None, 30, "OUTER_TIMEOUT", scheduler=clock)
    inner = deadline(outer.signal, 100, "BASH_TIMEOUT", scheduler=clock)

    clock.advance(30)

    assert timeout_of(inner.signal, "BASH_TIMEOUT") is None
    assert timeout_of(inner.signal, "OUTER_TIMEOUT") is outer.signal.reason
    clock.advance(100)
    assert timeout_of(inner.signal, "BASH_TIMEOUT") is None


# -- deadline: real loop ------------------------------------------------------------------------


async def test_deadline_aborts_on_the_real_event_loop() -> None:
    d = deadline(None, 20, "X")

    reason = await d.signal.wait()

    assert isinstance(reason, TimeoutReason)
    assert str(reason) == "X after 20ms"


def test_deadline_without_a_running_loop_or_scheduler_raises_runtime_error() -> None:
    with pytest.raises(RuntimeError, match="running event loop"):
        deadline(None, 20, "X")


# -- timeout_of ---------------------------------------------------------------------------------


def test_timeout_of_an_active_signal_is_none() -> None:
    assert timeout_of(AbortController().signal) is None


def test_timeout_of_an_exception_carrier_returns_its_reason_itself() -> None:
    class Carrier(Exception):
        def __init__(self, reason: object) -> None:
            super().__init__("carried")
            self.reason = reason

    reason = TimeoutReason("TOOL_TIMEOUT", 5)

    assert timeout_of(Carrier(reason)) is reason


def test_timeout_of_a_plain_object_carrier_returns_its_reason_itself() -> None:
    reason = TimeoutReason("TOOL_TIMEOUT", 5)

    assert timeout_of(SimpleNamespace(reason=reason)) is reason


@pytest.mark.parametrize(
    "carrier",
    [
        Exception("other"),
        "a string",
        object(),
        SimpleNamespace(),
        SimpleNamespace(reason="cancelled"),
        SimpleNamespace(reason=Exception("other")),
        None,
    ],
    ids=["Exception", "str", "object", "no reason", "str reason", "other error reason", "None"],
)
def test_timeout_of_anything_without_a_timeout_reason_is_none(carrier: object) -> None:
    assert timeout_of(carrier) is None


def test_timeout_of_with_the_matching_code_returns_the_reason() -> None:
    reason = TimeoutReason("BASH_TIMEOUT", 100)

    assert timeout_of(SimpleNamespace(reason=reason), "BASH_TIMEOUT") is reason


def test_timeout_of_with_another_code_is_none() -> None:
    reason = TimeoutReason("BASH_TIMEOUT", 100)

    assert timeout_of(SimpleNamespace(reason=reason), "WEB_FETCH_TIMEOUT") is None


def test_timeout_of_a_carrier_whose_reason_raises_is_none() -> None:
    class Hostile:
        @property
        def reason(self) -> object:
            raise RuntimeError("no")

    assert timeout_of(Hostile()) is None


# -- idle_watchdog: validation ------------------------------------------------------------------


@pytest.mark.parametrize(
    "timeout_ms",
    [0, -5, math.nan, math.inf, MAX_TIMER_DELAY_MS + 1],
    ids=["0", "-5", "nan", "inf", "MAX+1"],
)
def test_idle_watchdog_rejects_a_budget_that_is_not_positive_finite_within_max(
    timeout_ms: float,
) -> None:
    with pytest.raises(ValueError) as caught:
        idle_watchdog(None, timeout_ms, "IDLE", scheduler=ManualClock())

    assert str(caught.value) == WATCHDOG_RANGE


def test_idle_watchdog_rejection_leaves_no_listener_on_upstream() -> None:
    upstream = AbortController().signal

    with pytest.raises(ValueError):
        idle_watchdog(upstream, 0, "IDLE", scheduler=ManualClock())

    assert upstream.listener_count == 0


# -- idle_watchdog: timing ----------------------------------------------------------------------


async def test_idle_watchdog_times_out_a_demand_after_timeout_ms_without_rejecting_next() -> None:
    clock = ManualClock()
    watchdog = idle_watchdog(None, 100, "LLM_STREAM_IDLE_TIMEOUT", scheduler=clock)
    demand: Demand[str] = Demand()
    pending = await started(watchdog.next(demand))

    clock.advance(99)
    assert watchdog.signal.aborted is False
    clock.advance(1)

    reason = timeout_of(watchdog.signal, "LLM_STREAM_IDLE_TIMEOUT")
    assert reason is not None
    assert str(reason) == "LLM_STREAM_IDLE_TIMEOUT after 100ms"
    await asyncio.sleep(0)
    assert not pending.done()  # the watchdog only aborts the signal
    demand.reject(reason)
    with pytest.raises(TimeoutReason) as caught:
        await pending
    assert caught.value is reason


async def test_idle_watchdog_does_not_count_think_time_between_demands() -> None:
    clock = ManualClock()
    watchdog = idle_watchdog(None, 100, "IDLE", scheduler=clock)
    demand: Demand[str] = Demand()

    first = await started(watchdog.next(demand))
    clock.advance(99)
    demand.resolve("one")
    assert await first == "one"
    clock.advance(10_000)
    assert watchdog.signal.aborted is False
    assert clock.pending == 0

    second = await started(watchdog.next(demand))
    clock.advance(99)
    assert watchdog.signal.aborted is False
    clock.advance(1)
    assert timeout_of(watchdog.signal, "IDLE") is not None
    demand.resolve("two")
    assert await second == "two"


async def test_pulse_re_arms_a_full_interval_from_now() -> None:
    clock = ManualClock()
    watchdog = idle_watchdog(None, 100, "IDLE", scheduler=clock)
    demand: Demand[str] = Demand()
    pending = await started(watchdog.next(demand))

    clock.advance(99)
    watchdog.pulse()
    clock.advance(99)
    assert watchdog.signal.aborted is False
    clock.advance(1)
    assert timeout_of(watchdog.signal, "IDLE") is not None

    demand.resolve("item")
    await pending


def test_pulse_with_nothing_outstanding_arms_no_timer() -> None:
    clock = ManualClock()
    watchdog = idle_watchdog(None, 100, "IDLE", scheduler=clock)

    watchdog.pulse()
    clock.advance(1000)

    assert clock.pending == 0
    assert watchdog.signal.aborted is False


async def test_pulse_after_dispose_arms_no_timer() -> None:
    clock = ManualClock()
    watchdog = idle_watchdog(None, 100, "IDLE", scheduler=clock)
    demand: Demand[str] = Demand()
    pending = await started(watchdog.next(demand))

    watchdog.dispose()
    watchdog.pulse()

    assert clock.pending == 0
    demand.resolve("item")
    await pending


async def test_dispose_stops_an_outstanding_timer_and_the_demand_still_returns_normally() -> None:
    clock = ManualClock()
    watchdog = idle_watchdog(None, 100, "IDLE", scheduler=clock)
    demand: Demand[str] = Demand()
    pending = await started(watchdog.next(demand))

    watchdog.dispose()
    clock.advance(10_000)
    demand.resolve("item")

    assert await pending == "item"
    assert watchdog.signal.aborted is False


def test_idle_watchdog_dispose_is_idempotent_and_detaches_from_upstream() -> None:
    upstream = AbortController()
    watchdog = idle_watchdog(upstream.signal, 100, "IDLE", scheduler=ManualClock())
    assert upstream.signal.listener_count == 1

    watchdog.dispose()
    watchdog.dispose()
    upstream.abort("stop")

    assert upstream.signal.listener_count == 0
    assert watchdog.signal.aborted is False


def test_idle_watchdog_with_exit_disposes() -> None:
    upstream = AbortController()

    with idle_watchdog(upstream.signal, 100, "IDLE", scheduler=ManualClock()):
        pass

    assert upstream.signal.listener_count == 0


async def test_next_after_dispose_raises_without_touching_the_iterator() -> None:
    watchdog = idle_watchdog(None, 100, "IDLE", scheduler=ManualClock())
    demand: Demand[str] = Demand()
    watchdog.dispose()

    with pytest.raises(RuntimeError) as caught:
        await watchdog.next(demand)

    assert str(caught.value) == "idle_watchdog is disposed"
    assert demand.calls == 0


# -- idle_watchdog: what next returns and raises ------------------------------------------------


async def test_next_returns_the_iterator_item_unchanged_and_clears_the_timer() -> None:
    clock = ManualClock()
    watchdog = idle_watchdog(None, 100, "IDLE", scheduler=clock)
    demand: Demand[object] = Demand()
    item = object()
    pending = await started(watchdog.next(demand))
    assert clock.pending == 1

    demand.resolve(item)

    assert await pending is item
    assert clock.pending == 0


async def test_next_re_raises_stop_async_iteration_and_clears_the_timer() -> None:
    clock = ManualClock()
    watchdog = idle_watchdog(None, 100, "IDLE", scheduler=clock)

    async def empty() -> Any:
        return
        yield

    with pytest.raises(StopAsyncIteration):
        await watchdog.next(empty())

    assert clock.pending == 0


async def test_next_re_raises_the_iterator_exception_unchanged() -> None:
    clock = ManualClock()
    watchdog = idle_watchdog(None, 100, "IDLE", scheduler=clock)
    demand: Demand[str] = Demand()
    error = ConnectionResetError("stream dropped")
    pending = await started(watchdog.next(demand))

    demand.reject(error)

    with pytest.raises(ConnectionResetError) as caught:
        await pending
    assert caught.value is error
    assert clock.pending == 0
    assert watchdog.signal.aborted is False


async def test_a_concurrent_next_is_rejected_without_disturbing_the_outstanding_one() -> None:
    clock = ManualClock()
    watchdog = idle_watchdog(None, 100, "IDLE", scheduler=clock)
    demand: Demand[str] = Demand()
    other: Demand[str] = Demand()
    pending = await started(watchdog.next(demand))

    with pytest.raises(RuntimeError) as caught:
        await watchdog.next(other)

    assert str(caught.value) == "idle_watchdog next is already outstanding"
    assert other.calls == 0
    assert clock.pending == 1
    clock.advance(99)
    assert watchdog.signal.aborted is False  # the outstanding timer was not re-armed or cleared
    clock.advance(1)
    assert timeout_of(watchdog.signal, "IDLE") is not None
    demand.resolve("item")
    assert await pending == "item"


async def test_next_is_available_again_once_the_outstanding_one_settles() -> None:
    watchdog = idle_watchdog(None, 100, "IDLE", scheduler=ManualClock())
    demand: Demand[str] = Demand()
    first = await started(watchdog.next(demand))
    demand.reject(ValueError("failed"))
    with pytest.raises(ValueError, match="failed"):
        await first

    second = await started(watchdog.next(demand))
    demand.resolve("again")

    assert await second == "again"


# -- idle_watchdog: upstream --------------------------------------------------------------------


async def test_an_upstream_abort_is_never_reclassified_as_an_idle_timeout() -> None:
    clock = ManualClock()
    upstream = AbortController()
    watchdog = idle_watchdog(upstream.signal, 100, "IDLE", scheduler=clock)
    demand: Demand[str] = Demand()
    pending = await started(watchdog.next(demand))

    clock.advance(50)
    upstream.abort("caller cancelled")
    clock.advance(1000)

    assert watchdog.signal.reason == "caller cancelled"
    assert timeout_of(watchdog.signal) is None
    demand.reject(RuntimeError("caller cancelled"))
    with pytest.raises(RuntimeError):
        await pending


def test_a_pre_aborted_upstream_aborts_the_watchdog_signal_at_once() -> None:
    upstream = AbortController()
    upstream.abort("caller cancelled")

    watchdog = idle_watchdog(upstream.signal, 100, "IDLE", scheduler=ManualClock())

    assert watchdog.signal.reason == "caller cancelled"
    assert timeout_of(watchdog.signal) is None


async def test_an_idle_timeout_is_kept_when_upstream_aborts_later() -> None:
    clock = ManualClock()
    upstream = AbortController()
    watchdog = idle_watchdog(upstream.signal, 100, "IDLE", scheduler=clock)
    demand: Demand[str] = Demand()
    pending = await started(watchdog.next(demand))

    clock.advance(100)
    upstream.abort("caller cancelled")

    assert timeout_of(watchdog.signal, "IDLE") is not None
    assert upstream.signal.listener_count == 0
    demand.resolve("item")
    await pending


async def test_the_watchdog_signal_is_one_stable_object_across_demands() -> None:
    watchdog = idle_watchdog(None, 100, "IDLE", scheduler=ManualClock())
    demand: Demand[str] = Demand()
    signal = watchdog.signal

    for item in ("a", "b"):
        pending = await started(watchdog.next(demand))
        demand.resolve(item)
        await pending

    assert watchdog.signal is signal
