"""A base's body run: the body task awaited to quiescence, and no body left in flight.

Owns `Relay` (the body's per-call signal following the wrapper's and the caller's until the body
settles, the slow-stop watch of a body that aborts, and the call's `BodyRun`), `run_body` (start
the body in its own task and wait until it has settled, cancellations of the awaiting task
meanwhile caught and returned, never thrown into the body), and the in-flight record of a call's
bases: a call has at most one base in flight — its stage is `BODY` from the moment a base starts
until it ends, and a `next()` that finds it there starts nothing and raises (`overlapping_next`:
`asyncio.gather(next(), next())`, a `next()` in a task of its own beside another); a sequential
retry (a `next()` after the earlier one returned) runs the base again, as spec §7.3 says. A base
whose body has not settled is recorded on the call (`Call.run`), and when the `tools/execute`
waterfall ends with it still in flight (a shielded `next()`, one run in a task of its own,
`wait_for(shield(next()))`) dispatch calls `quiesce`, which aborts that body's signal and waits
for it to settle before the result is built. Whether a body of the call started
is sticky (`Call.body_invoked`, set here). A cancellation that lands on the body's private settle
future is the awaiting task's by construction (one requested before `execute()` and delivered
there included), so it is recorded where it lands (`Call.landed`) for dispatch to raise when it
leaves the waterfall, never turned into a result.

Does not own what a body's outcome becomes (`tools.precedence`, `tools.outcomes`), the body task
itself (`tools.body`) or the stages (`tools.pipeline`).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from asyncio import current_task as _current_task
from asyncio import get_running_loop as _running_loop

from ..core.signals import AbortError, AbortSignal
from .body import (
    BODY_TASK_PREFIX,
    BodyRun,
    BodyTask,
    Fatal,
    run_sync_body,
    settled,
    start_body,
)
from .definition import ToolDefinition
from .execution import Call
from .slow_stop import SlowStopWatch

__all__ = ["Relay", "abort_in_flight", "overlapping_next", "quiesce", "run_body"]


class Relay(BodyRun):
    """The body's per-call signal follows the wrapper's and the caller's until the body settles;
    an abort that reaches a running body also starts its slow-stop watch (tools.slow_stop).
    It is also the call's `BodyRun` (one object per call instead of two)."""

    __slots__ = (
        "_after_s",
        "_call",
        "_caller",
        "_caller_key",
        "_watched",
        "_wrapper",
        "_wrapper_key",
        "signal",
    )

    def __init__(
        self,
        signal: AbortSignal,
        wrapper: AbortSignal,
        caller: AbortSignal,
        call: Call,
        after_s: float | None,
    ) -> None:
        self.signal = signal
        self._watched: BodyTask | None = None
        self._call = call
        self._after_s = after_s
        relay = self.abort
        self._wrapper = wrapper
        self._caller = caller
        self._wrapper_key = wrapper._subscribe(relay)
        self._caller_key = caller._subscribe(relay) if caller is not wrapper else -1

    def abort(self, reason: object) -> None:
        """Abort the body's signal; if the body is running, start watching how long it takes."""
        self.signal._abort(reason)
        if self._watched is not None:
            self.watch()

    def watch(self) -> None:
        """Watch the running body stop (once; a no-op without a running body or a threshold)."""
        task = self._watched
        after_s = self._after_s
        if task is None or task.done() or after_s is None:
            return
        self._watched = None  # one watch per call
        call = self._call
        watch = SlowStopWatch(after_s, call.view, call.name, call.call_id, call.listeners)
        watch.task = task
        task.add_done_callback(watch.disarm)
        watch.arm()

    def detach(self) -> None:
        """Stop following (idempotent); also when the body has settled (`ended`)."""
        if self._wrapper_key >= 0:
            self._wrapper._unsubscribe(self._wrapper_key)
            self._wrapper_key = -1
        if self._caller_key >= 0:
            self._caller._unsubscribe(self._caller_key)
            self._caller_key = -1

    ended = detach  # the per-call signal freezes when the body settles (tools.body)


