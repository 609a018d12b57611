"""A manual clock for deterministic timer tests: a `Scheduler` whose time only moves on `advance()`.

Owns: virtual time and the ordered firing of due callbacks. Use it with `deadline(...,
scheduler=clock)` and `idle_watchdog(..., scheduler=clock)` instead of sleeping in tests.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

__all__ = ["ManualClock"]


class _Timer:
    __slots__ = ("callback", "cancelled", "due")

    def __init__(self, due: float, callback: Callable[[], None]) -> None:
        self.due = due
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """`call_later` schedules on virtual time; `advance(ms)` fires what falls due, in order."""

    def __init__(self) -> None:
        self.now_ms = 0.0
        self._heap: list[tuple[float, int, _Timer]] = []
        self._seq = itertools.count()

    def call_later(self, delay_ms: float, callback: Callable[[], None]) -> _Timer:
        timer = _Timer(self.now_ms + delay_ms, callback)
        heapq.heappush(self._heap, (timer.due, next(self._seq), timer))
        return timer

    @property
    def pending(self) -> int:
        """Timers scheduled and not cancelled."""
        return sum(1 for _, _, t in self._heap if not t.cancelled)

    def advance(self, ms: float) -> None:
        """Move time forward by `ms`, running every callback that falls due, earliest first."""
        target = self.now_ms + ms
        while self._heap and self._heap[0][0] <= target:
            due, _, timer = heapq.heappop(self._heap)
            if timer.cancelled:
                continue
            self.now_ms = due
            timer.cancelled = True
            timer.callback()
        self.now_ms = target
