"""The execution pipeline: one call from creation to exactly one frozen `tools/result`.

Owns the stage order of spec §1.0a (the cancellation precedence of §1.15 it consults is
`tools.precedence`'s):

    create   token, finalizer capture, argument snapshot (a failure here wins over everything)
    prepare  pre-aborted short circuit → tools/pre-execute → approval → guards → last check
             (a listener's `next(arguments=...)` replaces the call's arguments for the rest of
             the chain — `tools.pre_chain` —, an `Allow(arguments=...)` before the guards)
    dispatch tools/execute waterfall around the base dispatch (per-call body signal, one task
             for the body, canonical output) → normalization → deferred contexts → check
    finalize tools/post-execute → decision → check
    finish   materialize → finalize_content once → materialize → freeze → publish
             (`tools.publish`)

Cancellation design. The caller's signal is observed, never aborted by the registry. The body
always gets a per-call signal that aborts with the innermost wrapper's or the caller's reason and
is detached when the body settles. The body runs in its own task and is awaited to quiescence
(`tools.body_run`): if the task awaiting the pipeline is cancelled, the per-call signal aborts
(reason `AbortError()`) and the body is still awaited — no `CancelledError` is thrown into it.
Only successes are superseded by cancellation codes; every failure is more specific.

Where a cancellation surfaces. A cancellation of the awaiting task is raised where it was
delivered, once what it interrupted has settled: from the pre-execute/post-execute listener it
landed in, or — while the body runs — from the innermost `next()` of the `tools/execute`
waterfall, after the body settled and its outcome became `call.outcome`. So every cancel scope
between the caller and the body (a wrapper's `asyncio.timeout`, `signal.cancels()`, an anyio
scope, the caller's own) sees its own cancellation in order, exactly as around a plain coroutine:
a wrapper's scope that catches its own turns it into its own result, and one that belongs further
out goes on up. When it leaves the pipeline, the one result is published from `call.outcome`
(superseded: it is a caller abort) and the `CancelledError` propagates. A cancellation requested
before `execute()` and not yet delivered (the task's `cancelling()` is already raised when the
call is created) is delivered at its entry, before any listener or body starts: the call is
`ABORTED_BEFORE_DISPATCH` and the cancellation is raised — never left to land in a listener or
wrapper where it could not be told from one the listener raised itself. Cancellation is level-
triggered, as in Trio and AnyIO: a listener that swallows a cancellation of the awaiting task
(its `cancelling()` count stays raised) does not end it — the body is not started (`next()`
raises it again) and the call raises it again at the end of its stage, after its result is
published. A `CancelledError` nobody requested (the task is not being cancelled) is a failure.

A call's life. The call (`execution.Call`) holds its state and its in-flight work, and the stage
only moves forward once dispatch ends (dispatch → finalize → published; `body` is dispatch with
a base running); the transitions are the stores in this module's stages and `tools.publish`.
The `tools/execute` waterfall's base is bound to the call: a base whose body has not settled is
recorded on it, and when the waterfall returns or raises with one still in flight dispatch
stops it and waits for it to settle before the result is built (`tools.body_run`); a base that
ends after the waterfall did writes nothing to the call, and a `next()` called after the
waterfall ended starts nothing (`ABORTED_BEFORE_DISPATCH`, for its caller only). A call has at
most one base in flight: a `next()` started while another base of the call runs (stage `BODY`:
`asyncio.gather(next(), next())`) starts nothing and raises a `RuntimeError` naming the
wrappers (`tools.body_run.overlapping_next`); a retry after the earlier `next()` returned runs
the base again (spec §7.3). A
`BaseException` while publishing (from `finalize_content` or an observer) is raised once every
observer has seen the one result.

Agent scopes. A call captures its agent's scope (`Call.scope`) when it is created: every lookup
of its tool resolves from that scope, and its listener table (`Call.listeners`) is the kernel's
untagged table for a call without a scope, or the scope's live filtered view (spec §7.5).

Results flow as values between stages (`Prepared`, `Dispatched`); nothing is signalled with
exceptions except the asyncio cancellation of the awaiting task.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
from asyncio import current_task as _current_task
from asyncio import sleep as _sleep
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from types import CoroutineType
from typing import Final, Literal, Protocol

from ..core.json import NotLosslessJson, snapshot
from ..core.signals import AbortSignal
from ..core.timeout import TimeoutReason
from ..kernel.agent_scope import AgentScope
from ..kernel.events import EventTable, Listener, waterfall
from .approval import ApprovalRequest
from .body import HEADROOM, is_fatal
from .body_run import Relay, abort_in_flight, overlapping_next, quiesce, run_body
from .decisions import MISSING, Accept, Allow, Ask, Deny
from .definition import ToolDefinition
from .errors import ToolNotFoundError
from .execution import BODY, DISPATCH, FINALIZE, PUBLISHED, Call, ToolExecutionInput
from .outcomes import (
    apply_post_decision,
    canonical_success,
    normalize,
    supersede,
    with_deferred,
)
from .pre_chain import start_pre_chain
from .precedence import (
    Reached,
    being_cancelled,
    body_failure,
    dispatch_escaped,
    escaped_outcome,
    raise_if_cancelled,
    stopped,
)
from .publish import publish
from .results import (
    ToolExecutionResult,
    ToolSuccess,
    aborted_before_dispatch_result,
    aborted_result,
    denial_result,
    failure_from,
    timed_out_result,
)

__all__ = ["Dispatched", "EventBus", "Pipeline", "Prepared"]

_ALLOW: Final = Allow()
_DIRECT: Final = True
"""`_base`'s marker for a call from dispatch itself (see `_base`)."""
_ABORTED: Final = aborted_result()
_ACCEPT: Final = Accept()
_PRE: Final = "tools/pre-execute"
_EXECUTE: Final = "tools/execute"
_POST: Final = "tools/post-execute"


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


