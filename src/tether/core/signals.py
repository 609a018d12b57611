"""Cancellation signals: the origination object (`AbortController`) and its `AbortSignal`.

Owns: aborting (synchronous, first reason wins), listener bookkeeping, fusion of several signals
(`AbortSignal.any`), the bridge to asyncio task cancellation (`signal.cancels()`), and cross-thread
delivery. Does not own: timers and timeout classification (`tether.core.timeout`), or stopping any
work — a signal only *notifies*; the capability that owns a side effect stops it.

Design note
-----------
Contract. `AbortController.abort(reason)` sets `aborted`/`reason` and then runs every listener once,
synchronously, in registration order. A listener that aborts another signal delivers that signal's
listeners before it returns — except past 32 such nested deliveries (a deep chain of derived
signals, e.g. nested tool calls), where the rest of the chain is delivered after the outer
listeners, still before `abort()` returns. A listener that raises is logged (``tether.signals``,
WARNING) and the others still run. A second abort is a no-op. `add_listener` on an aborted signal
runs the callback immediately. Every registration returns an idempotent remover; fused signals
(`AbortSignal.any`) remove their listeners from their inputs when they fire or are disposed, so a
long-lived turn signal never accumulates listeners.

Threads. A signal belongs to the loop that was running when it was created (or the loop of its first
`add_listener`/`wait`). `abort()` from another thread sets `aborted`/`reason` at once (under a lock)
and delivers the listeners on the signal's loop with `call_soon_threadsafe`.

asyncio bridge. `async with signal.cancels():` cancels the current task when the signal aborts and
turns that cancellation into `AbortError(reason)` (or the reason itself when it is an exception) on
exit — built like `asyncio.timeout` (cancel + uncancel, baseline of `task.cancelling()`). A
cancellation from outside stays `CancelledError`. Residual window: when the signal aborts after the
block's last await, the pending cancel request is absorbed on exit and the block's outcome stands.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import Final

__all__ = ["AbortController", "AbortError", "AbortSignal", "FusedSignal", "Listener"]

_log = logging.getLogger("tether.signals")
_ABORT_LOCK: Final = threading.Lock()
_running_loop: Final = asyncio.get_running_loop
_thread_id: Final = threading.get_ident

Listener = Callable[[object], None]
"""A callback that receives the abort reason."""

_MAX_NESTED_DELIVERIES: Final = 32
"""Aborts delivered inside other aborts' listeners (a chain of derived signals) before the rest
of the chain is delivered iteratively, so a chain of any depth never exhausts the stack."""


class _Delivery(threading.local):
    depth = 0

    def __init__(self) -> None:
        self.pending: deque[AbortSignal] = deque()


_delivery: Final = _Delivery()


class AbortError(Exception):
    """Raised for an abort whose reason is not itself an exception (and the default reason)."""

    reason: object

    def __init__(self, reason: object = None, message: str = "operation aborted") -> None:
        super().__init__(message)
        self.reason = reason


def _noop() -> None:
    return None


class AbortSignal:
    """A read-only view of an abort: `aborted`, `reason`, listeners, awaiting and fusion."""

    __slots__ = ("__weakref__", "_aborted", "_loop", "_next_key", "_reason", "_subs", "_tid")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: object = None
        self._subs: dict[int, Listener] = {}
        self._next_key = 0
        try:
            loop: asyncio.AbstractEventLoop | None = _running_loop()
        except RuntimeError:  # no loop running: bound by the first add_listener/wait
            loop = None
        self._loop = loop
        self._tid = _thread_id() if loop is not None else 0

    # -- reading -------------------------------------------------------------------------------

    @property
    def aborted(self) -> bool:
        """Whether the signal has aborted. Safe to read from any thread."""
        return self._aborted

    @property
    def reason(self) -> object:
        """`None` until aborted; then the abort reason (default: an `AbortError`)."""
        return self._reason

    def throw_if_aborted(self) -> None:
        """Raise the reason if it is an exception, else `AbortError(reason)`; no-op if active."""
        if self._aborted:
            raise as_exception(self._reason)

    # -- listening -----------------------------------------------------------------------------

    def add_listener(self, callback: Listener) -> Callable[[], None]:
        """Run `callback(reason)` once when the signal aborts (now, if it already has).

        Returns an idempotent remover. A raising callback is logged and never propagates into
        `abort()`.
        """
        if self._aborted:
            _call(callback, self._reason)
            return _noop
        if self._loop is None:
            self._bind_loop()
        key = self._next_key
        self._next_key = key + 1
        subs = self._subs
        subs[key] = callback

        def remove() -> None:
            subs.pop(key, None)

        return remove

    def _subscribe(self, callback: Listener) -> int:
        """`add_listener` for the runtime's hot paths: no remover closure. Returns the key for
        `_unsubscribe`, or -1 when the signal had already aborted (the callback ran)."""
        if self._aborted:
            _call(callback, self._reason)
            return -1
        if self._loop is None:
            self._bind_loop()
        key = self._next_key
        self._next_key = key + 1
        self._subs[key] = callback
        return key

    def _unsubscribe(self, key: int) -> None:
        """Remove what `_subscribe` added (idempotent)."""
        self._subs.pop(key, None)

    @property
    def listener_count(self) -> int:
        """How many listeners are attached (for leak checks and benchmarks)."""
        return len(self._subs)

    async def wait(self) -> object:
        """Return the reason once the signal has aborted."""
        if self._aborted:
            return self._reason
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._bind_loop()
        fut: asyncio.Future[object] = loop.create_future()

        def settle(reason: object) -> None:
            if not fut.done():
                fut.set_result(reason)

        remove = self.add_listener(settle)
        try:
            return await fut
        finally:
            remove()

    def cancels(self) -> _CancelScope:
        """`async with signal.cancels():` — the signal's abort cancels the current task.

        On exit that cancellation becomes `AbortError(reason)` (or the reason itself when it is an
        exception); a cancellation from outside stays `CancelledError`.
        """
        return _CancelScope(self)

    # -- fusion and helpers --------------------------------------------------------------------

    @staticmethod
    def any(*signals: AbortSignal) -> FusedSignal:
        """A signal that aborts when any input aborts, with the first reason.

        If several inputs are already aborted, the first in argument order wins. The fused signal
        detaches from its inputs once it fires or when `dispose()` is called (also a context
        manager).
        """
        return FusedSignal(signals)

    @staticmethod
    def timeout(ms: float) -> AbortSignal:
        """A signal that aborts with `TimeoutReason("TIMEOUT", ms)` after `ms` milliseconds."""
        from .timeout import deadline

        signal: AbortSignal = deadline(None, ms, "TIMEOUT").signal
        return signal

    @staticmethod
    def never() -> AbortSignal:
        """A fresh signal nobody can abort. For tests and detached work only; never a default."""
        return AbortSignal()

    # -- internals -----------------------------------------------------------------------------

    def _bind_loop(self) -> None:
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:  # still no loop: bound later
            return
        self._tid = threading.get_ident()

    def _abort(self, reason: object) -> None:
        """Abort with `reason` (already defaulted). First reason wins; listeners run once."""
        if self._aborted:
            return
        with _ABORT_LOCK:
            if self._aborted:
                return
            self._reason = reason
            self._aborted = True
        if not self._subs:
            return
        loop = self._loop
        if loop is not None and threading.get_ident() != self._tid and not loop.is_closed():
            loop.call_soon_threadsafe(self._deliver)
        else:
            self._deliver()

    def _deliver(self) -> None:
        if not self._subs:
            return
        state = _delivery
        depth: int = getattr(state, "depth", 0)
        if depth >= _MAX_NESTED_DELIVERIES:  # a deep chain of derived signals: finish it
            state.pending.append(self)  # iteratively, below, instead of on the stack
            return
        state.depth = depth + 1
        try:
            self._run_listeners()
        finally:
            state.depth = depth
        if depth == 0:
            pending = getattr(state, "pending", None)
            while pending:
                pending.popleft()._run_listeners_bounded()

    def _run_listeners_bounded(self) -> None:
        _delivery.depth = 1
        try:
            self._run_listeners()
        finally:
            _delivery.depth = 0

    def _run_listeners(self) -> None:
        subs = self._subs
        reason = self._reason
        # Pop each listener just before running it, so one removed by an earlier listener of
        # this same abort (e.g. a deadline disposed from an upstream listener) does not run.
        for key, callback in list(subs.items()):
            if subs.pop(key, None) is not None:
                _call(callback, reason)

    def __repr__(self) -> str:
        state = f"aborted reason={self._reason!r}" if self._aborted else "active"
        return f"<{type(self).__name__} {state}>"


def as_exception(reason: object) -> BaseException:
    """The exception an abort with `reason` raises: the reason itself, or `AbortError(reason)`."""
    if isinstance(reason, BaseException):
        return reason
    return AbortError(reason)


def _call(callback: Listener, reason: object) -> None:
    try:
        callback(reason)
    except Exception:
        _log.warning("abort listener %r raised", callback, exc_info=True)


class AbortController:
    """Originates an abort: owns `signal` and is the only way to abort it."""

    __slots__ = ("_signal",)

    def __init__(self) -> None:
        self._signal = AbortSignal()

    @property
    def signal(self) -> AbortSignal:
        """The signal this controller aborts (read-only)."""
        return self._signal

    def abort(self, reason: object = None) -> None:
        """Abort the signal. `reason` defaults to `AbortError()`; a second abort is a no-op."""
        self._signal._abort(AbortError() if reason is None else reason)

    def __repr__(self) -> str:
        return f"<AbortController signal={self._signal!r}>"


class FusedSignal(AbortSignal):
    """A signal that follows several inputs (first reason wins) and detaches when done."""

    __slots__ = ("_removers",)

    def __init__(self, inputs: tuple[AbortSignal, ...]) -> None:
        super().__init__()
        self._removers: list[Callable[[], None]] = []
        for source in inputs:
            if source._aborted:
                self._abort(source._reason)
                return
        for source in inputs:
            self._removers.append(source.add_listener(self._fire))
        if self._aborted:  # an input aborted from another thread while we subscribed
            self.dispose()

    def _fire(self, reason: object) -> None:
        self.dispose()
        self._abort(reason)

    def dispose(self) -> None:
        """Detach from every input. Idempotent; the fused signal keeps its current state."""
        removers = self._removers
        if removers:
            self._removers = []
            for remove in removers:
                remove()

    def __enter__(self) -> FusedSignal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.dispose()


class _CancelScope:
    """The `signal.cancels()` context manager (see the module note)."""

    __slots__ = ("_baseline", "_remove", "_requested", "_signal", "_task")

    def __init__(self, signal: AbortSignal) -> None:
        self._signal = signal
        self._task: asyncio.Task[object] | None = None
        self._requested = False
        self._baseline = 0
        self._remove: Callable[[], None] = _noop

    async def __aenter__(self) -> None:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("signal.cancels() must be used inside an asyncio task")
        self._task = task
        self._baseline = task.cancelling()
        self._remove = self._signal.add_listener(self._on_abort)

    def _on_abort(self, _reason: object) -> None:
        task = self._task
        if task is not None and not task.done() and not self._requested:
            self._requested = True
            task.cancel()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._remove()
        task = self._task
        self._task = None
        if not self._requested or task is None:
            return
        if exc_type is not None and issubclass(exc_type, asyncio.CancelledError):
            if task.uncancel() <= self._baseline:
                raise as_exception(self._signal.reason) from exc
            return
        # Our cancel request never surfaced inside the block: absorb it so it cannot hit a later,
        # unrelated await, and let the block's own outcome stand.
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            if task.uncancel() > self._baseline:
                raise
        else:
            task.uncancel()
