"""The timeout library: pure helpers that own the *timing and classification* half of a timeout.

Owns: `TimeoutReason` (the abort reason a timer uses), `clamp_timeout`, `deadline`, `timeout_of`,
`idle_watchdog`, and the `Scheduler` seam that makes their timers injectable (a manual clock lives
in `tether.testing`). Does not own termination: a deadline only aborts a signal; the capability
that owns the work (a process group, an HTTP stream) stops it. No state across calls, no services.

Codes are scoped: `timeout_of(signal, "BASH_TIMEOUT")` is only set when *that* deadline fired
first, so an outer deadline's expiry reads as an ordinary upstream cancel to an inner owner.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import Final, Protocol, TypeVar

from .signals import AbortSignal
from .timers import loop_timers

_TIMER_NUMBERS: Final = frozenset({int, float})

__all__ = [
    "MAX_TIMER_DELAY_MS",
    "Deadline",
    "IdleWatchdog",
    "Scheduler",
    "TimeoutReason",
    "TimerHandle",
    "clamp_timeout",
    "deadline",
    "format_ms",
    "idle_watchdog",
    "timeout_of",
]

T = TypeVar("T")

MAX_TIMER_DELAY_MS: Final = 2_147_483_647
"""The largest timer delay accepted (parity with the upstream runtime's 32-bit timer limit)."""


def format_ms(ms: float) -> str:
    """Render milliseconds as the messages print them: `100`, not `100.0`; `1.5` stays `1.5`."""
    if math.isfinite(ms) and ms == int(ms) and abs(ms) < 1e21:
        return str(int(ms))
    return repr(ms)


class TimeoutReason(Exception):
    """The abort reason of a timer: `TimeoutReason("BASH_TIMEOUT", 100)` reads `BASH_TIMEOUT after
    100ms`. Internal: capabilities translate it into their own public error."""

    name: Final = "TimeoutReason"

    def __init__(self, code: str, timeout_ms: float) -> None:
        super().__init__(f"{code} after {format_ms(timeout_ms)}ms")
        self.code = code
        self.timeout_ms = timeout_ms


class TimerHandle(Protocol):
    """What a scheduler returns: something that can be cancelled (idempotently)."""

    def cancel(self) -> None: ...


class Scheduler(Protocol):
    """Runs `callback` once after `delay_ms`. The default uses the running loop's `call_later`."""

    def call_later(self, delay_ms: float, callback: Callable[[], None]) -> TimerHandle: ...


class _LoopScheduler:
    """The running loop's shared timers (`tether.core.timers`)."""

    __slots__ = ()

    def call_later(self, delay_ms: float, callback: Callable[[], None]) -> TimerHandle:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError("timers need a running event loop (or pass scheduler=...)") from None
        return loop_timers(loop).call_later(delay_ms, callback)


LOOP_SCHEDULER: Final[Scheduler] = _LoopScheduler()


def _is_number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def clamp_timeout(
    requested: float | None, default: float, maximum: float, name: str = "timeout_ms"
) -> float:
    """`min(requested or default, maximum)`; a given `requested` must be positive and finite.

    Raises `ValueError("<name> must be a positive finite number")` otherwise. `default` and
    `maximum` are trusted (a default above the maximum is capped).
    """
    if requested is not None and (
        not _is_number(requested) or not math.isfinite(requested) or requested <= 0
    ):
        raise ValueError(f"{name} must be a positive finite number")
    return min(default if requested is None else requested, maximum)


def _check_delay(timeout_ms: float, what: str) -> None:
    if not _is_number(timeout_ms) or not (0 < timeout_ms <= MAX_TIMER_DELAY_MS):
        raise ValueError(
            f"{what} timeout_ms must be a positive finite number no greater than "
            f"{MAX_TIMER_DELAY_MS}"
        )


class Deadline:
    """A signal that aborts when `upstream` aborts or the timer fires, whichever is first.

    `dispose()` (or leaving the `with` block) cancels the timer and detaches from `upstream`;
    afterwards the signal never changes again.
    """

    __slots__ = ("_code", "_key", "_ms", "_timer", "_upstream", "signal")

    signal: AbortSignal

    def __init__(
        self, upstream: AbortSignal | None, timeout_ms: float, code: str, scheduler: Scheduler
    ) -> None:
        self._timer: TimerHandle | None = None
        self._upstream: AbortSignal | None = None
        if not (type(timeout_ms) in _TIMER_NUMBERS and 0 < timeout_ms <= MAX_TIMER_DELAY_MS):
            if _is_number(timeout_ms) and timeout_ms <= 0:
                self.signal = upstream if upstream is not None else AbortSignal()
                return
            _check_delay(timeout_ms, "deadline")
        self._code = code
        self._ms = timeout_ms
        signal = self.signal = AbortSignal()
        if upstream is not None:
            if upstream._aborted:
                signal._abort(upstream._reason)
                return
            self._key = upstream._subscribe(self._upstream_aborted)
            self._upstream = upstream
        try:
            self._timer = scheduler.call_later(timeout_ms, self._expire)
        except BaseException:
            self._stop()  # no timer (no running loop): leave nothing on upstream
            raise
        if signal._aborted:  # upstream aborted from another thread while we subscribed
            self._stop()

    def _expire(self) -> None:
        self._timer = None
        self._stop()
        self.signal._abort(TimeoutReason(self._code, self._ms))

    def _upstream_aborted(self, reason: object) -> None:
        self._stop()
        self.signal._abort(reason)

    def dispose(self) -> None:
        """Cancel the timer and detach from upstream. Idempotent."""
        timer = self._timer
        if timer is not None:
            self._timer = None
            timer.cancel()
        upstream = self._upstream
        if upstream is not None:
            self._upstream = None
            upstream._unsubscribe(self._key)

    _stop = dispose

    def __enter__(self) -> Deadline:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.dispose()


def deadline(
    upstream: AbortSignal | None,
    timeout_ms: float,
    code: str,
    *,
    scheduler: Scheduler = LOOP_SCHEDULER,
) -> Deadline:
    """Derive a signal that also aborts with `TimeoutReason(code, timeout_ms)` after `timeout_ms`.

    `timeout_ms <= 0` means no timer: the signal is `upstream` itself (or a never-aborting signal).
    Raises `ValueError` for a non-finite budget or one above `MAX_TIMER_DELAY_MS`. A pre-aborted
    upstream makes the signal aborted at once with upstream's reason (never a timeout).
    """
    return Deadline(upstream, timeout_ms, code, scheduler)


def timeout_of(x: object, code: str | None = None) -> TimeoutReason | None:
    """The `TimeoutReason` carried by `x.reason` (a signal or any carrier), if it matches `code`."""
    if type(x) is AbortSignal:
        reason = x._reason
    else:
        try:
            reason = getattr(x, "reason", None)
        except Exception:
            return None
    if isinstance(reason, TimeoutReason) and (code is None or reason.code == code):
        return reason
    return None


class IdleWatchdog:
    """An idle timer around async-iterator demand; armed only while one `next()` is outstanding."""

    __slots__ = (
        "_code",
        "_detach",
        "_disposed",
        "_ms",
        "_outstanding",
        "_scheduler",
        "_timer",
        "signal",
    )

    def __init__(
        self, upstream: AbortSignal | None, timeout_ms: float, code: str, scheduler: Scheduler
    ) -> None:
        _check_delay(timeout_ms, "idle_watchdog")
        self._ms = timeout_ms
        self._code = code
        self._scheduler = scheduler
        self._timer: TimerHandle | None = None
        self._outstanding = False
        self._disposed = False
        self._detach: Callable[[], None] | None = None
        self.signal: AbortSignal = AbortSignal()
        if upstream is not None:
            if upstream.aborted:
                self.signal._abort(upstream.reason)
            else:
                self._detach = upstream.add_listener(self._upstream_aborted)

    def _upstream_aborted(self, reason: object) -> None:
        self._detach = None
        self._clear_timer()
        self.signal._abort(reason)

    def _expire(self) -> None:
        self._timer = None
        if self._detach is not None:
            self._detach()
            self._detach = None
        self.signal._abort(TimeoutReason(self._code, self._ms))

    def _arm(self) -> None:
        self._clear_timer()
        if not self.signal.aborted:
            self._timer = self._scheduler.call_later(self._ms, self._expire)

    def _clear_timer(self) -> None:
        timer = self._timer
        if timer is not None:
            self._timer = None
            timer.cancel()

    async def next(self, iterator: AsyncIterator[T]) -> T:
        """Await `iterator.__anext__()` with the idle timer armed; return or raise what it does.

        Raises `RuntimeError("idle_watchdog is disposed")` after dispose and
        `RuntimeError("idle_watchdog next is already outstanding")` for a concurrent call.
        """
        if self._disposed:
            raise RuntimeError("idle_watchdog is disposed")
        if self._outstanding:
            raise RuntimeError("idle_watchdog next is already outstanding")
        self._outstanding = True
        self._arm()
        try:
            return await iterator.__anext__()
        finally:
            self._outstanding = False
            self._clear_timer()

    def pulse(self) -> None:
        """Re-arm a full interval from now, if a `next()` is outstanding and not disposed."""
        if self._outstanding and not self._disposed:
            self._arm()

    def dispose(self) -> None:
        """Stop the timer and detach from upstream. Idempotent."""
        self._disposed = True
        self._clear_timer()
        if self._detach is not None:
            self._detach()
            self._detach = None

    def __enter__(self) -> IdleWatchdog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.dispose()


def idle_watchdog(
    upstream: AbortSignal | None,
    timeout_ms: float,
    code: str,
    *,
    scheduler: Scheduler = LOOP_SCHEDULER,
) -> IdleWatchdog:
    """A stable signal that aborts with `TimeoutReason(code, timeout_ms)` after `timeout_ms` of
    waiting on one outstanding `next()` (consumer think-time between demands is not counted), or
    with upstream's reason when upstream aborts first."""
    return IdleWatchdog(upstream, timeout_ms, code, scheduler)
