"""Contract of `tether.core.timers`: every tether timer of a loop behind one asyncio timer.

- `loop_timers(loop).call_later(delay_ms, callback)` runs `callback()` once, on the loop, no
  earlier than `delay_ms` from now, and returns a `LoopTimer` with `cancel()` and `pending`.
- Callbacks due together run in order of due time, then of scheduling.
- `cancel()` stops a pending timer for good; it is idempotent and a no-op after the timer fired.
- Scheduling a timer earlier than the armed one re-arms the one asyncio timer; a timer scheduled
  from a callback does not delay an earlier one still on the heap.
- An exception from a callback goes to the loop's exception handler; the others still run.
- The heap (`len(timers)`) stays bounded however many timers are scheduled and cancelled:
  cancelled entries are dropped lazily and compacted once more than 64 are cancelled and they are
  over half the heap. Timers still fire after a compaction.
- `loop_timers` returns one `LoopTimers` per loop and does not keep the loop alive, not even
  while a timer is still armed or a pending callback references the loop.

Every test runs on a real event loop with real, short delays.
"""

from __future__ import annotations

import asyncio
import gc
import math
import time
import weakref
from collections.abc import Callable
from functools import partial
from typing import Any

from tether.core.timers import LoopTimer, LoopTimers, loop_timers

RESOLUTION = time.get_clock_info("monotonic").resolution
COMPACT_AT = 64
"""Cancelled entries tolerated before a compaction is considered (documented in the module)."""


def setter(future: asyncio.Future[None]) -> Callable[[], None]:
    """A callback that resolves `future`."""
    return partial(future.set_result, None)


# -- firing -------------------------------------------------------------------------------------


async def test_a_callback_runs_once_after_its_delay() -> None:
    loop = asyncio.get_running_loop()
    timers = loop_timers(loop)
    ran_at: list[float] = []
    fired = loop.create_future()

    def callback() -> None:
        ran_at.append(loop.time())
        fired.set_result(None)

    start = loop.time()
    timer = timers.call_later(20, callback)
    assert timer.pending is True
    await fired
    await asyncio.sleep(0.02)

    assert len(ran_at) == 1
    assert ran_at[0] - start >= 0.020 - RESOLUTION
    assert timer.pending is False
    assert len(timers) == 0


async def test_call_later_returns_a_loop_timer_entry() -> None:
    timers = loop_timers(asyncio.get_running_loop())

    def callback() -> None:
        pass

    timer = timers.call_later(50, callback)

    assert isinstance(timer, LoopTimer)
    assert timer[2] is callback
    assert timer[3] is timers
    assert len(timers) == 1
    timer.cancel()


async def test_callbacks_due_together_run_in_order_of_due_time() -> None:
    loop = asyncio.get_running_loop()
    timers = loop_timers(loop)
    ran: list[str] = []
    done = loop.create_future()

    scheduled = {
        label: timers.call_later(delay, partial(ran.append, label))
        for label, delay in [("30ms", 30), ("10ms", 10), ("20ms", 20)]
    }
    timers.call_later(30, setter(done))  # due last: the longest delay, scheduled last
    time.sleep(0.035)  # block the loop: all four are due when the one asyncio timer fires
    await done

    # In due order: 10, 20, 30 ms unless the scheduling calls themselves were ~10 ms apart.
    assert ran == sorted(scheduled, key=lambda label: scheduled[label][0])
    assert sorted(ran) == ["10ms", "20ms", "30ms"]


async def test_callbacks_with_the_same_delay_run_in_scheduling_order() -> None:
    loop = asyncio.get_running_loop()
    timers = loop_timers(loop)
    ran: list[int] = []
    done = loop.create_future()

    for i in range(10):
        timers.call_later(2, partial(ran.append, i))
    timers.call_later(2, setter(done))
    await done

    assert ran == list(range(10))


class TickingClockLoop(asyncio.SelectorEventLoop):
    """A real loop whose clock advances in 10 ms ticks (as libuv's clock, which uvloop reads, is
    updated once per loop iteration): timers scheduled within one tick share their due time."""

    TICK = 0.01

    def time(self) -> float:
        return math.floor(super().time() / self.TICK) * self.TICK


async def schedule_tied(ran: list[int]) -> list[float]:
    """Schedule ten timers within one clock tick; return their due times once all have run."""
    loop = asyncio.get_running_loop()
    timers = loop_timers(loop)
    for _ in range(5):  # retried only if the thread was preempted past the end of a tick
        tick = loop.time()
        while loop.time() == tick:  # start at a fresh tick: ~10 ms to schedule in
            pass
        scheduled = [timers.call_later(1, partial(ran.append, i)) for i in range(10)]
        if len({timer[0] for timer in scheduled}) == 1:
            break
        for timer in scheduled:
            timer.cancel()
    done = loop.create_future()
    timers.call_later(1, setter(done))
    await done
    return [timer[0] for timer in scheduled]


