"""How a tool body runs: in a task of its own, started eagerly where asyncio can, never interrupted.

Owns `BodyTask`, `start_body` and `body_outcome`.

Contract. A body runs in its own `BodyTask`, so the task awaiting `execute()` is never the task
the body runs in: cancelling that task cannot throw `CancelledError` into the body. The pipeline
does not await the body task itself (asyncio would forward the awaiter's cancellation into it);
it awaits a separate *settle* future that the task resolves when it is done (`settled`). A
cancellation of the awaiting task therefore lands on the settle future: the pipeline turns it into
an abort of the call's signal and waits again, until the body has settled.

Mechanism. On Python >= 3.12 the task starts eagerly through the standard library's public API
(`Task(..., eager_start=True)`, what `asyncio.eager_task_factory` does): the body's first step runs
inside the constructor, with the task as the current task and in a copy of the caller's context,
so a body that finishes without suspending costs no loop iteration. On 3.11 it is a plain task
whose first step runs on the next loop iteration. Eager starts nest (a body that calls
`ctx.tools.execute` starts the inner body inside its own first step); past `EAGER_DEPTH` nested
eager starts on one thread a body starts as a plain task, so deep nesting is bounded by the heap,
not by the C stack.

What a body does with its own task behaves exactly as with `asyncio.create_task`: `asyncio.timeout`,
`TaskGroup`, `signal.cancels()` and a cancellation the body asks for itself all go through.
Anything holding the task (the body itself, `asyncio.run()` shutting down) can cancel it as any
task; the pipeline never does. No private asyncio or CPython name is used.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import sys
import threading
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any, Final

__all__ = [
    "EAGER_DEPTH",
    "BodyTask",
    "body_outcome",
    "is_fatal",
    "run_sync_body",
    "settled",
    "start_body",
]

EAGER_DEPTH: Final = 16
"""Nested eager starts allowed on one thread before a body starts as a plain task."""

_EAGER: Final = sys.version_info >= (3, 12)
_depth = threading.local()


class BodyTask(asyncio.Task[object]):
    """The task a tool body runs in. Its name says which call it runs (`tool <name> <call_id>`),
    so asyncio's own diagnostics (debug mode, "Task was destroyed but it is pending") name it."""

    __slots__ = ()


def start_body(
    coro: Coroutine[Any, Any, object], loop: asyncio.AbstractEventLoop, name: str
) -> tuple[BodyTask, asyncio.Future[None]]:
    """Start `coro` in a new `BodyTask` on `loop` (the running loop), eagerly where possible.

    Returns the task and its *settle* future, which resolves (to None) in the very step the body
    finishes in — so the awaiter resumes in the next loop iteration, as if it awaited the task —
    and which nothing but the task resolves (cancelling it leaves the body alone). When the task
    is returned done, the body finished in its first step. A `KeyboardInterrupt` or `SystemExit`
    the first step raised propagates from here, as it would from the loop.
    """
    settle: asyncio.Future[None] = loop.create_future()
    runner = _run(coro, settle)
    if not _EAGER:
        task = BodyTask(runner, loop=loop, name=name)
    else:
        depth: int = getattr(_depth, "n", 0)
        if depth >= EAGER_DEPTH:
            task = BodyTask(runner, loop=loop, name=name)
        else:
            _depth.n = depth + 1
            try:
                task = BodyTask(runner, loop=loop, name=name, eager_start=True)  # type: ignore[call-arg]
            finally:
                _depth.n = depth
    if not task.done():
        task.add_done_callback(partial(_settled, coro, settle))
    return task, settle


async def _run(coro: Coroutine[Any, Any, object], settle: asyncio.Future[None]) -> object:
    try:
        return await coro
    finally:
        if not settle.done():
            settle.set_result(None)


def _settled(
    coro: Coroutine[Any, Any, object], settle: asyncio.Future[None], task: BodyTask
) -> None:
    """The task is done. Normally `_run` resolved `settle` already; not if the task was cancelled
    before its first step (the body never started: close it, so it is not reported as never
    awaited)."""
    if inspect.getcoroutinestate(coro) == inspect.CORO_CREATED:
        coro.close()
    if not settle.done():
        settle.set_result(None)


def settled(future: asyncio.Future[Any], loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
    """A future that resolves (to None) once `future` is done; cancelling it leaves `future`
    alone. Awaiting this instead of `future` keeps the awaiter's cancellation out of it."""
    waiter: asyncio.Future[None] = loop.create_future()

    def wake(_: object) -> None:
        if not waiter.done():
            waiter.set_result(None)

    future.add_done_callback(wake)
    return waiter


async def run_sync_body(fn: Callable[[Any, Any], object], args: object, view: object) -> object:
    """Run a synchronous body in a worker thread (in a copy of the caller's context) and wait
    for the thread to return, whatever happens to the task awaiting it: a thread cannot be
    interrupted, so it is never abandoned. If the body's task was cancelled meanwhile, that
    `CancelledError` is raised once the thread has returned.

    `StopIteration` cannot cross into an asyncio future (asyncio refuses it and the future would
    never complete), so a body raising it fails with `RuntimeError` instead.
    """
    loop = asyncio.get_running_loop()
    future = loop.run_in_executor(None, contextvars.copy_context().run, _call_sync, fn, args, view)
    cancelled: asyncio.CancelledError | None = None
    while not future.done():
        try:
            await settled(future, loop)
        except asyncio.CancelledError as exc:
            cancelled = cancelled or exc
    if cancelled is not None:
        raise cancelled
    returned = future.result()
    if inspect.isawaitable(returned):
        return await returned
    return returned


def _call_sync(fn: Callable[[Any, Any], object], args: object, view: object) -> object:
    try:
        return fn(args, view)
    except StopIteration as exc:
        raise RuntimeError(
            f"the tool body raised StopIteration{f': {exc}' if str(exc) else ''}"
        ) from exc


def body_outcome(task: BodyTask) -> tuple[object, BaseException | None]:
    """What a done body task ended with: `(value, None)` for a return, `(None, exc)` for a raise
    (`CancelledError` when the task ended cancelled). Marks the exception as retrieved."""
    try:
        return task.result(), None
    except BaseException as exc:  # the body's own outcome, classified by the pipeline
        return None, exc


def is_fatal(exc: BaseException) -> bool:
    """Whether an exception must reach the caller after the call's result is published."""
    return isinstance(exc, KeyboardInterrupt | SystemExit)
