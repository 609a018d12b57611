"""Saying why a call is slow to stop: the `tools/slow-stop` event and where a body waits.

Owns `SlowStop` (what the event carries), `SLOW_STOP` (its name) and `where_waiting(task)`, the
body's await chain as text. The pipeline arms one timer when a running body's signal aborts and
cancels it when the body settles; if the body is still running `slow_stop_after_s` later
(`ctx.tools` config, default 5 s), it logs one WARNING on `tether.tools` and emits
`tools/slow-stop` to the call's observers — `(exec: ToolExecution, stop: SlowStop) -> None`,
synchronous, each contained like a `tools/result` observer. It fires at most once per call and
never abandons the body: the call still waits until the body settles.

What "where" says: the frames of the body's coroutine chain, outermost first, ending at what the
innermost one awaits (a future, a task), read through the public `cr_await`/`cr_frame` attributes;
a synchronous body is reported as running in its worker thread.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from ..core.errors import error_message
from ..core.timers import LoopTimer, loop_timers
from ..kernel.events import Listener
from .execution import ToolExecution

__all__ = ["SLOW_STOP", "SlowStop", "SlowStopWatch", "where_waiting"]

SLOW_STOP: Final = "tools/slow-stop"

_log = logging.getLogger("tether.tools")
_OWN_FRAMES: Final = frozenset({"_run", "run_sync_body"})
"""The runtime's own frames at the ends of a body's chain (tether.tools.body): not shown."""


@dataclass(frozen=True, slots=True)
class SlowStop:
    """A body that has not settled `waited_s` seconds after its signal aborted; `where` is its
    await chain (`file:line in function` per frame, joined with " → "), to name what it waits
    on instead of watching its signal."""

    waited_s: float
    where: str


def where_waiting(task: asyncio.Task[object]) -> str:
    """The await chain a suspended task is parked in, outermost frame first."""
    parts: list[str] = []
    awaited: object = task.get_coro()
    sync_body = False
    for _ in range(64):  # a chain is a list; bound it anyway
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
        if frame is None:
            break
        code = frame.f_code
        if code.co_name == "run_sync_body":
            sync_body = True
        if code.co_name not in _OWN_FRAMES:
            parts.append(f"{code.co_filename}:{frame.f_lineno} in {code.co_name}")
        nxt = getattr(awaited, "cr_await", None)
        if nxt is None:
            nxt = getattr(awaited, "gi_yieldfrom", None)
        if nxt is None:
            break
        awaited = nxt
    if sync_body:
        parts.append("a synchronous body in its worker thread (it cannot be interrupted)")
    elif awaited is not None and not hasattr(awaited, "cr_frame"):
        parts.append(f"awaiting {_short(awaited)}")
    return " → ".join(parts) or "unknown (the task is not suspended in a coroutine)"


def _short(awaited: object) -> str:
    if type(awaited).__name__ == "FutureIter":  # `await future` (the C future's iterator)
        return "a future"
    text = repr(awaited)
    return text if len(text) <= 120 else text[:117] + "..."


class SlowStopWatch:
    """One call's watch: `arm()` when its running body's signal aborts, `disarm()` when the body
    settles. Fires once."""

    __slots__ = ("_after_s", "_listeners", "_name", "_timer", "_view", "call_id", "task")

    def __init__(
        self,
        after_s: float,
        view: ToolExecution,
        name: str,
        call_id: str,
        listeners: Mapping[str, tuple[Listener, ...]],
    ) -> None:
        self._after_s = after_s
        self._view = view
        self._name = name
        self.call_id = call_id
        self._listeners = listeners
        self._timer: LoopTimer | None = None
        self.task: asyncio.Task[object] | None = None

    def arm(self) -> None:
        """Start the clock (idempotent; only while the body's task runs)."""
        task = self.task
        if self._timer is not None or task is None or task.done():
            return
        loop = task.get_loop()
        self._timer = loop_timers(loop).call_later(self._after_s * 1000, self._fire)

    def disarm(self, *_: object) -> None:
        """The body settled: stop the clock (idempotent; also a done-callback)."""
        timer = self._timer
        if timer is not None:
            timer.cancel()
        self.task = None

    def _fire(self) -> None:
        task = self.task
        if task is None or task.done():
            return
        stop = SlowStop(waited_s=self._after_s, where=where_waiting(task))
        _log.warning(
            'tool "%s" (%s) has not stopped %.1f s after its signal aborted; it is waiting at: %s',
            self._name,
            self.call_id,
            stop.waited_s,
            stop.where,
        )
        observers: tuple[Callable[..., object], ...] = self._listeners.get(SLOW_STOP, ())
        for observer in observers:
            try:
                observer(self._view, stop)
            except Exception as exc:
                _log.warning(
                    'tool "%s" (%s): %s observer failed: %s',
                    self._name,
                    self.call_id,
                    SLOW_STOP,
                    error_message(exc),
                )