def test_callbacks_with_equal_due_times_run_in_scheduling_order() -> None:
    loop = TickingClockLoop()
    ran: list[int] = []
    try:
        due_times = loop.run_until_complete(schedule_tied(ran))
    finally:
        loop.close()

    assert len(set(due_times)) == 1
    assert ran == list(range(10))


async def test_a_timer_earlier_than_the_armed_one_fires_on_time() -> None:
    loop = asyncio.get_running_loop()
    timers = loop_timers(loop)
    ran_at: list[float] = []
    fired = loop.create_future()

    def short_callback() -> None:
        ran_at.append(loop.time())
        fired.set_result(None)

    long = timers.call_later(60_000, lambda: None)  # armed first: the short one re-arms earlier
    timers.call_later(1, short_callback)
    await fired

    assert ran_at[0] < long[0]  # not when the long one is due, however slow the loop
    assert long.pending is True
    long.cancel()


async def test_a_timer_later_than_the_armed_one_fires_after_the_earlier_one() -> None:
    loop = asyncio.get_running_loop()
    timers = loop_timers(loop)
    ran: list[str] = []
    done = loop.create_future()

    timers.call_later(1, partial(ran.append, "first"))
    timers.call_later(5, partial(ran.append, "second"))
    timers.call_later(6, setter(done))
    await done

    assert ran == ["first", "second"]


async def test_a_timer_scheduled_from_a_callback_does_not_delay_an_earlier_one() -> None:
    loop = asyncio.get_running_loop()
    timers = loop_timers(loop)
    ran_at: list[float] = []
    rescheduled: list[LoopTimer] = []
    fired = loop.create_future()

    def reschedule() -> None:
        rescheduled.append(timers.call_later(60_000, lambda: None))

    def second() -> None:
        ran_at.append(loop.time())
        fired.set_result(None)

    timers.call_later(1, reschedule)
    timers.call_later(5, second)
    await fired

    # The 5 ms timer fires on its own time, not with the 60 s one its predecessor scheduled.
    assert ran_at[0] < rescheduled[0][0]
    assert rescheduled[0].pending is True
    rescheduled[0].cancel()


# -- cancel -------------------------------------------------------------------------------------


async def test_a_cancelled_timer_never_runs_and_is_no_longer_pending() -> None:
    loop = asyncio.get_running_loop()
    timers = loop_timers(loop)
    ran: list[str] = []
    done = loop.create_future()

    timer = timers.call_later(1, partial(ran.append, "cancelled"))
    timers.call_later(5, setter(done))
    timer.cancel()
    await done

    assert timer.pending is False
    assert ran == []


async def test_cancel_is_idempotent() -> None:
    timers = loop_timers(asyncio.get_running_loop())
    ran: list[int] = []
    cancelled = [timers.call_later(50, partial(ran.append, i)) for i in range(40)]
    live = timers.call_later(50, partial(ran.append, -1))  # last: no cancelled one is a leaf

    for timer in cancelled:
        timer.cancel()
        timer.cancel()

    # 40 cancelled entries, each counted once, stay below the compaction threshold; counted
    # twice they would cross it (80 > 64, and over half of 41) and be compacted away.
    assert COMPACT_AT < 2 * 40
    assert len(timers) == 41
    assert all(timer.pending is False for timer in cancelled)
    assert live.pending is True
    live.cancel()


async def test_a_timer_cancelled_before_any_later_one_was_scheduled_leaves_the_heap() -> None:
    timers = loop_timers(asyncio.get_running_loop())
    live = timers.call_later(50, lambda: None)
    budget = timers.call_later(60_000, lambda: None)

    budget.cancel()

    assert len(timers) == 1
    assert live.pending is True
    live.cancel()
    assert len(timers) == 0


async def test_cancel_after_firing_is_a_no_op() -> None:
    loop = asyncio.get_running_loop()
    timers = loop_timers(loop)
    ran: list[int] = []
    done = loop.create_future()
    fired = [timers.call_later(1, partial(ran.append, i)) for i in range(70)]
    timers.call_later(1, setter(done))
    await done
    others = [timers.call_later(50, partial(ran.append, -2)) for _ in range(10)]
    live = timers.call_later(50, partial(ran.append, -1))  # last: no cancelled one is a leaf
    for timer in others:
        timer.cancel()

    for timer in fired:
        timer.cancel()

    # Had the fired timers counted as cancelled (80 > 64, over half of 11), the heap would have
    # been compacted down to the one live entry.
    assert len(timers) == 11
    assert ran == list(range(70))
    assert all(timer.pending is False for timer in fired)
    assert live.pending is True
    live.cancel()


# -- exceptions ---------------------------------------------------------------------------------


