"""Cancellation precedence (spec §1.15): what a stopped, cancelled or failed stage makes of a call.

Owns the classification of a call's outcome when something other than a plain value ends a
stage: whether the awaiting task's cancellation is the stage's to raise (`being_cancelled`,
`raise_if_cancelled`: level-triggered, counted from `Call.cancel_baseline`), what a base that
starts no body returns (`stopped`), what an exception leaving the `tools/execute` waterfall
makes of the dispatch (`dispatch_escaped`), what a body's exception is (`body_failure`), and
the result of a call a `BaseException` is leaving (`escaped_outcome`). Only successes are
superseded by cancellation codes; every failure is more specific.

Python decision: a body that re-raises its own signal's abort (`async with
exec.signal.cancels():`, `exec.signal.throw_if_aborted()`) has not failed on its own; its call
is classified like a cooperative body that returned (`ABORTED`). Any other exception — a
`HarnessError` raised on abort included — is tool-owned and kept.

Does not own the stages that consult it (`tools.pipeline`), the results' shapes
(`tools.results`) or superseding and deferred contexts (`tools.outcomes`).
"""

from __future__ import annotations

import asyncio
from asyncio import current_task as _current_task
from typing import TypeAlias

from ..core.signals import AbortError, AbortSignal
from .execution import Call
from .outcomes import supersede, with_deferred
from .results import (
    ToolExecutionResult,
    aborted_before_dispatch_result,
    aborted_result,
    failure_from,
)

__all__ = [
    "Reached",
    "being_cancelled",
    "body_failure",
    "dispatch_escaped",
    "escaped_outcome",
    "raise_if_cancelled",
    "stopped",
]

Reached: TypeAlias = "tuple[ToolExecutionResult, bool]"
"""A stage's result and whether `tools/post-execute` still sees it."""


def being_cancelled(call: Call) -> bool:
    """Whether the task running the call's stage has a cancellation request it did not have when
    the stage began (a listener may have swallowed its `CancelledError`; the request stands)."""
    task = _current_task()
    return task is not None and task.cancelling() > call.cancel_baseline


def raise_if_cancelled(call: Call, result: ToolExecutionResult) -> None:
    """Raise the awaiting task's cancellation again if a listener swallowed it: `result` is what
    the stage reached, and becomes `call.outcome` for the one result published on the way out."""
    task = _current_task()
    if task is not None and task.cancelling() > call.cancel_baseline:
        call.outcome = result
        raise asyncio.CancelledError


def stopped(call: Call) -> ToolExecutionResult:
    """What a base that starts no body returns: `ABORTED` when a body of this call already ran
    (a retry), else `ABORTED_BEFORE_DISPATCH`: no body of this call ever started."""
    return aborted_result() if call.body_invoked else aborted_before_dispatch_result()


def dispatch_escaped(call: Call, exc: BaseException) -> Reached:
    """What an exception leaving the `tools/execute` waterfall makes of the dispatch: the
    caller's cancellation goes on (the one it requested, or one that landed on the pipeline's
    own waiters in this task), a `KeyboardInterrupt`/`SystemExit` goes on, anything else is a
    failure — a `CancelledError` of another task (a wrapper's spawned `next()` it cancelled,
    re-raised) included: nobody cancelled the caller."""
    if isinstance(exc, asyncio.CancelledError):
        landed = exc is call.landed and call.landed_in is _current_task()
        if landed or being_cancelled(call):  # every wrapper scope let it through
            call.interrupted = True
            if call.outcome is not None:  # the base's raw result: add what dispatch would
                call.outcome = with_deferred(call, call.outcome)
            raise exc
        return failure_from(exc), False
    if isinstance(exc, Exception):
        return failure_from(exc), False
    raise exc


def body_failure(
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


def escaped_outcome(call: Call, exc: BaseException) -> ToolExecutionResult:
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
