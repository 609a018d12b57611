"""The execution pipeline: one call from creation to exactly one frozen `tools/result`.

Owns the stage order of spec §1.0a and the cancellation precedence of §1.15:

    create   token, finalizer capture, argument snapshot (a failure here wins over everything)
    prepare  pre-aborted short circuit → tools/pre-execute → approval → guards → last check
    dispatch tools/execute waterfall around the base dispatch (per-call body signal, one task
             for the body, canonical output) → normalization → deferred contexts → check
    finalize tools/post-execute → decision → check
    finish   materialize → finalize_content once → materialize → freeze → publish

Cancellation design. The caller's signal is observed, never aborted by the registry. The body
always gets a per-call signal that aborts with the innermost wrapper's or the caller's reason and
is detached when the body settles. The body runs in its own task and is awaited to quiescence:
if the task awaiting the pipeline is cancelled, the per-call signal aborts (reason `AbortError()`)
and the body is still awaited — no `CancelledError` is thrown into it. Only successes are
superseded by cancellation codes; every failure is more specific.

Where a cancellation surfaces. A cancellation of the awaiting task is raised where it was
delivered, once what it interrupted has settled: from the pre-execute/post-execute listener it
landed in, or — while the body runs — from the innermost `next()` of the `tools/execute`
waterfall, after the body settled and its outcome became `call.outcome`. So every cancel scope
between the caller and the body (a wrapper's `asyncio.timeout`, `signal.cancels()`, an anyio
scope, the caller's own) sees its own cancellation in order, exactly as around a plain coroutine:
a wrapper's scope that catches its own turns it into its own result, and one that belongs further
out goes on up. When it leaves the pipeline, the one result is published from `call.outcome`
(superseded: it is a caller abort) and the `CancelledError` propagates. Cancellation is level-
triggered, as in Trio and AnyIO: a listener that swallows a cancellation of the awaiting task
(its `cancelling()` count stays raised) does not end it — the body is not started (`next()`
raises it again) and the call raises it again at the end of its stage, after its result is
published. A `CancelledError` nobody requested (the task is not being cancelled) is a failure.

A call's life. The call (`execution.Call`) holds its state and its in-flight work, and the stage
only moves forward once dispatch ends (dispatch → finalize → published; `body` is dispatch with
a base running). The `tools/execute` waterfall's base is bound to the call: a base whose body
has not settled is recorded on it (`Call.run`), and when the waterfall returns or raises with one
still in flight (a shielded `next()`, one run in a task of its own, `wait_for(shield(next()))`)
dispatch aborts that body's signal and waits for it to settle before the result is built; a
base that ends after the waterfall did writes nothing to the call, and a `next()` called after
the waterfall ended starts nothing (`ABORTED_BEFORE_DISPATCH`, for its caller only). Whether a
body of the call started is sticky (`Call.body_invoked`): `ABORTED_BEFORE_DISPATCH` is never
published for a call whose body ran, however often a wrapper calls `next()`. A cancellation
that lands on the body's private settle future is the awaiting task's by construction (one
requested before `execute()` and delivered there included), so it is recorded where it lands
(`Call.landed`) and raised when it leaves the waterfall, never turned into a result. A
`BaseException` while publishing (from `finalize_content` or an observer) is raised once every
observer has seen the one result.

Python decision: a body that re-raises its own signal's abort (`async with
exec.signal.cancels():`, `exec.signal.throw_if_aborted()`) has not failed on its own; its call
is classified like a cooperative body that returned (`ABORTED`). Any other exception — a
`HarnessError` raised on abort included — is tool-owned and kept.

Agent scopes. A call captures its agent's scope (`Call.scope`) when it is created: every lookup
of its tool resolves from that scope, and its listener table (`Call.listeners`) is the kernel's
untagged table for a call without a scope, or the scope's live filtered view (spec §7.5).

Results flow as values between stages (`Prepared`, `Dispatched`); nothing is signalled with
exceptions except the asyncio cancellation of the awaiting task.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import sys
from asyncio import current_task as _current_task
from asyncio import get_running_loop as _running_loop
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from types import CoroutineType
from typing import Final, Literal, Protocol, TypeAlias

from ..core.errors import error_message
from ..core.json import NotLosslessJson, snapshot
from ..core.signals import AbortError, AbortSignal
from ..core.timeout import TimeoutReason
from ..kernel.agent_scope import AgentScope
from ..kernel.events import EventTable, Listener, waterfall
from .approval import ApprovalRequest
from .body import (
    BODY_TASK_PREFIX,
    HEADROOM,
    BodyRun,
    BodyTask,
    Fatal,
    is_fatal,
    run_sync_body,
    settled,
    start_body,
)
from .decisions import Accept, Allow, Ask, Deny
from .definition import ToolDefinition
from .errors import ToolNotFoundError
from .execution import BODY, DISPATCH, FINALIZE, PUBLISHED, Call, ToolExecutionInput
from .outcomes import (
    apply_post_decision,
    canonical_success,
    materialize,
    normalize,
    supersede,
    with_content,
    with_deferred,
)
from .results import (
    ToolExecutionResult,
    ToolSuccess,
    aborted_before_dispatch_result,
    aborted_result,
    denial_result,
    failure_from,
    timed_out_result,
)
from .slow_stop import SlowStopWatch

__all__ = ["Dispatched", "EventBus", "Pipeline", "Prepared"]

_log = logging.getLogger("tether.tools")

_ALLOW: Final = Allow()
_DIRECT: Final = True
"""`_base`'s marker for a call from dispatch itself (see `_base`)."""
_ABORTED: Final = aborted_result()
_ACCEPT: Final = Accept()
_PRE: Final = "tools/pre-execute"
_EXECUTE: Final = "tools/execute"
_POST: Final = "tools/post-execute"
_RESULT: Final = "tools/result"