async def test_an_exception_in_a_callback_is_reported_and_later_callbacks_still_run() -> None:
    loop = asyncio.get_running_loop()
    timers = loop_timers(loop)
    reported: list[dict[str, Any]] = []
    ran: list[str] = []
    done = loop.create_future()
    error = ValueError("boom")

    def boom() -> None:
        ran.append("boom")
        raise error

    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        timers.call_later(1, boom)
        timers.call_later(10, partial(ran.append, "after"))
        timers.call_later(10, setter(done))
        time.sleep(0.015)  # block the loop: all three run from one firing
        await done
    finally:
        loop.set_exception_handler(previous)

    assert reported == [{"message": "tether timer callback failed", "exception": error}]
    assert ran == ["boom", "after"]


# -- heap size and compaction -------------------------------------------------------------------


async def test_ten_thousand_timers_scheduled_and_cancelled_keep_the_heap_bounded() -> None:
    timers = loop_timers(asyncio.get_running_loop())
    live = timers.call_later(50, lambda: None)
    largest = 0

    for _ in range(10_000):
        timers.call_later(50, lambda: None).cancel()
        largest = max(largest, len(timers))

    assert largest <= 2 * COMPACT_AT + 2
    assert len(timers) <= 2 * COMPACT_AT + 2
    live.cancel()


async def test_ten_thousand_timers_scheduled_then_all_cancelled_leave_a_small_heap() -> None:
    timers = loop_timers(asyncio.get_running_loop())
    scheduled = [timers.call_later(50, lambda: None) for _ in range(10_000)]

    for timer in scheduled:
        timer.cancel()

    assert len(timers) <= 2 * COMPACT_AT + 2


async def test_a_live_timer_survives_compaction_and_fires() -> None:
    loop = asyncio.get_running_loop()
    timers = loop_timers(loop)
    fired = loop.create_future()
    live = timers.call_later(10, setter(fired))

    for _ in range(1_000):
        timers.call_later(5, lambda: None).cancel()
    assert len(timers) < 1_000
    await fired

    assert live.pending is False


async def test_a_timer_scheduled_after_compaction_fires() -> None:
    loop = asyncio.get_running_loop()
    timers = loop_timers(loop)
    for _ in range(1_000):
        timers.call_later(50, lambda: None).cancel()
    fired = loop.create_future()

    timer = timers.call_later(1, setter(fired))
    await fired

    assert timer.pending is False
    assert len(timers) == 0


async def test_a_timer_later_than_a_compacted_armed_entry_still_fires() -> None:
    # The asyncio timer stays armed for the (now compacted) first entry; it fires, finds
    # nothing due and re-arms for the new timer.
    loop = asyncio.get_running_loop()
    timers = loop_timers(loop)
    for _ in range(1_000):
        timers.call_later(2, lambda: None).cancel()
    fired = loop.create_future()

    timer = timers.call_later(10, setter(fired))
    await fired

    assert timer.pending is False
    assert len(timers) == 0


# -- one LoopTimers per loop --------------------------------------------------------------------


def test_loop_timers_is_one_object_per_loop() -> None:
    first = asyncio.new_event_loop()
    second = asyncio.new_event_loop()
    try:
        timers = loop_timers(first)
        other = loop_timers(second)

        assert isinstance(timers, LoopTimers)
        assert loop_timers(first) is timers
        assert other is not timers
        assert loop_timers(second) is other
        assert loop_timers(first) is timers
    finally:
        first.close()
        second.close()


async def use_timers() -> None:
    loop = asyncio.get_running_loop()
    timers = loop_timers(loop)
    fired = loop.create_future()
    timers.call_later(1, setter(fired))
    await fired


def test_loop_timers_does_not_keep_its_loop_alive() -> None:
    loop = asyncio.new_event_loop()
    loop.run_until_complete(use_timers())
    loop.close()
    ref = weakref.ref(loop)

    del loop
    gc.collect()

    assert ref() is None


async def leave_a_cancelled_timer_armed() -> None:
    loop = asyncio.get_running_loop()
    loop_timers(loop).call_later(50, lambda: None).cancel()  # the asyncio timer stays armed


def test_a_loop_closed_while_a_timer_is_still_armed_is_not_kept_alive() -> None:
    loop = asyncio.new_event_loop()
    loop.run_until_complete(leave_a_cancelled_timer_armed())
    loop.close()
    ref = weakref.ref(loop)

    del loop
    gc.collect()

    assert ref() is None


async def leave_a_loop_bound_callback_pending() -> None:
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def cancel() -> None:  # holds the future, which holds the loop
        future.cancel()

    loop_timers(loop).call_later(50, cancel)


def test_a_loop_closed_with_a_pending_loop_bound_callback_is_not_kept_alive() -> None:
    loop = asyncio.new_event_loop()
    loop.run_until_complete(leave_a_loop_bound_callback_pending())
    loop.close()
    ref = weakref.ref(loop)

    del loop
    gc.collect()

    assert ref() is None
