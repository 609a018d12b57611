"""`Agent.run_stream`: a turn run in a task of its own, its events read as an async iterator.

Owns: the stream object (`RunStream`) and what leaving it early means. The turn starts at the
first `__anext__` (or `__aenter__`) and never waits for the consumer (events are buffered).
`aclose()` / leaving `async with` aborts a turn that still runs (reason `StreamClosed`) and
returns once it is quiescent, holding a cancellation of the waiter until then. A stream dropped
without being closed (a bare `async for` that breaks, a consumer that goes away) aborts the turn
as it is collected; the agent's next run or `aclose()` awaits it. Python gives an iterator no
hook at `break`, so the stream's task must never reference the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, TypeAlias

from ..core.signals import AbortController, AbortError, AbortSignal
from .events import AgentEvent, RunResult

__all__ = ["RunStream", "StreamClosed", "TurnStarter", "quiesce"]

TurnStarter: TypeAlias = Callable[
    [Callable[[AgentEvent], None], AbortSignal], Coroutine[Any, Any, RunResult]
]
"""Runs the stream's turn: `(deliver, stop) -> RunResult`, handing every event, `TurnFinished`
last, to `deliver`, and aborting the turn when `stop` aborts. It must not reference the stream."""


class StreamClosed(AbortError):
    """The abort reason of a turn whose `run_stream` consumer stopped reading."""

    def __init__(self) -> None:
        super().__init__(None, "the run_stream consumer stopped reading")


class RunStream:
    """`Agent.run_stream(...)`: an async iterator of `AgentEvent`s and an async context manager
    that leaves only once the turn is quiescent. The turn starts at the first `__anext__` (or
    `__aenter__`)."""

    def __init__(self, turn: TurnStarter) -> None:
        self._turn = turn
        self._stop = AbortController()
        self._queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        self._task: asyncio.Task[RunResult] | None = None
        self._finished = False

    def __aiter__(self) -> RunStream:
        return self

    async def __anext__(self) -> AgentEvent:
        if self._finished:
            raise StopAsyncIteration
        task = self._launch()
        event = await self._queue.get()
        if event is None:
            self._finished = True
            await quiesce(task)
            task.result()  # a failure of the run itself (a bad config, a closed agent) raises
            raise StopAsyncIteration
        return event

    async def __aenter__(self) -> RunStream:
        self._launch()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Abort the turn if it still runs and await it to quiescence. Idempotent."""
        self._finished = True
        task = self._task
        if task is None:
            return
        if not task.done():
            self._stop.abort(StreamClosed())
        await quiesce(task)
        if not task.cancelled():
            task.exception()  # retrieved: a stream closed early does not raise the run's failure

    def _launch(self) -> asyncio.Task[RunResult]:
        if self._task is None:
            queue = self._queue
            self._task = asyncio.get_running_loop().create_task(
                self._turn(queue.put_nowait, self._stop.signal)
            )
            self._task.add_done_callback(lambda _task: queue.put_nowait(None))
        return self._task

    def __del__(self) -> None:
        task = self._task
        if task is None or task.done():
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing runs any more
            task.get_loop().call_soon_threadsafe(self._stop.abort, StreamClosed())


async def quiesce(task: asyncio.Future[Any]) -> None:
    """Wait until `task` is done, even through cancellations of the waiter (re-raised after)."""
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