async def run_body(
    tool: ToolDefinition, call: Call, relay: Relay, direct: tuple[object, ...]
) -> tuple[object, BaseException | None, BaseException | None]:
    """Start the body in its own task and wait until it is done: `(value, None, cancelled)` or
    `(None, what it raised, cancelled)`, where `cancelled` is the awaiting task's cancellation
    that arrived meanwhile (None if none did), for the caller to raise once it has built the
    outcome. Sets `call.body_invoked` once the body has started. See the module notes here and
    in `tools.pipeline`."""
    body_signal = relay.signal
    if tool.is_async:
        coro = tool.execute(call.arguments, call.view)
        sync = False
    else:
        coro = run_sync_body(relay, body_signal, tool.execute, call.arguments, call.view)
        sync = True
    loop = _running_loop()
    call_id = call.call_id
    name = (
        tool.body_task_prefix + call_id
        if type(call_id) is str
        else f"{BODY_TASK_PREFIX}{call.name} {call_id}"
    )
    try:
        start_body(coro, loop, name, body_signal, relay, sync)  # type: ignore[arg-type]
    except BaseException:  # e.g. out of stack: nothing is left un-awaited, whatever did
        if not getattr(relay, "started", False):  # start stops (closing needs no frame)
            coro.close()  # type: ignore[attr-defined]
        body_signal._abort(AbortError())
        raise
    task = relay.task
    cancelled: BaseException | None = None
    if not task.done():  # (one that is done has detached its signal: `Relay.ended`)
        settle = relay.settle
        assert settle is not None  # a body still running has one
        relay._watched = task
        if body_signal._aborted:  # aborted while the first step ran
            relay.watch()
        if not direct:  # in flight: dispatch stops it if the waterfall ends first
            call.run = relay  # the call's one base in flight (`overlapping_next`)
        try:
            await settle
        except asyncio.CancelledError as exc:
            # The settle future is private: a cancellation here is the awaiter's, by construction
            # (one requested before execute() and delivered now included). Recorded where it
            # lands — with the task it landed in, which is the caller's only if it runs the
            # call's dispatch (not a task a wrapper spawned for next()) — so dispatch knows it
            # for its own when it leaves the waterfall.
            body_signal._abort(AbortError())  # also if the body just ended: it ends aborted
            relay.watch()
            cancelled = call.landed = await _drain(task, loop, exc)
            call.landed_in = _current_task()
        except GeneratorExit:  # closed mid-body: nothing can be awaited now
            body_signal._abort(AbortError())
            relay.watch()
            if relay.started:
                call.body_invoked = True
            raise
        if call.run is relay:  # not taken by dispatch meanwhile (`quiesce`)
            call.run = None
    if relay.started:  # sticky: a body of this call ran
        call.body_invoked = True
    try:  # what the body ended with (marks an exception as retrieved)
        value = task.result()
    except BaseException as exc:  # the body's own outcome, classified by `_base`
        return None, exc, cancelled
    if type(value) is Fatal:  # a KeyboardInterrupt/SystemExit, carried as the task's value
        return None, value.exc, cancelled
    return value, None, cancelled


async def _drain(
    task: BodyTask, loop: asyncio.AbstractEventLoop, cancelled: asyncio.CancelledError
) -> asyncio.CancelledError:
    """Wait for a body whose awaiter was cancelled (it already has its abort). Further
    cancellations of the awaiting task meanwhile are caught and chained: the newest is returned,
    its `__context__` leading to the earlier ones, so a scope that recognises its own
    cancellation by its message (anyio) still finds it. Under an anyio cancel scope the wait is
    shielded, so anyio does not re-deliver its cancellation on every loop iteration (which would
    spin a CPU) while the body winds down."""
    while not task.done():
        try:
            with _shielded():
                await settled(task, loop)
        except asyncio.CancelledError as exc:
            if exc is not cancelled:
                if exc.__context__ is None:
                    exc.__context__ = cancelled
                cancelled = exc
    return cancelled


def overlapping_next(call: Call) -> RuntimeError:
    """The error a `next()` raises when it would start a second base while the call's one base is
    in flight (`asyncio.gather(next(), next())`, a `next()` in a task of its own beside another):
    it starts nothing. It names the call's `tools/execute` wrappers (any of them may hold the
    `next`) and what to do."""
    wrappers = call.listeners.get("tools/execute") or ()
    names = [_listener_name(wrapper) for wrapper in wrappers]
    who = (
        f"tools/execute wrapper {names[0]}"
        if len(names) == 1
        else f"a tools/execute wrapper (one of {', '.join(names)})"
    )
    return RuntimeError(
        f"{who} called call_next() while an earlier call_next() of the same call "
        f'(tool "{call.name}", call {call.call_id}) was still running: a call runs at most one '
        f"body at a time, so await the earlier call_next() before calling it again"
    )


def _listener_name(listener: object) -> str:
    module = getattr(listener, "__module__", None)
    name = getattr(listener, "__qualname__", None)
    if not isinstance(name, str):
        return repr(listener)
    return name if not isinstance(module, str) else f"{module}.{name}"


def abort_in_flight(call: Call) -> Relay | None:
    """Abort the call's base still in flight, if any (its body stops on its own signal), and
    take it (the call forgets it)."""
    run = call.run
    if run is None:
        return None
    call.run = None
    run.abort(AbortError())
    if run.started:
        call.body_invoked = True
    return run  # type: ignore[no-any-return]


async def quiesce(call: Call, escaped: BaseException | None) -> BaseException | None:
    """The waterfall ended while a base was still in flight: abort its body and wait until it
    has settled, so the result is built (and published) only once no body of the call runs.
    Cancellations of the awaiting task meanwhile land on a private waiter — the caller's by
    construction: the newest is returned (chained to what escaped before), to be raised."""
    loop = _running_loop()
    run = abort_in_flight(call)
    if run is not None:
        task = run.task
        while not task.done():
            try:
                with _shielded():
                    await settled(task, loop)
            except asyncio.CancelledError as exc:
                if exc is not escaped:
                    if exc.__context__ is None:
                        exc.__context__ = escaped
                    escaped = call.landed = exc
                    call.landed_in = _current_task()  # dispatch's own task
        if run.started:
            call.body_invoked = True
    return escaped


def _shielded() -> contextlib.AbstractContextManager[object]:
    anyio = sys.modules.get("anyio")
    if anyio is None:
        return contextlib.nullcontext()
    try:
        scope: contextlib.AbstractContextManager[object] = anyio.CancelScope(shield=True)
    except Exception:  # anyio present but not usable here: wait unshielded
        return contextlib.nullcontext()
    return scope