Reached: TypeAlias = "tuple[ToolExecutionResult, bool]"
"""A stage's result and whether `tools/post-execute` still sees it."""


async def _allow(*_: object) -> Allow:
    return _ALLOW


async def _accept(*_: object) -> Accept:
    return _ACCEPT


def _waterfall(
    listeners: tuple[Listener, ...],
    args: tuple[object, ...],
    base: Callable[..., Awaitable[object]],
) -> Awaitable[object]:
    """`events.waterfall` with a shortcut: a lone listener gets `base` itself as its `next` (the
    queue it would consume holds nothing else), so no queue object is made. `base` ignores
    arguments, as `next` does."""
    if len(listeners) == 1:
        result = listeners[0](*args, base)
        if type(result) is CoroutineType or inspect.isawaitable(result):
            return result
        return _resolved(result)
    return waterfall(listeners, args, base)


async def _resolved(value: object) -> object:
    return value


@dataclass(frozen=True, slots=True)
class Prepared:
    """What `prepare` decided: go on to `dispatch`, or a result with or without post-execute."""

    kind: Literal["dispatch", "post-result", "final-result"]
    call: Call
    result: ToolExecutionResult | None = None


@dataclass(frozen=True, slots=True)
class Dispatched:
    """What `dispatch` produced; `post-result` still receives `tools/post-execute`."""

    kind: Literal["post-result", "final-result"]
    result: ToolExecutionResult


class EventBus(Protocol):
    """The part of the kernel context the pipeline uses."""

    def get(self, name: str) -> object | None: ...


def _being_cancelled(call: Call) -> bool:
    """Whether the task running the call's stage has a cancellation request it did not have when
    the stage began (a listener may have swallowed its `CancelledError`; the request stands)."""
    task = _current_task()
    return task is not None and task.cancelling() > call.cancel_baseline


def _raise_if_cancelled(call: Call, result: ToolExecutionResult) -> None:
    """Raise the awaiting task's cancellation again if a listener swallowed it: `result` is what
    the stage reached, and becomes `call.outcome` for the one result published on the way out."""
    task = _current_task()
    if task is not None and task.cancelling() > call.cancel_baseline:
        call.outcome = result
        raise asyncio.CancelledError


