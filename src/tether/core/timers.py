"""Loop timers: every tether timer of one event loop behind a single asyncio timer.

Owns `LoopTimers` (a heap of pending callbacks, armed with one `loop.call_at` for the earliest)
and `loop_timers(loop)`. This is what `deadline` and `idle_watchdog` use by default. Why not one
`loop.call_later` per timer: nearly every tether timer is cancelled long before it fires (a tool
budget, an idle watchdog re-armed per chunk), and an asyncio `TimerHandle` costs a Python object,
a debug check and a heap push to create, a loop callback to cancel, and then lingers cancelled in
the loop's heap until the loop next runs. Here a timer is one small object and a tuple on a heap;
cancelling it only drops its callback — and takes it off the heap at once when it is the heap's
last entry (a timer cancelled before any later one was scheduled, the usual case of a budget: no
cancelled entry left behind). Other cancelled entries are discarded when they reach the top of
the heap or, once they outnumber the live ones, by one compaction (a timer is its own heap
entry) — so the heap stays within about twice the live timers and never grows with the number of
calls.

Callbacks run in order of due time (then of scheduling), on the loop, from the one asyncio timer's
callback. They do not run in the context they were scheduled from (tether's timers only abort
signals); an exception from one is reported to the loop's exception handler and the rest still
run (a `BaseException` propagates to the loop, and the rest run on its next iteration). Not
thread-safe: schedule and cancel on the loop's thread, as with `loop.call_later`.
"""

from __future__ import annotations

import asyncio
import heapq
import time
import weakref
from collections.abc import Callable
from typing import Final

__all__ = ["LoopTimer", "LoopTimers", "loop_timers"]

_monotonic: Final = time.monotonic
_CLOCK_RESOLUTION: Final = time.get_clock_info("monotonic").resolution
"""What asyncio's own loop adds to `time()` when it decides which timers are due."""
_COMPACT_AT: Final = 64
"""Cancelled entries tolerated before a compaction is considered (it runs once they are also
more than half of the heap)."""


class LoopTimer(list):  # type: ignore[type-arg]
    """One scheduled callback, and its own heap entry: `[when, seq, callback, timers]` (a list
    compares by `when`, then by the unique `seq`). `cancel()` is idempotent and a no-op once the
    timer has fired."""

    __slots__ = ()

    def cancel(self) -> None:
        if self[2] is None:
            return
        self[2] = None
        timers: LoopTimers = self[3]
        heap = timers._heap
        if heap[-1] is self:  # a leaf (the newest, not sifted up): gone at once, heap intact
            heap.pop()
            return
        timers._cancelled += 1
        if timers._cancelled > _COMPACT_AT and timers._cancelled * 2 > len(timers._heap):
            timers._compact()

    @property
    def pending(self) -> bool:
        """Whether the callback is still due to run."""
        return self[2] is not None


class LoopTimers:
    """The timers of one event loop."""

    __slots__ = (
        "_armed",
        "_armed_when",
        "_cancelled",
        "_heap",
        "_loop",
        "_monotonic",
        "_seq",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = weakref.ref(loop)  # weak: the registry below must not keep loops alive
        self._monotonic = type(loop).time is asyncio.BaseEventLoop.time  # loop.time() is
        self._heap: list[LoopTimer] = []  # time.monotonic() then: skip the method call
        self._seq = 0
        self._cancelled = 0
        self._armed: asyncio.TimerHandle | None = None
        self._armed_when = 0.0

    def call_later(self, delay_ms: float, callback: Callable[[], None]) -> LoopTimer:
        """Run `callback()` once, `delay_ms` milliseconds from now, unless cancelled first."""
        if self._monotonic:
            now = _monotonic()
        else:
            loop = self._loop()
            if loop is None:
                raise RuntimeError("the event loop of these timers is gone")
            now = loop.time()
        when = now + delay_ms / 1000.0
        seq = self._seq = self._seq + 1
        timer = LoopTimer((when, seq, callback, self))
        heapq.heappush(self._heap, timer)
        if self._armed is None or when < self._armed_when:
            self._arm(when)
        return timer

    def __len__(self) -> int:
        """Entries on the heap, cancelled ones not yet discarded included (for leak checks)."""
        return len(self._heap)

    def _arm(self, when: float) -> None:
        armed = self._armed
        if armed is not None:
            armed.cancel()
        loop = self._loop()
        if loop is None:
            self._armed = None
            return
        self._armed = loop.call_at(when, self._fire)
        self._armed_when = when

    def _fire(self) -> None:
        self._armed = None
        loop = self._loop()
        if loop is None:
            return
        heap = self._heap
        due = loop.time() + _CLOCK_RESOLUTION
        try:
            while heap and heap[0][0] <= due:
                timer = heapq.heappop(heap)
                callback = timer[2]
                if callback is None:
                    self._cancelled -= 1
                    continue
                timer[2] = None
                try:
                    callback()
                except Exception as exc:
                    loop.call_exception_handler(
                        {"message": "tether timer callback failed", "exception": exc}
                    )
        finally:  # also when a callback raised a BaseException: the rest must not get stuck
            self._discard_cancelled_top()
            # A callback may have armed for a timer of its own, later than what is now first.
            if heap and (self._armed is None or heap[0][0] < self._armed_when):
                self._arm(heap[0][0])

    def _discard_cancelled_top(self) -> None:
        heap = self._heap
        while heap and heap[0][2] is None:
            heapq.heappop(heap)
            self._cancelled -= 1

    def _compact(self) -> None:
        heap = self._heap
        heap[:] = [timer for timer in heap if timer[2] is not None]
        heapq.heapify(heap)
        self._cancelled = 0
        # The armed asyncio timer stays: it fires, finds nothing due and re-arms for whatever is
        # then first. Cancelling it here would make the next timer arm a new one — a cancelled
        # TimerHandle left in the loop's heap per compaction.


_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopTimers] = (
    weakref.WeakKeyDictionary()
)
"""Only for loops that take no attributes (no `__dict__`, e.g. uvloop's). Its values can keep
their loop alive (the armed asyncio timer holds it), so such a loop's timers live as long as the
process; every pure-Python asyncio loop keeps its timers on itself instead."""


def loop_timers(loop: asyncio.AbstractEventLoop) -> LoopTimers:
    """The timers of `loop`, created on first use and kept on the loop itself (so they go with
    it: loop → timers → armed asyncio timer → loop is an ordinary collectable cycle)."""
    try:
        return loop._tether_timers  # type: ignore[attr-defined,no-any-return]
    except AttributeError:
        pass
    timers = _by_loop.get(loop)
    if timers is None:
        timers = LoopTimers(loop)
        try:
            loop._tether_timers = timers  # type: ignore[attr-defined]
        except AttributeError:
            _by_loop[loop] = timers
    return timers
