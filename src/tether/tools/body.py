"""How a tool body runs: in a task of its own, started eagerly where asyncio can, never interrupted.

Owns `BodyTask`, `BodyRun`, `start_body` and the one path every synchronous body takes
(`run_sync_body`).

Contract. A body runs in its own `BodyTask`, so the task awaiting `execute()` is never the task
the body runs in: cancelling that task cannot throw `CancelledError` into the body. The pipeline
does not await the body task itself (asyncio would forward the awaiter's cancellation into it);
it awaits a separate *settle* future that the task resolves when it is done. A cancellation of
the awaiting task therefore lands on the settle future: the pipeline turns it into an abort of
the call's signal, waits until the body has settled, and then lets that same cancellation go on
from where it was delivered.

A body that has not started never starts once its call is cancelled (CONTRACT §4.4): the task's
first step checks, before it enters the body, that the settle future was not cancelled (the
awaiter's cancellation reached it) and that the body's signal has not aborted; if either has, it
closes the body without running it and reports `BodyRun.started` False. On Python 3.11 (and for
nested starts past `EAGER_DEPTH`) that first step runs on a later loop iteration, so this is the
check that keeps a cancelled call from starting its body in between.

Mechanism. On Python >= 3.12 the task starts eagerly through the standard library's public API
(`Task(..., eager_start=True)`, what `asyncio.eager_task_factory` does): the body's first step runs
inside the constructor, with the task as the current task and in a copy of the caller's context,
so a body that finishes without suspending costs no loop iteration. Past `EAGER_DEPTH` eager starts
nested on one thread (a body that calls a tool in its first step, and so on) a body starts as a
plain task instead, on the next loop iteration; on 3.11 every body is a plain task.

The stack. A body's first step — until it first suspends — runs on its caller's stack, exactly as
with `asyncio.eager_task_factory`: it has the recursion limit minus the caller's depth minus the
pipeline's own frames (7, and one per `tools/execute` wrapper), where a plain task would have
nearly the whole limit. A caller about to exhaust the stack therefore leaves its body less of it:
a body that recurses past the limit in its first step fails with its `RecursionError`, as its own
failure (one result, as always). After its first suspension a body runs on a fresh stack, as any
task. Nesting alone takes at most about 160 frames of it: each level of calls inside first steps
adds about 10, and past `EAGER_DEPTH` levels a body starts on a fresh stack. (Measuring the
caller's depth to fall back to a plain start costs a walk of `frame.f_back` on every call — about
0.5 µs, 4% of a full pipeline — since the only cheaper ways to read it are private; this module
does not do that.)

A `KeyboardInterrupt` or `SystemExit` from a body never escapes its task's step (where asyncio
would re-raise it out of the event loop before the call's result exists, or, in an eager first
step, leave an exception nobody retrieves): the task ends with it as a `Fatal` value, and the
pipeline publishes the call's failure before it raises the exception to the caller.

What a body does with its own task behaves as with `asyncio.create_task`: `asyncio.timeout`,
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
from typing import Any, Final, TypeAlias

from ..core.signals import AbortSignal

__all__ = [
    "BODY_TASK_PREFIX",
    "EAGER",
    "EAGER_DEPTH",
    "HEADROOM",
    "BodyRun",
    "BodyTask",
    "Fatal",
    "is_body_task",
    "run_sync_body",
    "settled",
    "start_body",
]

EAGER_DEPTH: Final = 16
"""Nested eager starts allowed on one thread before a body starts as a plain task."""

HEADROOM: Final = 100
"""Frames of recursion limit lent to the pipeline's own bookkeeping when a call's stack ran out
(publishing its result; constructing a body task on a plain start), so that neither is left
half done: the interpreter lends about as much while it handles a `RecursionError`."""

EAGER: Final = sys.version_info >= (3, 12)
"""Whether bodies can start eagerly here (asyncio's public `eager_start`, Python >= 3.12)."""


class _Nesting(threading.local):
    depth = 0
    """Eager starts in progress on this thread (one inside another's first step)."""


_nesting: Final = _Nesting()


BodyTask: TypeAlias = "asyncio.Task[object]"
"""The task a tool body runs in: a plain `asyncio.Task` (a subclass would lose asyncio's C fast
paths: on 3.11 every step of it costs about 0.5 µs more). Its name says which call it runs
(`tool <name> <call_id>`), so asyncio's own diagnostics (debug mode, "Task was destroyed but it
is pending") name it, and `is_body_task` recognises it."""

BODY_TASK_PREFIX: Final = "tool "
"""How a body task's name begins."""


def is_body_task(task: asyncio.Task[Any]) -> bool:
    """Whether `task` is a tool body's task (by its name, `tool <name> <call_id>`)."""
    return task.get_name().startswith(BODY_TASK_PREFIX)


class Fatal:
    """A `KeyboardInterrupt`/`SystemExit` a body raised, carried as its task's value."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


class BodyRun:
    """One started body: its task, its settle future, and whether the body was entered.

    `settle` resolves (to None) in the very step the body finishes in — so the awaiter resumes in
    the next loop iteration, as if it awaited the task — and nothing but the run resolves it
    (cancelling it leaves the body alone). `started` is set just before the body's coroutine is
    first resumed — for a synchronous body, when its function starts in its worker thread — and
    never reset: False once the task is done means the body never ran.

    `start_body` fills a run the caller made, so a caller can keep its own per-call state on a
    subclass and make one object per call, not two (the pipeline's relay is one).
    """

    __slots__ = ("coro", "settle", "started", "task")

    coro: Coroutine[Any, Any, object]
    task: BodyTask
    settle: asyncio.Future[None] | None
    """None when the body finished in an eager first step (nothing to wait for)."""
    started: bool

    def ended(self) -> None:
        """The body has settled: called in the step it ended in (or, for a body whose task ended
        before `_run` was entered, when that task is done), before anything awaiting `settle`
        resumes. Nothing here; a subclass stops what it did for the running body (the
        pipeline's relay detaches the body's signal). May be called more than once."""

    def _task_done(self, _: object) -> None:
        """The task is done and `_run` never ended (it removes this callback when it does): the
        task was cancelled before its first step (the body never started: close it, so it is not
        reported as never awaited), or `_run` could not be entered."""
        if not self.started:  # never entered (closing a closed coroutine does nothing)
            self.coro.close()
        settle = self.settle
        if settle is not None and not settle.done():
            settle.set_result(None)
        self.ended()


def start_body(
    coro: Coroutine[Any, Any, object],
    loop: asyncio.AbstractEventLoop,
    name: str,
    signal: AbortSignal,
    run: BodyRun,
    sync: bool = False,
) -> None:
    """Start `coro` in a new `BodyTask` on `loop` (the running loop) and fill `run` with it:
    eagerly where asyncio can (3.12+) and fewer than `EAGER_DEPTH` eager starts are nested,
    otherwise as a plain task.

    `signal` is the body's own signal: if it has aborted by the time the task's first step runs,
    the body is not entered. When `run.task` is done on return, the body finished (or was
    skipped) in its first step. `sync`: `coro` is `run_sync_body`'s, which marks `run.started`
    itself when the function starts in its thread.
    """
    run.started = False
    run.coro = coro
    depth = _nesting.depth
    if EAGER and depth < EAGER_DEPTH:
        # The first step runs now, inside the constructor: no awaiter can be cancelled before
        # it, and a body that finishes in it needs no settle future at all.
        run.settle = None
        runner = _run(coro, run, signal, sync)
        _nesting.depth = depth + 1
        try:
            task = asyncio.Task(runner, loop=loop, name=name, eager_start=True)  # type: ignore[call-arg]
        finally:
            _nesting.depth = depth
        run.task = task
        if task.done():
            if not run.started:  # e.g. no stack left to enter `_run`: never awaited otherwise
                coro.close()
                run.ended()
            return
        run.settle = loop.create_future()
    else:
        run.settle = loop.create_future()
        runner = _run(coro, run, signal, sync)
        # Constructing a plain task schedules its first step through the loop's `call_soon`
        # (Python frames, six on 3.11): out of stack there, asyncio drops a half-made task that
        # logs as destroyed pending. The limit is raised for the constructor alone (about 1.3k
        # instructions on 3.11; a probe of the stack's room, seven Python calls, costs more).
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + HEADROOM)
        try:
            task = asyncio.Task(runner, loop=loop, name=name)
        finally:
            sys.setrecursionlimit(limit)
        run.task = task
    task.add_done_callback(run._task_done)


async def _run(
    coro: Coroutine[Any, Any, object], run: BodyRun, signal: AbortSignal, sync: bool
) -> object:
    try:
        settle = run.settle  # None while an eager first step runs
        if (settle is not None and settle.done()) or signal._aborted:
            coro.close()  # cancelled before the first step: never start
            return None
        if not sync:  # a sync body starts when its function does (run_sync_body)
            run.started = True
        return await coro
    except (KeyboardInterrupt, SystemExit) as exc:
        return Fatal(exc)
    finally:
        settle = run.settle
        if settle is not None:  # a task that suspended: `start_body` gave it `_task_done`,
            run.task.remove_done_callback(run._task_done)  # needless now (no loop callback)
            if not settle.done():
                settle.set_result(None)
        run.ended()


def settled(future: asyncio.Future[Any], loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
    """A future that resolves (to None) once `future` is done; cancelling it leaves `future`
    alone. Awaiting this instead of `future` keeps the awaiter's cancellation out of it."""
    waiter: asyncio.Future[None] = loop.create_future()

    def wake(_: object) -> None:
        if not waiter.done():
            waiter.set_result(None)

    future.add_done_callback(wake)
    return waiter


async def run_sync_body(
    run: BodyRun, signal: AbortSignal, fn: Callable[..., object], *args: object
) -> object:
    """Run `fn(*args)` in a worker thread (in a copy of the caller's context) and wait for the
    thread to return, whatever happens to the task awaiting it: a thread cannot be interrupted,
    so it is never abandoned. If the body's task was cancelled meanwhile (by `asyncio.run()`
    shutting down, or anything else holding it), that `CancelledError` is raised here, once the
    thread has returned. This is the one way every synchronous body runs: raw definitions,
    `define_tool` and `@tool` alike.

    The body starts when its function starts: `run.started` is set in the worker thread, just
    before `fn` is called. Until then the work item is only queued (every worker may be busy):
    if `signal` aborts or the task is cancelled meanwhile, the item is withdrawn — the function
    is never called — and this returns at once (None, `run.started` False) or raises that
    cancellation. One claim decides the race between the worker and the withdrawal: whichever
    pops it first.

    `StopIteration` cannot cross into an asyncio future (asyncio refuses it and the future would
    never complete), so a body raising it fails with `RuntimeError` instead. An awaitable the
    function returns is awaited.
    """
    loop = asyncio.get_running_loop()
    claim = [run]
    future = loop.run_in_executor(
        None, contextvars.copy_context().run, _call_sync, claim, fn, *args
    )

    def withdraw(_: object) -> None:
        try:
            claim.pop()
        except IndexError:  # the function has started: its thread is waited for
            return
        future.cancel()  # never started, never will (the worker finds no claim)

    key = signal._subscribe(withdraw)  # runs at once if the signal has aborted
    cancelled: asyncio.CancelledError | None = None
    try:
        while not future.done():
            try:
                await settled(future, loop)
            except asyncio.CancelledError as exc:
                cancelled = cancelled or exc
                withdraw(None)
    finally:
        signal._unsubscribe(key)
    if cancelled is not None:
        raise cancelled
    if future.cancelled():  # withdrawn before the function started
        return None
    returned = future.result()
    if inspect.isawaitable(returned):
        return await returned
    return returned


def _call_sync(claim: list[BodyRun], fn: Callable[..., object], *args: object) -> object:
    try:
        run = claim.pop()
    except IndexError:  # withdrawn while queued: the body never starts
        return None
    run.started = True
    try:
        return fn(*args)
    except StopIteration as exc:
        raise RuntimeError(
            f"the tool body raised StopIteration{f': {exc}' if str(exc) else ''}"
        ) from exc


def is_fatal(exc: BaseException) -> bool:
    """Whether an exception must reach the caller after the call's result is published."""
    return isinstance(exc, KeyboardInterrupt | SystemExit)
