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
and the body is still awaited — no `CancelledError` is thrown into it; the call then publishes one
result and the `CancelledError` propagates. A cancelled caller before dispatch never starts the
body. Only successes are superseded by cancellation codes; every failure is more specific.

Python decision: a body that re-raises its own signal's abort (`async with
exec.signal.cancels():`, `exec.signal.throw_if_aborted()`) has not failed on its own; its call
is classified like a cooperative body that returned (`ABORTED`). Any other exception — a
`HarnessError` raised on abort included — is tool-owned and kept.

Results flow as values between stages (`Prepared`, `Dispatched`); nothing is signalled with
exceptions except the asyncio cancellation of the awaiting task.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Final, Literal, Protocol, cast

from ..core.errors import error_message
from ..core.json import NotLosslessJson, snapshot
from ..core.signals import AbortError, AbortSignal
from .approval import ApprovalRequest
from .decisions import Accept, Allow, Ask, Deny
from .definition import ToolDefinition
from .errors import ToolNotFoundError
from .execution import Execution, Stage, ToolExecution, ToolExecutionInput
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
    aborted_before_dispatch_result,
    aborted_result,
    denial_result,
    failure_from,
)

__all__ = ["Dispatched", "EventBus", "Pipeline", "Prepared"]

_log = logging.getLogger("tether.tools")

_ALLOW: Final = Allow()
_ACCEPT: Final = Accept()


async def _allow() -> Allow:
    return _ALLOW


async def _accept() -> Accept:
    return _ACCEPT


@dataclass(frozen=True, slots=True)
class Prepared:
    """What `prepare` decided: go on to `dispatch`, or a result with or without post-execute."""

    kind: Literal["dispatch", "post-result", "final-result"]
    exec: Execution
    result: ToolExecutionResult | None = None


@dataclass(frozen=True, slots=True)
class Dispatched:
    """What `dispatch` produced; `post-result` still receives `tools/post-execute`."""

    kind: Literal["post-result", "final-result"]
    result: ToolExecutionResult


class EventBus(Protocol):
    """The part of the kernel context the pipeline uses."""

    def get(self, name: str) -> object | None: ...
    def listeners(self, event: str) -> tuple[Callable[..., object], ...]: ...
    async def waterfall(
        self, event: str, *args: object, base: Callable[[], Awaitable[object]]
    ) -> object: ...


def _being_cancelled(exec: Execution) -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > exec.cancel_baseline


def _caller_aborted(exec: Execution) -> bool:
    return exec.caller_signal.aborted or exec.interrupted


class Pipeline:
    """The stages; `ToolRuntime` supplies the registry lookups and the event bus."""

    _bus: EventBus

    def _visible(self, name: str, agent: object | None) -> ToolDefinition | None:
        raise NotImplementedError

    def _deny_by_guard(self, exec: ToolExecution) -> str | None:
        raise NotImplementedError

    def _resolve(self, exec: Execution) -> ToolDefinition:
        """The definition the call reaches now (live registry); `UNKNOWN_TOOL` when gone."""
        tool = self._visible(exec.name, exec.agent)
        if tool is None:
            raise ToolNotFoundError(exec.name)
        return tool

    # -- execute -------------------------------------------------------------------------------

    async def execute(self, input: ToolExecutionInput) -> ToolExecutionResult:
        """Run one call through every stage. Never raises for tool or policy failures."""
        prepared = self.create(input)
        exec = prepared.exec
        try:
            if prepared.kind == "dispatch":
                prepared = await self.policy(exec)
            if prepared.kind == "dispatch":
                dispatched = await self.dispatch(exec)
                kind, result = dispatched.kind, dispatched.result
            else:
                kind, result = prepared.kind, cast(ToolExecutionResult, prepared.result)
            if kind == "post-result":
                return await self.finalize(exec, result)
            return self.finish(exec, result)
        except asyncio.CancelledError:
            if exec.stage is not Stage.PUBLISHED:
                object.__setattr__(exec, "interrupted", True)
                self.finish(exec, _interrupted_outcome(exec))
            raise

    # -- create --------------------------------------------------------------------------------

    def create(self, input: ToolExecutionInput) -> Prepared:
        """Spec §1.1–§1.2: read the input once, capture the finalizer, snapshot the arguments."""
        call_id = input.call_id
        root_call_id = input.root_call_id
        name = input.name
        agent = input.agent
        parent = input.parent
        signal = input.signal
        visible = self._visible(name, agent)
        exec = Execution(
            call_id=call_id,
            root_call_id=call_id if root_call_id is None else root_call_id,
            name=name,
            agent=agent,
            parent=parent,
            signal=signal,
            finalizer=None if visible is None else visible.finalize_content,
        )
        task = asyncio.current_task()
        if task is not None:
            object.__setattr__(exec, "cancel_baseline", task.cancelling())
        try:
            arguments = snapshot(input.arguments)
        except NotLosslessJson:
            failure = failure_from(
                TypeError("tool execution arguments must be losslessly JSON-serializable")
            )
            return Prepared("final-result", exec, failure)
        except Exception as exc:
            return Prepared("final-result", exec, failure_from(exc))
        object.__setattr__(exec, "_arguments", arguments)
        if signal.aborted:
            return Prepared("final-result", exec, aborted_before_dispatch_result())
        return Prepared("dispatch", exec)

    async def prepare(self, input: ToolExecutionInput) -> Prepared:
        """The scheduler's first stage: `create` then `policy`."""
        prepared = self.create(input)
        if prepared.kind != "dispatch":
            return prepared
        return await self.policy(prepared.exec)

    # -- policy --------------------------------------------------------------------------------

    async def policy(self, exec: Execution) -> Prepared:
        """Spec §1.3–§1.7: pre-execute, approval, guards and the pre-dispatch checks."""
        approval_cancelled = False
        try:
            decision = await self._bus.waterfall("tools/pre-execute", exec, base=_allow)
            if isinstance(decision, Ask):
                allowed, denial, approval_cancelled = await self._ask(exec, decision)
            elif isinstance(decision, Deny):
                if not isinstance(decision.reason, str):
                    raise TypeError("Deny(reason) needs a str reason")
                allowed, denial = False, decision.reason
            elif isinstance(decision, Allow):
                allowed, denial = True, None
            else:
                raise TypeError(
                    f"tools/pre-execute must decide Allow(), Deny(reason) or Ask(reason); "
                    f"got {type(decision).__name__}"
                )
            if allowed:
                denial = self._deny_by_guard(exec)
        except asyncio.CancelledError as exc:
            if _being_cancelled(exec):
                raise
            return Prepared("final-result", exec, failure_from(exc))
        except Exception as exc:
            return Prepared("final-result", exec, failure_from(exc))
        if approval_cancelled and _caller_aborted(exec):
            return Prepared("post-result", exec, aborted_before_dispatch_result())
        if denial is not None:
            return Prepared("post-result", exec, denial_result(denial))
        if _caller_aborted(exec):
            return Prepared("post-result", exec, aborted_before_dispatch_result())
        return Prepared("dispatch", exec)

    async def _ask(self, exec: Execution, ask: Ask) -> tuple[bool, str | None, bool]:
        name = exec.name
        service = self._bus.get("approval")
        if service is None:
            return (
                False,
                ask.reason
                if ask.reason is not None
                else f'tool "{name}" requires approval (not yet supported)',
                False,
            )
        if exec.agent is None:
            return (
                False,
                f'tool "{name}" requires approval, but the call has no agent to route it through',
                False,
            )
        request = ApprovalRequest(
            agent=exec.agent,
            tool_name=name,
            call_id=exec.call_id,
            reason=ask.reason,
            signal=exec.caller_signal,
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

    async def dispatch(self, exec: Execution) -> Dispatched:
        """Spec §1.8–§1.11: the around-dispatch waterfall, normalization and contexts."""
        object.__setattr__(exec, "stage", Stage.DISPATCH)
        try:
            raw = await self._bus.waterfall("tools/execute", exec, base=lambda: self._base(exec))
            result = normalize(exec, raw, self._resolve)
        except asyncio.CancelledError as exc:
            if _being_cancelled(exec):
                if exec.outcome is not None:  # the base's raw result: add what dispatch would
                    object.__setattr__(exec, "outcome", with_deferred(exec, exec.outcome))
                raise
            return Dispatched("final-result", failure_from(exc))
        except Exception as exc:
            return Dispatched("final-result", failure_from(exc))
        finally:
            object.__setattr__(exec, "_signal", exec.caller_signal)
            object.__setattr__(exec, "stage", Stage.FINALIZE)
        result = with_deferred(exec, result)
        if _caller_aborted(exec):
            result = supersede(exec, result)
        object.__setattr__(exec, "outcome", result)
        return Dispatched("post-result", result)

    async def _base(self, exec: Execution) -> ToolExecutionResult:
        """The innermost `next()`: fuse signals, resolve the tool, run the body, canonicalize."""
        wrapper_signal = exec._signal
        caller_signal = exec.caller_signal
        if wrapper_signal.aborted or caller_signal.aborted or exec.interrupted:
            return aborted_before_dispatch_result()
        body_signal = AbortSignal()
        relay = body_signal._abort
        remove_wrapper = wrapper_signal.add_listener(relay)
        remove_caller = (
            caller_signal.add_listener(relay) if caller_signal is not wrapper_signal else None
        )
        object.__setattr__(exec, "_signal", body_signal)
        try:
            tool = self._visible(exec.name, exec.agent)
            if tool is None:
                raise ToolNotFoundError(exec.name)
            object.__setattr__(exec, "body_invoked", True)
            object.__setattr__(exec, "stage", Stage.BODY)
            try:
                value = await self._run_body(tool, exec, body_signal)
            finally:
                object.__setattr__(exec, "stage", Stage.DISPATCH)
            result: ToolExecutionResult = canonical_success(tool, exec, value)
            if body_signal.aborted:
                result = aborted_result()
        except _BodyInterrupted as interrupted:
            object.__setattr__(exec, "outcome", interrupted.outcome)
            raise asyncio.CancelledError from None
        except asyncio.CancelledError as exc:
            if _being_cancelled(exec):
                raise
            result = failure_from(exc)
        except Exception as exc:
            result = aborted_result() if _is_own_abort(exc, body_signal) else failure_from(exc)
        finally:
            remove_wrapper()
            if remove_caller is not None:
                remove_caller()
            object.__setattr__(exec, "_signal", wrapper_signal)
        object.__setattr__(exec, "outcome", result)
        return result

    async def _run_body(
        self, tool: ToolDefinition, exec: Execution, body_signal: AbortSignal
    ) -> object:
        """Run the body in its own task and await it to quiescence, whatever happens to us."""

        def forwarded() -> None:
            object.__setattr__(exec, "interrupted", True)
            body_signal._abort(AbortError())

        task = _BodyTask(_call_body(tool, exec), forwarded)
        try:
            return await task
        except asyncio.CancelledError:
            if not exec.interrupted:
                raise  # the body raised CancelledError on its own: a tool error upstream
        try:
            outcome: ToolExecutionResult = canonical_success(tool, exec, task.result())
            if body_signal.aborted:
                outcome = aborted_result()
        except BaseException as exc:  # the body's own failure, kept over cancellation
            outcome = aborted_result() if _is_own_abort(exc, body_signal) else failure_from(exc)
        raise _BodyInterrupted(outcome)

    # -- finalize and finish -------------------------------------------------------------------

    async def finalize(self, exec: Execution, result: ToolExecutionResult) -> ToolExecutionResult:
        """Spec §1.12–§1.13: post-execute and its decision, then `finish`."""
        object.__setattr__(exec, "stage", Stage.FINALIZE)
        object.__setattr__(exec, "outcome", result)
        try:
            decision = await self._bus.waterfall("tools/post-execute", exec, result, base=_accept)
            if decision is not _ACCEPT:  # the base's plain Accept() leaves the outcome as it is
                result = apply_post_decision(exec, result, decision, self._resolve)
        except asyncio.CancelledError as exc:
            if _being_cancelled(exec):
                raise
            return self.finish(exec, failure_from(exc))
        except Exception as exc:
            return self.finish(exec, failure_from(exc))
        if _caller_aborted(exec):
            result = supersede(exec, result)
        return self.finish(exec, result)

    def finish(self, exec: Execution, result: ToolExecutionResult) -> ToolExecutionResult:
        """Spec §1.14, synchronous and exactly once: freeze, finalize content, publish."""
        if exec.stage is Stage.PUBLISHED:
            raise RuntimeError(f'tool "{exec.name}" ({exec.call_id}): result already published')
        try:
            final = materialize(result)
        except Exception as exc:
            final = materialize(failure_from(exc))
        finalizer = exec.finalizer
        if finalizer is not None:
            try:
                content = finalizer(exec, final)
                if content is not None:
                    final = with_content(final, content)
            except Exception as exc:
                final = materialize(failure_from(exc))
        object.__setattr__(exec, "stage", Stage.PUBLISHED)
        object.__setattr__(exec, "outcome", final)
        for observer in self._bus.listeners("tools/result"):
            try:
                returned = observer(exec, final)
                if inspect.isawaitable(returned):
                    if inspect.iscoroutine(returned):
                        returned.close()
                    raise TypeError("observers are synchronous; it returned an awaitable")
            except Exception as exc:
                _log.warning(
                    'tool "%s" (%s): tools/result observer failed: %s',
                    exec.name,
                    exec.call_id,
                    error_message(exc),
                )
        return final


def _is_own_abort(exc: BaseException, body_signal: AbortSignal) -> bool:
    """Whether the body just propagated its own signal's abort (`signal.cancels()`,
    `throw_if_aborted()`): that is the call's cancellation, not a tool-owned failure."""
    if not body_signal.aborted:
        return False
    reason = body_signal.reason
    return exc is reason or (isinstance(exc, AbortError) and exc.reason is reason)


class _BodyTask(asyncio.Task[object]):
    """The body's own task. It refuses the cancellation asyncio forwards to it from the task
    awaiting it: that becomes an abort of the per-call signal instead (`on_forwarded`), and the
    awaiting task receives its `CancelledError` only once the body has settled. A cancellation
    the body asks for itself (its own `asyncio.timeout`, `signal.cancels()`) goes through."""

    def __init__(
        self, coro: Coroutine[object, object, object], on_forwarded: Callable[[], None]
    ) -> None:
        super().__init__(coro)
        awaiter = asyncio.current_task()
        self._awaiter = awaiter
        self._seen = 0 if awaiter is None else awaiter.cancelling()
        self._on_forwarded = on_forwarded

    def cancel(self, msg: object = None) -> bool:
        awaiter = self._awaiter
        if awaiter is not None and not self.done() and awaiter.cancelling() > self._seen:
            self._seen = awaiter.cancelling()
            self._on_forwarded()
            return False
        return super().cancel(msg)


def _interrupted_outcome(exec: Execution) -> ToolExecutionResult:
    """The result of a call whose awaiting task was cancelled: what it had reached, superseded."""
    outcome = exec.outcome
    if outcome is None:
        return aborted_result() if exec.body_invoked else aborted_before_dispatch_result()
    return supersede(exec, outcome)


class _BodyInterrupted(Exception):
    """Internal: the awaiting task was cancelled while the body ran; carries the body's outcome."""

    def __init__(self, outcome: ToolExecutionResult) -> None:
        super().__init__("tool body interrupted")
        self.outcome = outcome


async def _call_body(tool: ToolDefinition, exec: Execution) -> object:
    args = exec.arguments
    if tool.is_async:
        return await tool.execute(args, exec)  # type: ignore[misc]
    returned = await asyncio.to_thread(tool.execute, args, exec)
    if inspect.isawaitable(returned):
        return await returned
    return returned