async def _deliver_requested_cancel(call: Call) -> None:
    """Deliver a cancellation the awaiting task requested before the call was created (its
    `cancelling()` already raised) before anything of the call starts: the call is interrupted
    (ABORTED_BEFORE_DISPATCH) and the cancellation raised. `execute()` and `policy()` (the
    scheduler's path) both start with it."""
    try:
        await _sleep(0)
    except asyncio.CancelledError:
        call.interrupted = True
        raise


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
                return publish(call, early)
            if call.cancel_baseline:  # a cancellation may be requested and not yet delivered
                await _deliver_requested_cancel(call)
            if self._live_guards or _PRE in call.listeners:
                reached = await self._policy(call)
            elif call.caller_signal._aborted or call.interrupted:
                reached = (aborted_before_dispatch_result(), True)
            else:
                reached = None
            result, needs_post = await self._dispatch(call) if reached is None else reached
            if needs_post and _POST in call.listeners:
                return await self._finalize(call, result, task)
            # raise_if_cancelled, inline
            if task is not None and task.cancelling() > call.cancel_baseline:
                call.outcome = result
                raise asyncio.CancelledError
            if needs_post:
                call.stage = FINALIZE
                if call.caller_signal._aborted or call.interrupted:
                    result = supersede(call, result)
            return publish(call, result)
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
                    publish(call, escaped_outcome(call, exc))
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
        if signal._aborted:
            return call, aborted_before_dispatch_result()
        return call, None

    async def prepare(self, input: ToolExecutionInput) -> Prepared:
        """The scheduler's first stage: `create` then `policy`."""
        prepared = self.create(input)
        if prepared.kind != "dispatch":
            return prepared
        call = prepared.call
        try:
            return await self.policy(call)
        except BaseException as exc:  # the caller never sees this call: its one result
            if call.stage is not PUBLISHED:
                publish(call, escaped_outcome(call, exc))
            raise

    # -- policy --------------------------------------------------------------------------------

    async def policy(self, call: Call) -> Prepared:
        """Spec §1.3–§1.7: pre-execute, approval, guards and the pre-dispatch checks. A
        cancellation the awaiting task requested before the call was created, and not yet
        delivered, is delivered here, before any listener starts (raised, the call interrupted)."""
        if call.cancel_baseline:
            await _deliver_requested_cancel(call)
        reached = await self._policy(call)
        if reached is None:
            raise_if_cancelled(call, aborted_before_dispatch_result())
            return Prepared("dispatch", call)
        result, needs_post = reached
        raise_if_cancelled(call, result)
        return Prepared("post-result" if needs_post else "final-result", call, result)

    async def _policy(self, call: Call) -> Reached | None:
        approval_cancelled = False
        try:
            listeners = call.listeners.get(_PRE)
            decision = _ALLOW if listeners is None else await start_pre_chain(listeners, call)
            if isinstance(decision, Allow):
                allowed, denial = True, None
                if decision.arguments is not MISSING:  # an approver changed the input
                    call.arguments = snapshot(decision.arguments)
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
            if being_cancelled(call):
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
            abort_in_flight(call)
            raise
        except BaseException as exc:
            escaped = exc
        call.stage = FINALIZE  # the waterfall has ended: a next() from now on starts nothing
        if call.run is not None:  # a base left in flight (a shielded next(), one in a task)
            escaped = await quiesce(call, escaped)
        call.signal = call.caller_signal
        if escaped is not None:
            return dispatch_escaped(call, escaped)
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
        if not direct:  # a wrapper's next(): the waterfall may have ended, or a base may run
            stage = call.stage
            if stage is not DISPATCH:
                if stage is BODY:  # the call's one base in flight: this one starts nothing
                    raise overlapping_next(call)
                return aborted_before_dispatch_result()  # a kept next(): it starts nothing
        wrapper_signal = call.signal
        caller_signal = call.caller_signal
        if wrapper_signal._aborted or caller_signal._aborted or call.interrupted:
            return stopped(call)
        if being_cancelled(call):  # a wrapper swallowed a cancellation and delegated anyway
            call.outcome = stopped(call)
            raise asyncio.CancelledError
        body_signal = AbortSignal()
        relay = Relay(body_signal, wrapper_signal, caller_signal, call, self._slow_stop_after_s)
        call.signal = body_signal
        call.stage = BODY
        result: ToolExecutionResult
        cancelled: BaseException | None = None
        try:
            scope = call.scope
            tool = self._lookup(call.name) if scope is None else self._visible(call.name, scope)
            if tool is None:
                raise ToolNotFoundError(call.name)
            value, raised, cancelled = await run_body(tool, call, relay, direct)
            if not relay.started:  # cancelled before the body's first step: it never ran
                result = stopped(call)
            elif raised is None:
                result = canonical_success(tool, call, value)
                if body_signal._aborted:
                    result = aborted_result()
            else:
                result = body_failure(call, raised, body_signal)
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

    finish = staticmethod(publish)
    """Spec §1.14 (`tools.publish`): publish the call's one result, exactly once."""

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
                if being_cancelled(call):
                    call.interrupted = True
                    raise
                return publish(call, failure_from(exc))
            except Exception as exc:
                result = failure_from(exc)
                raise_if_cancelled(call, result)
                return publish(call, result)
        if task is not None and task.cancelling() > call.cancel_baseline:  # raise_if_cancelled
            call.outcome = result
            raise asyncio.CancelledError
        if call.caller_signal._aborted or call.interrupted:
            result = supersede(call, result)
        return publish(call, result)