class Pipeline:
    """The stages; `ToolRuntime` supplies the registry lookups, the listener table and the bus."""

    _bus: EventBus
    _events: EventTable
    _table: Mapping[str, tuple[Listener, ...]]
    """The kernel's live snapshots of untagged listeners by event name (absent when none): what
    a call without an agent scope dispatches to. A scoped call uses its scope's filtered view."""

    def _scope_of(self, agent: object | None) -> AgentScope | None:
        raise NotImplementedError

    def _visible(self, name: str, scope: AgentScope | None) -> ToolDefinition | None:
        raise NotImplementedError

    _lookup: Callable[[str], ToolDefinition | None]
    """`_visible` for calls without an agent scope: the global table's `dict.get` (no Python
    frame on the hot path)."""

    def _deny_by_guard(self, call: Call) -> str | None:
        raise NotImplementedError

    _live_guards: int
    """How many guards are registered (the policy stage is skipped without guards and listeners)."""

    _slow_stop_after_s: float | None = 5.0
    """Seconds a body may take to settle after its signal aborted before `tools/slow-stop`."""

    def _resolve(self, call: Call) -> ToolDefinition:
        """The definition the call reaches now (live registry); `UNKNOWN_TOOL` when gone."""
        scope = call.scope
        tool = self._lookup(call.name) if scope is None else self._visible(call.name, scope)
        if tool is None:
            raise ToolNotFoundError(call.name)
        return tool

    # -- execute -------------------------------------------------------------------------------

    async def execute(self, input: ToolExecutionInput) -> ToolExecutionResult:
        """Run one call through every stage. Never raises for tool or policy failures."""
        task = _current_task()  # every stage of execute() runs in this task
        call, early = self._create(input, task)
        try:
            if early is not None:
                return self.finish(call, early)
            if self._live_guards or _PRE in call.listeners:
                reached = await self._policy(call)
            elif call.caller_signal._aborted or call.interrupted:
                reached = (aborted_before_dispatch_result(), True)
            else:
                reached = None
            result, needs_post = await self._dispatch(call) if reached is None else reached
            if needs_post and _POST in call.listeners:
                return await self._finalize(call, result, task)
            # _raise_if_cancelled, inline
            if task is not None and task.cancelling() > call.cancel_baseline:
                call.outcome = result
                raise asyncio.CancelledError
            if needs_post:
                call.stage = FINALIZE
                if call.caller_signal._aborted or call.interrupted:
                    result = supersede(call, result)
            return self.finish(call, result)
        except BaseException as exc:
            # The awaiting task was cancelled (or the body raised KeyboardInterrupt/SystemExit,
            # or this coroutine is being closed, or the stack ran out): publish the one result,
            # then let it through.
            if call.stage is not PUBLISHED:
                # Publishing may need more stack than a call that ran out of it has left: the
                # limit is raised while it runs (as the interpreter does while it handles a
                # RecursionError) and restored from this frame, which ran within it.
                limit = sys.getrecursionlimit()
                sys.setrecursionlimit(limit + HEADROOM)
                try:
                    self.finish(call, _escaped_outcome(call, exc))
                finally:
                    sys.setrecursionlimit(limit)
            raise

    # -- create --------------------------------------------------------------------------------

    def create(self, input: ToolExecutionInput) -> Prepared:
        """Spec §1.1–§1.2: read the input once, capture the finalizer, snapshot the arguments."""
        call, early = self._create(input, _current_task())
        if early is not None:
            return Prepared("final-result", call, early)
        return Prepared("dispatch", call)

    def _create(
        self, input: ToolExecutionInput, task: asyncio.Task[object] | None
    ) -> tuple[Call, ToolExecutionResult | None]:
        call_id = input.call_id
        root_call_id = input.root_call_id
        name = input.name
        agent = input.agent
        parent = input.parent
        signal = input.signal
        scope = None if agent is None else self._scope_of(agent)
        visible = self._lookup(name) if scope is None else self._visible(name, scope)
        call = Call(
            call_id,
            call_id if root_call_id is None else root_call_id,
            name,
            agent,
            parent,
            signal,
            None if visible is None else visible.finalize_content,
        )
        if scope is None:
            call.listeners = self._table
        else:
            call.scope = scope
            call.listeners = self._events.admitted(scope)
        if task is not None:
            call.cancel_baseline = task.cancelling()
        try:
            call.arguments = snapshot(input.arguments)
        except NotLosslessJson:
            return call, failure_from(
                TypeError("tool execution arguments must be losslessly JSON-serializable")
            )
        except Exception as exc:
            return call, failure_from(exc)
        if signal.aborted:
            return call, aborted_before_dispatch_result()
        return call, None

    async def prepare(self, input: ToolExecutionInput) -> Prepared:
        """The scheduler's first stage: `create` then `policy`."""
        prepared = self.create(input)
        if prepared.kind != "dispatch":
            return prepared
        return await self.policy(prepared.call)

    # -- policy --------------------------------------------------------------------------------

    async def policy(self, call: Call) -> Prepared:
        """Spec §1.3–§1.7: pre-execute, approval, guards and the pre-dispatch checks."""
        reached = await self._policy(call)
        if reached is None:
            _raise_if_cancelled(call, aborted_before_dispatch_result())
            return Prepared("dispatch", call)
        result, needs_post = reached
        _raise_if_cancelled(call, result)
        return Prepared("post-result" if needs_post else "final-result", call, result)

    async def _policy(self, call: Call) -> Reached | None:
        approval_cancelled = False
        try:
            listeners = call.listeners.get(_PRE)
            decision = (
                _ALLOW if listeners is None else await _waterfall(listeners, (call.view,), _allow)
            )
            if isinstance(decision, Allow):
                allowed, denial = True, None
            elif isinstance(decision, Ask):
                allowed, denial, approval_cancelled = await self._ask(call, decision)
            elif isinstance(decision, Deny):
                if not isinstance(decision.reason, str):
                    raise TypeError("Deny(reason) needs a str reason")
                allowed, denial = False, decision.reason
            else:
                raise TypeError(
                    f"tools/pre-execute must decide Allow(), Deny(reason) or Ask(reason); "
                    f"got {type(decision).__name__}"
                )
            if allowed and self._live_guards:
                denial = self._deny_by_guard(call)
        except asyncio.CancelledError as exc:
            if _being_cancelled(call):
                call.interrupted = True
                raise
            return failure_from(exc), False
        except Exception as exc:
            return failure_from(exc), False
        if approval_cancelled and (call.caller_signal._aborted or call.interrupted):
            return aborted_before_dispatch_result(), True
        if denial is not None:
            return denial_result(denial), True
        if call.caller_signal._aborted or call.interrupted:
            return aborted_before_dispatch_result(), True
        return None

    async def _ask(self, call: Call, ask: Ask) -> tuple[bool, str | None, bool]:
        name = call.name
        service = self._bus.get("approval")
        if service is None:
            return (
                False,
                ask.reason
                if ask.reason is not None
                else f'tool "{name}" requires approval (not yet supported)',
                False,
            )
        if call.agent is None:
            return (
                False,
                f'tool "{name}" requires approval, but the call has no agent to route it through',
                False,
            )
        request = ApprovalRequest(
            agent=call.agent,
            tool_name=name,
            call_id=call.call_id,
            reason=ask.reason,
            signal=call.caller_signal,
        )
        outcome = await service.request(request)  # type: ignore[attr-defined]
        if outcome == "allowed-once":
            return True, None, False
        if outcome == "rejected":
            return False, f'the user rejected tool "{name}"', False
        if outcome == "cancelled":
            return False, f'approval for tool "{name}" was cancelled', True
        if outcome == "unavailable":
            return (
                False,
                f'tool "{name}" requires approval, but no approval channel is available',
                False,
            )
        try:
            shown = json.dumps(outcome)
        except (TypeError, ValueError):
            shown = repr(outcome)
        raise RuntimeError(f"unreachable variant in ApprovalOutcome: {shown}")

    # -- dispatch ------------------------------------------------------------------------------

    async def dispatch(self, call: Call) -> Dispatched:
        """Spec §1.8–§1.11: the around-dispatch waterfall, normalization and contexts. Usually
        awaited in a task of its own (the scheduler's): cancellation counts from here."""
        task = _current_task()
        call.cancel_baseline = 0 if task is None else task.cancelling()
        result, needs_post = await self._dispatch(call)
        return Dispatched("post-result" if needs_post else "final-result", result)

    async def _dispatch(self, call: Call) -> Reached:
        call.stage = DISPATCH
        escaped: BaseException | None = None
        wrappers = call.listeners.get(_EXECUTE)
        try:
            if wrappers is None:
                raw: object = await self._base(call, _DIRECT)
            else:
                raw = await _waterfall(wrappers, (call.view,), partial(self._base, call))
        except GeneratorExit:  # closed: nothing can be awaited; every body in flight stops
            call.stage = FINALIZE
            _abort_in_flight(call)
            raise
        except BaseException as exc:
            escaped = exc
        call.stage = FINALIZE  # the waterfall has ended: a next() from now on starts nothing
        if call.run is not None:  # a base left in flight (a shielded next(), one in a task)
            escaped = await _quiesce(call, escaped)
        call.signal = call.caller_signal
        if escaped is not None:
            return _dispatch_escaped(call, escaped)
        if wrappers is None:  # the base's results are already normal
            result: ToolExecutionResult = raw  # type: ignore[assignment]
        elif raw is call.outcome and type(raw) is ToolSuccess and raw._owner is call.token:
            result = raw  # the base's own canonical success, passed through
        else:
            try:
                result = normalize(call, raw, self._resolve)
            except Exception as exc:
                return failure_from(exc), False
        if call.deferred:
            result = with_deferred(call, result)
        if call.caller_signal._aborted or call.interrupted:
            result = supersede(call, result)
        call.outcome = result
        return result, True

    async def _base(self, call: Call, *direct: object) -> ToolExecutionResult:
        """The innermost `next()`: fuse signals, resolve the tool, run the body to quiescence,
        canonicalize. A cancellation of the awaiting task while the body runs aborts the body's
        signal; once the body has settled, its outcome is `call.outcome` and the cancellation is
        raised from here, inside every wrapper's scope (see the module note). A cancellation a
        wrapper swallowed before delegating is raised from here without starting the body.
        `direct` (`_DIRECT`) when dispatch awaits it itself (no wrappers): nothing can leave it
        in flight; a wrapper's `next()` passes nothing (it takes no arguments)."""
        if not direct:  # a wrapper's next(): the waterfall may have ended
            stage = call.stage
            if stage is not DISPATCH and stage is not BODY:
                return aborted_before_dispatch_result()  # a kept next(): it starts nothing
        wrapper_signal = call.signal
        caller_signal = call.caller_signal
        if wrapper_signal._aborted or caller_signal._aborted or call.interrupted:
            return _stopped(call)
        if _being_cancelled(call):  # a wrapper swallowed a cancellation and delegated anyway
            call.outcome = _stopped(call)
            raise asyncio.CancelledError
        body_signal = AbortSignal()
        relay = _Relay(body_signal, wrapper_signal, caller_signal, call, self._slow_stop_after_s)
        call.signal = body_signal
        call.stage = BODY
        result: ToolExecutionResult
        cancelled: BaseException | None = None
        try:
            scope = call.scope
            tool = self._lookup(call.name) if scope is None else self._visible(call.name, scope)
            if tool is None:
                raise ToolNotFoundError(call.name)
            value, raised, cancelled = await _run_body(tool, call, relay, direct)
            if not relay.started:  # cancelled before the body's first step: it never ran
                result = _stopped(call)
            elif raised is None:
                result = canonical_success(tool, call, value)
                if body_signal._aborted:
                    result = aborted_result()
            else:
                result = _body_failure(call, raised, body_signal)
                if cancelled is None and is_fatal(raised):
                    cancelled = raised  # published first, then it reaches the caller
            if cancelled is not None and result is _ABORTED:
                reason = body_signal._reason  # the first cause: a deadline that fired earlier
                if type(reason) is TimeoutReason:  # stays a timeout; no wrapper can say so now
                    result = timed_out_result(reason)
        except GeneratorExit:  # closed mid-body: the body stops on its abort, keeps its signal
            relay.detach()
            raise
        except Exception as exc:  # resolution and canonicalization failures
            result = failure_from(exc)
        relay.detach()
        stage = call.stage
        if stage is BODY or stage is DISPATCH:  # the waterfall still runs: it writes the call
            call.stage = DISPATCH
            call.signal = wrapper_signal
            call.outcome = result
        if cancelled is not None:
            raise cancelled
        return result

    # -- finalize and finish -------------------------------------------------------------------

    async def finalize(self, call: Call, result: ToolExecutionResult) -> ToolExecutionResult:
        """Spec §1.12–§1.13: post-execute and its decision, then `finish`. If the awaiting task
        is being cancelled, raises its `CancelledError` before publishing anything."""
        return await self._finalize(call, result, _current_task())

    async def _finalize(
        self, call: Call, result: ToolExecutionResult, task: asyncio.Task[object] | None
    ) -> ToolExecutionResult:
        """`finalize`, run by `task` (the task awaiting it)."""
        call.stage = FINALIZE
        call.outcome = result
        listeners = call.listeners.get(_POST)
        if listeners is not None:
            try:
                decision = await _waterfall(listeners, (call.view, result), _accept)
                if decision is not _ACCEPT:  # the base's plain Accept() leaves the outcome as is
                    result = apply_post_decision(call, result, decision, self._resolve)
            except asyncio.CancelledError as exc:
                if _being_cancelled(call):
                    call.interrupted = True
                    raise
                return self.finish(call, failure_from(exc))
            except Exception as exc:
                result = failure_from(exc)
                _raise_if_cancelled(call, result)
                return self.finish(call, result)
        if task is not None and task.cancelling() > call.cancel_baseline:  # _raise_if_cancelled
            call.outcome = result
            raise asyncio.CancelledError
        if call.caller_signal._aborted or call.interrupted:
            result = supersede(call, result)
        return self.finish(call, result)

    def finish(self, call: Call, result: ToolExecutionResult) -> ToolExecutionResult:
        """Spec §1.14, synchronous and exactly once: freeze, finalize content, publish.

        Publication cannot be interrupted: a `BaseException` from `finalize_content` makes the
        result that exception's failure, one from an observer is held until every observer has
        seen the result; either is raised once the call is published (as a body's is)."""
        if call.stage is PUBLISHED:
            raise RuntimeError(f'tool "{call.name}" ({call.call_id}): result already published')
        if type(result) is ToolSuccess and result._owner is call.token:
            final: ToolExecutionResult = result  # canonical: frozen when it was built
        else:
            try:
                final = materialize(result)
            except Exception as exc:
                final = materialize(failure_from(exc))
        finalizer = call.finalizer
        view = call.view
        fatal: BaseException | None = None
        if finalizer is not None:
            try:
                content = finalizer(view, final)
                if content is not None:
                    final = with_content(final, content)
            except Exception as exc:
                final = materialize(failure_from(exc))
            except BaseException as exc:  # published as its failure, then raised
                final = materialize(failure_from(exc))
                fatal = exc
        call.stage = PUBLISHED
        call.outcome = final
        observers = call.listeners.get(_RESULT)
        if observers is not None:
            for observer in observers:
                try:
                    returned = observer(view, final)
                    if returned is not None and inspect.isawaitable(returned):
                        if inspect.iscoroutine(returned):
                            returned.close()
                        raise TypeError("observers are synchronous; it returned an awaitable")
                except BaseException as exc:  # the next observers still see the result
                    fatal = _observer_failed(call, exc, fatal)
        if fatal is not None:
            raise fatal
        return final


