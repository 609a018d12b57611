"""How a tool body runs: started eagerly, finished in its own task, never interrupted.

Owns `BodyStarter` and `BodyTask`. A body runs in a task of its own so that cancelling the task
awaiting `execute()` can never throw `CancelledError` into it: `BodyTask` refuses the
cancellation asyncio forwards from its awaiter and turns it into an abort of the call's signal
instead (the body is still awaited to quiescence). A cancellation the body asks for itself — its
own `asyncio.timeout`, `signal.cancels()` — goes through.

Eager start (what Python 3.12's `eager_task_factory` does, built for 3.11): the body's first step
runs at once, synchronously, with its task as the current task and in a copy of the caller's
context — exactly what the event loop would have run one iteration later. A body that finishes
without suspending (validation failures, in-memory tools, a no-op) costs no loop iteration at
all. A body that suspends continues in the same task, which resumes it where it stopped
(`_continue`): `asyncio.current_task()` is the same task before and after the first suspension, so
`asyncio.timeout`, `TaskGroup` and `signal.cancels()` entered in the first step keep working.

The task a body starts in is initialized ahead of time, with its first step held back (a `_Spare`).
When the body suspends, that step is scheduled and the spare becomes the body's task for good.
When it finishes in its first step and nothing can have kept its task — no other reference, no
weak reference, no done-callback, no cancellation — the same spare serves the next call; otherwise
the task is settled with the body's outcome, as an eager task would be. So most calls of quick
tools create no task at all, and no one can tell.

CPython internals used (3.11; all present since 3.7): `asyncio.tasks._enter_task`/`_leave_task`
and `_register_task`/`_unregister_task` (what the loop and `Task.__init__` call), the pure-Python
loop's `_ready` queue and `TaskStepMethWrapper.__self__` (to hold the first step back), and the
base `Future` methods to settle a task without a step. On a loop without a `_ready` queue each body
gets a new task whose first step finds the body finished and returns.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
import types
import weakref
from asyncio.tasks import (  # type: ignore[attr-defined]
    _current_tasks,
    _enter_task,
    _leave_task,
    _register_task,
    _unregister_task,
)
from collections import deque
from collections.abc import Callable, Coroutine, Generator
from typing import Any, Final

__all__ = ["BodyStarter", "BodyTask"]

_task_init: Final = asyncio.Task.__init__
_settle_result: Final = asyncio.Future.set_result
_settle_exception: Final = asyncio.Future.set_exception
_settle_cancelled: Final = asyncio.Future.cancel
_copy_context: Final = contextvars.copy_context
_refcount: Final = sys.getrefcount
_weakrefcount: Final = weakref.getweakrefcount


def _no_forwarding() -> None:
    return None


class BodyTask(asyncio.Task[object]):
    """The body's own task. It refuses the cancellation asyncio forwards to it from the task
    awaiting it: that becomes `on_forwarded()` (the pipeline aborts the per-call signal), and the
    awaiting task receives its `CancelledError` only once the body has settled. A cancellation
    the body asks for itself goes through."""

    __slots__ = ("_awaiter", "_on_forwarded", "_seen")

    _awaiter: asyncio.Task[Any] | None
    _seen: int
    _on_forwarded: Callable[[], None]

    def cancel(self, msg: object = None) -> bool:
        awaiter = self._awaiter
        if awaiter is not None and not self.done() and awaiter.cancelling() > self._seen:
            self._seen = awaiter.cancelling()
            self._on_forwarded()
            return False
        return super().cancel(msg)


class _Step:
    """What the eager step leaves for the task: the suspended body, what it yielded, and the
    context it runs in."""

    __slots__ = ("context", "coro", "yielded")

    def __init__(self) -> None:
        self.coro: Coroutine[Any, Any, object] | None = None
        self.yielded: object = None
        self.context: contextvars.Context | None = None


@types.coroutine
def _continue(step: _Step) -> Generator[object, object, object]:
    """The task's coroutine: resume the body from its first suspension, in the body's context,
    forwarding every value and exception the task sends (`None` if the body already finished).

    It is primed (`_primed`) before the task gets it, so that a cancellation arriving before the
    task's first step is thrown in here — and on into the body — rather than into an unstarted
    generator, which would drop it without the body ever seeing it.
    """
    thrown: BaseException | None = None
    sent: object = None
    try:
        yield None  # primed: parked here until the task's first step
    except GeneratorExit:
        if step.coro is not None and step.context is not None:
            step.context.run(step.coro.close)
        raise
    except BaseException as exc:  # the task was cancelled before its first step
        thrown = exc
    coro = step.coro
    context = step.context
    if coro is None or context is None:
        return None
    yielded = step.yielded
    step.coro = step.yielded = step.context = None
    run = context.run
    if thrown is None:
        try:
            sent = yield yielded  # what the body was waiting for when it suspended
        except GeneratorExit:
            run(coro.close)
            raise
        except BaseException as exc:
            thrown = exc
    while True:
        try:
            if thrown is not None:
                throw, thrown = thrown, None
                yielded = run(coro.throw, throw)
            else:
                yielded = run(coro.send, sent)
        except StopIteration as stop:
            return stop.value
        try:
            sent = yield yielded
        except GeneratorExit:
            run(coro.close)
            raise
        except BaseException as exc:
            thrown = exc


def _primed(step: _Step) -> Generator[object, object, object]:
    driver = _continue(step)
    driver.send(None)
    return driver


class _Spare:
    """A body task initialized ahead of time, its first step held back until a body suspends."""

    __slots__ = ("handle", "loop", "ready", "refs", "step", "task")

    def __init__(self, loop: asyncio.AbstractEventLoop, ready: deque[Any]) -> None:
        self.loop = loop
        self.ready = ready
        self.step = _Step()
        task = self.task = BodyTask.__new__(BodyTask)
        task._awaiter = None
        task._seen = 0
        task._on_forwarded = _no_forwarding
        _task_init(task, _primed(self.step), loop=loop)  # type: ignore[arg-type]
        handle = ready[-1]
        if getattr(handle._callback, "__self__", None) is task:
            ready.pop()
        else:  # another thread appended after it
            handle = next(h for h in ready if getattr(h._callback, "__self__", None) is task)
            ready.remove(handle)
        self.handle = handle
        _unregister_task(task)  # idle: not one of the loop's tasks (asyncio.run must not wait)
        task._log_destroy_pending = False  # type: ignore[attr-defined]
        self.refs = _refcount(task)
        """The task's reference count while idle, seen from a frame holding it in one local
        (as `BodyStarter.start` does): this record, the held-back step, the local, the call.
        More after a body's first step means someone kept the task."""