def _observer_failed(
    call: Call, exc: BaseException, fatal: BaseException | None
) -> BaseException | None:
    """An observer raised: an `Exception` is logged; the first `BaseException` is kept, to be
    raised once every observer has seen the result. Returns what is kept."""
    if not isinstance(exc, Exception):
        return exc if fatal is None else fatal
    try:
        _log.warning(
            'tool "%s" (%s): tools/result observer failed: %s',
            call.name,
            call.call_id,
            error_message(exc),
        )
    except Exception:  # e.g. no stack left to log with: the observers still come first
        pass
    return fatal


class _Relay(BodyRun):
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

    def detach(self, *_: object) -> None:
        """Stop following (idempotent); also a done-callback of the body's settle future."""
        if self._wrapper_key >= 0:
            self._wrapper._unsubscribe(self._wrapper_key)
            self._wrapper_key = -1
        if self._caller_key >= 0:
            self._caller._unsubscribe(self._caller_key)
            self._caller_key = -1


async def _run_body(
    tool: ToolDefinition, call: Call, relay: _Relay, direct: tuple[object, ...]
) -> tuple[object, BaseException | None, BaseException | None]:
    """Start the body in its own task and wait until it is done: `(value, None, cancelled)` or
    `(None, what it raised, cancelled)`, where `cancelled` is the awaiting task's cancellation
    that arrived meanwhile (None if none did), for the caller to raise once it has built the
    outcome. Sets `call.body_invoked` once the body has started. See the module note."""
    body_signal = relay.signal
    if tool.is_async:
        coro = tool.execute(call.arguments, call.view)
        sync = False
    else:
        coro = run_sync_body(relay, body_signal, tool.execute, call.arguments, call.view)
        sync = True
    loop = _running_loop()
    name = f"{BODY_TASK_PREFIX}{call.name} {call.call_id}"
    try:
        start_body(coro, loop, name, body_signal, relay, sync)  # type: ignore[arg-type]
    except BaseException:  # e.g. out of stack: nothing is left un-awaited, whatever did
        if not getattr(relay, "started", False):  # start stops (closing needs no frame)
            coro.close()  # type: ignore[attr-defined]
        body_signal._abort(AbortError())
        raise
    task = relay.task
    cancelled: BaseException | None = None
    if task.done():
        relay.detach()
    else:
        settle = relay.settle
        assert settle is not None  # a body still running has one
        settle.add_done_callback(relay.detach)  # the per-call signal freezes when it settles
        relay._watched = task
        if body_signal._aborted:  # aborted while the first step ran
            relay.watch()
        if direct:  # awaited by dispatch itself: it cannot be left in flight
            pass
        elif call.run is None:  # in flight: dispatch stops it if the waterfall ends first
            call.run = relay
        else:
            _also_in_flight(call, relay)
        try:
            await settle
        except asyncio.CancelledError as exc:
            # The settle future is private: a cancellation here is the awaiter's, by construction
            # (one requested before execute() and delivered now included). Recorded where it
            # lands, so dispatch knows it for its own when it leaves the waterfall.
            body_signal._abort(AbortError())  # also if the body just ended: it ends aborted
            relay.watch()
            cancelled = call.landed = await _drain(task, loop, exc)
        except GeneratorExit:  # closed mid-body: nothing can be awaited now
            body_signal._abort(AbortError())
            relay.watch()
            if relay.started:
                call.body_invoked = True
            raise
        if direct:
            pass
        elif call.run is relay:
            call.run = None
        elif call.runs is not None and relay in call.runs:
            call.runs.remove(relay)
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


def _stopped(call: Call) -> ToolExecutionResult:
    """What a base that starts no body returns: `ABORTED` when a body of this call already ran
    (a retry), else `ABORTED_BEFORE_DISPATCH`: no body of this call ever started."""
    return aborted_result() if call.body_invoked else aborted_before_dispatch_result()


def _also_in_flight(call: Call, relay: _Relay) -> None:
    """A second base in flight at once (a wrapper running `next()` concurrently)."""
    if call.runs is None:
        call.runs = [relay]
    else:
        call.runs.append(relay)


def _in_flight(call: Call) -> list[_Relay]:
    """Every base still in flight, now owned by the caller (the call forgets them)."""
    runs = [] if call.run is None else [call.run]
    if call.runs is not None:
        runs.extend(call.runs)
    call.run = None
    call.runs = None
    return runs


def _abort_in_flight(call: Call) -> list[_Relay]:
    """Abort every body still in flight (each stops on its own signal), and take them."""
    runs = _in_flight(call)
    for run in runs:
        run.abort(AbortError())
        if run.started:
            call.body_invoked = True
    return runs


async def _quiesce(call: Call, escaped: BaseException | None) -> BaseException | None:
    """The waterfall ended while a base was still in flight: abort its body and wait until it
    has settled, so the result is built (and published) only once no body of the call runs.
    Cancellations of the awaiting task meanwhile land on a private waiter — the caller's by
    construction: the newest is returned (chained to what escaped before), to be raised."""
    loop = _running_loop()
    for run in _abort_in_flight(call):
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
        if run.started:
            call.body_invoked = True
    return escaped