class BodyStarter:
    """Starts tool bodies (see the module note); one per runtime, keeping one spare task."""

    __slots__ = ("_spare",)

    def __init__(self) -> None:
        self._spare: _Spare | None = None

    def start(
        self, coro: Coroutine[Any, Any, object], on_forwarded: Callable[[], None]
    ) -> tuple[BodyTask | None, object]:
        """Start `coro` and run its first step now.

        Returns `(None, value)` when the body returned without suspending, `(task, None)` when it
        suspended (await the task for the rest). Whatever the body raised in its first step is
        raised here.
        """
        loop = asyncio.get_running_loop()
        spare = self._spare
        if spare is not None and spare.loop is loop:
            self._spare = None
        else:
            ready = getattr(loop, "_ready", None)
            if type(ready) is not deque:
                return _start_fresh(loop, coro, on_forwarded)
            spare = _Spare(loop, ready)
        task = spare.task
        awaiter = _current_tasks.get(loop)
        # The task's awaiter, forwarding callback and baseline are set only if the body suspends:
        # a cancellation can be forwarded only while something awaits the task. In the first
        # step the task's cancel() is the body's own (an idle task has no awaiter).
        context = _copy_context()
        if awaiter is not None:
            _leave_task(loop, awaiter)
        _enter_task(loop, task)
        try:
            yielded = context.run(coro.send, None)
        except BaseException as exc:
            outcome: BaseException | None = exc
        else:
            outcome = None
        _leave_task(loop, task)
        if awaiter is not None:
            _enter_task(loop, awaiter)
        if outcome is not None:  # the body finished in its first step (StopIteration: returned)
            try:
                if (  # nothing outside the spare can have seen its task (see _Spare.refs)
                    _refcount(task) == spare.refs
                    and not _weakrefcount(task)
                    and task._callbacks is None
                    and not task.cancelling()
                    and not task._must_cancel
                ):
                    if self._spare is None:
                        self._spare = spare
                else:
                    _settle(task, outcome)
                if type(outcome) is StopIteration:
                    return None, outcome.value
                raise outcome
            finally:
                # outcome → its traceback → this frame → outcome: a cycle that would keep the
                # task referenced (and the spare unusable) until the collector runs.
                del outcome
        task._awaiter = awaiter
        task._seen = 0 if awaiter is None else awaiter.cancelling()
        task._on_forwarded = on_forwarded
        step = spare.step
        step.coro = coro
        step.yielded = yielded
        step.context = context
        _register_task(task)
        task._log_destroy_pending = True  # type: ignore[attr-defined]
        spare.ready.append(spare.handle)  # the task's first step resumes the body
        if task._must_cancel:  # type: ignore[attr-defined]
            # The body cancelled its own task before suspending: the task's first step throws
            # CancelledError into it, and the future it waits for is cancelled as a step would.
            cancel = getattr(yielded, "cancel", None)
            if cancel is not None:
                cancel(task._cancel_message)  # type: ignore[attr-defined]
        return task, None


def _settle(task: BodyTask, outcome: BaseException) -> None:
    """A body finished in its first step and its task may have been seen: settle the task with
    the body's outcome, as an eager task would be (its done-callbacks run)."""
    if isinstance(outcome, StopIteration):
        if task._must_cancel:  # type: ignore[attr-defined]
            _settle_cancelled(task)
        else:
            _settle_result(task, outcome.value)
    elif isinstance(outcome, asyncio.CancelledError):
        _settle_cancelled(task)
    else:
        _settle_exception(task, outcome)
        task._log_traceback = False  # the pipeline receives the exception itself


def _start_fresh(
    loop: asyncio.AbstractEventLoop,
    coro: Coroutine[Any, Any, object],
    on_forwarded: Callable[[], None],
) -> tuple[BodyTask | None, object]:
    """`start` on a loop without a `_ready` queue: a new task per body, whose scheduled first step
    runs either way (and returns at once if the body finished eagerly)."""
    awaiter = _current_tasks.get(loop)
    task = BodyTask.__new__(BodyTask)
    task._awaiter = awaiter
    task._seen = 0 if awaiter is None else awaiter.cancelling()
    task._on_forwarded = on_forwarded
    step = _Step()
    _task_init(task, _primed(step), loop=loop)  # type: ignore[arg-type]
    context = _copy_context()
    if awaiter is not None:
        _leave_task(loop, awaiter)
    _enter_task(loop, task)
    try:
        yielded = context.run(coro.send, None)
    except StopIteration as stop:
        return None, stop.value
    finally:
        _leave_task(loop, task)
        if awaiter is not None:
            _enter_task(loop, awaiter)
    step.coro = coro
    step.yielded = yielded
    step.context = context
    return task, None