def _dispatch_escaped(call: Call, exc: BaseException) -> Reached:
    """What an exception leaving the `tools/execute` waterfall makes of the dispatch: the
    caller's cancellation goes on (the one it requested, or one that landed on the pipeline's
    own waiters), a `KeyboardInterrupt`/`SystemExit` goes on, anything else is a failure."""
    if isinstance(exc, asyncio.CancelledError):
        if exc is call.landed or _being_cancelled(call):  # every wrapper scope let it through
            call.interrupted = True
            if call.outcome is not None:  # the base's raw result: add what dispatch would
                call.outcome = with_deferred(call, call.outcome)
            raise exc
        return failure_from(exc), False
    if isinstance(exc, Exception):
        return failure_from(exc), False
    raise exc


def _shielded() -> contextlib.AbstractContextManager[object]:
    anyio = sys.modules.get("anyio")
    if anyio is None:
        return contextlib.nullcontext()
    try:
        scope: contextlib.AbstractContextManager[object] = anyio.CancelScope(shield=True)
    except Exception:  # anyio present but not usable here: wait unshielded
        return contextlib.nullcontext()
    return scope


def _body_failure(
    call: Call, raised: BaseException, body_signal: AbortSignal
) -> ToolExecutionResult:
    """Classify what a body raised (spec §1.15 row 11, with the Python decisions):

    - its own signal's abort re-raised (`signal.cancels()`, `throw_if_aborted()`): `ABORTED`;
    - its task ended cancelled after its signal aborted (it stopped because of the abort, or
      `asyncio.run()` cancelled it while shutting down): `ABORTED`; otherwise (it cancelled
      itself, or raised `CancelledError` on its own) a tool failure;
    - `KeyboardInterrupt`/`SystemExit`: a tool failure (the base raises the exception once the
      outcome is built, so it is published first);
    - anything else, `GeneratorExit` and other `BaseException`s included: a tool failure.
    """
    if _is_own_abort(raised, body_signal):
        return aborted_result()
    if isinstance(raised, asyncio.CancelledError) and (body_signal._aborted or call.interrupted):
        return aborted_result()
    return failure_from(raised)


def _is_own_abort(exc: BaseException, body_signal: AbortSignal) -> bool:
    """Whether the body just propagated its own signal's abort (`signal.cancels()`,
    `throw_if_aborted()`): that is the call's cancellation, not a tool-owned failure."""
    if not body_signal._aborted:
        return False
    reason = body_signal._reason
    return exc is reason or (isinstance(exc, AbortError) and exc.reason is reason)


def _escaped_outcome(call: Call, exc: BaseException) -> ToolExecutionResult:
    """The result of a call that a `BaseException` is leaving: what it had reached (superseded
    when the awaiting task was cancelled), or what the exception says."""
    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        call.interrupted = True
    outcome = call.outcome
    if outcome is None:
        if not call.interrupted:
            return failure_from(exc)
        return aborted_result() if call.body_invoked else aborted_before_dispatch_result()
    return supersede(call, outcome) if call.interrupted else outcome
