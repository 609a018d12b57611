"""The step scheduler: runs one assistant message's tool calls (tool-runtime spec §5.2–§5.4).

Owns: grouping (an exclusive call is a barrier; a parallel group is a rolling pool of at most
`max_parallel` dispatches, re-classifying each later call just before it starts), the one ordered
lane (`tool/call`, `prepare`, and commits — `finalize`/`finish`, `tool/result`, contexts —
strictly in model order; only `dispatch` overlaps), the durability point before a body starts
(each dispatch task first awaits `recorder.durable()`: the `tool/call`s recorded so far are
fsynced together), turn cancellation and scheduler failure. Does not own the durable log's
format (the `StepRecorder` writes it) or the pipeline. A recorder that is also
`ChangedArguments` is told, in the lane after a call's policy stage, the arguments the call goes
on with when they differ from the model's (an approver or a hook changed them).

A call whose arguments are not JSON is created in the registry and answered at once with
`INVALID_ARGS` (`tether.agent.arguments`): no policy, approval or dispatch runs for it, and it is
committed in model order like any other result.

Turn cancellation (the turn signal aborts): no new call starts; started calls run to quiescence
and are committed normally (the registry classifies them); every call that never started gets a
synthetic durable pair — `tool/call` then a `tool/result` of `ABORTED_BEFORE_DISPATCH` — that
bypasses the registry. Every model tool call therefore ends with exactly one durable result.

Scheduler failure (a stage or the recorder raises, or a dispatch task fails): it is recorded the
moment it happens — a `prepare` that completes afterwards is not dispatched — then no new call
starts, every in-flight dispatch is awaited, and the first failure is raised; no results are
fabricated.

Lost recording (the recorder raises `SessionWriteFailed`: the log cannot be written — a full
disk, an I/O error): unlike other scheduler failures, the step's calls are *aborted* — started
bodies get it through `exec.signal` — no new call starts, every started call is awaited and
committed through the recorder as usual (a log that cannot write holds each result in memory
and refuses it again, which is not a new failure), nothing is synthesized for calls that never
started (no `tool/call` of theirs reached the log: repair reports them `TOOL_NOT_STARTED`), and
the write failure is raised.

Cancelling the task that runs the scheduler is a turn abort for this step: the calls' signal is
the turn signal fused with a step-owned controller, which the cancellation aborts, so started
bodies get their abort through `exec.signal` (as `ToolRuntime.execute` does for a cancelled
caller); they are awaited and committed, unstarted calls get synthetic pairs, and then the
`CancelledError` propagates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..core.json import JsonValue
from ..core.signals import AbortController, AbortError, AbortSignal
from ..tools.execution import Call, ToolExecutionInput
from ..tools.outcomes import supersede
from ..tools.pipeline import Dispatched, Prepared
from ..tools.registry import ToolRuntime
from ..tools.results import ToolExecutionResult, UserMessage, aborted_before_dispatch_result
from .arguments import malformed_arguments_result, read_arguments
from .session import SessionWriteFailed

__all__ = [
    "ChangedArguments",
    "DispatchMarks",
    "StepOutcome",
    "StepRecorder",
    "ToolCallRequest",
    "execute_tool_calls",
    "parse_arguments",
]


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """One tool call as the model asked for it; `arguments` is the raw JSON text."""

    id: str
    name: str
    arguments: str


class StepRecorder(Protocol):
    """Writes the durable pair of each call. `tool_call` returns the event's seq; `durable`
    makes every `tool/call` recorded so far durable, and is awaited in a call's dispatch task
    before its body may start (so the calls that start together share one fsync). Each raises
    `SessionWriteFailed` when the log cannot be written (see the module note)."""

    async def tool_call(self, call: ToolCallRequest) -> int: ...

    async def durable(self) -> None: ...

    async def tool_result(
        self, call: ToolCallRequest, call_seq: int, result: ToolExecutionResult
    ) -> None: ...


@runtime_checkable
class DispatchMarks(Protocol):
    """A recorder that also wants to know when each call's body is dispatched and when that
    dispatch returned (the agent loop's, for `queued_ms` and `ran_ms`); optional."""

    def dispatched(self, call: ToolCallRequest) -> None: ...

    def settled(self, call: ToolCallRequest) -> None: ...


@runtime_checkable
class ChangedArguments(Protocol):
    """A recorder that also wants the arguments a call goes on with when the policy changed
    the model's (an approver's or a hook's changed input), told once its policy stage ended
    and before its body may start (the agent loop's: `tool/result`'s `changed_arguments`);
    optional."""

    def arguments_changed(self, call: ToolCallRequest, arguments: JsonValue) -> None: ...


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """What a step's tool calls came to, in model order."""

    results: tuple[ToolExecutionResult, ...]
    concluded: bool
    aborted: bool
    started: int


def parse_arguments(raw: str) -> object:
    """`{}` for an empty string, the parsed JSON when it parses, else the raw string itself."""
    return read_arguments(raw).value


@dataclass(slots=True)
class _Slot:
    call: Call
    call_seq: int
    result: ToolExecutionResult | None = None
    needs_post: bool = False


class _Step:
    def __init__(
        self,
        runtime: ToolRuntime,
        calls: Sequence[ToolCallRequest],
        signal: AbortSignal,
        agent: object | None,
        recorder: StepRecorder,
        accept_context: Callable[[UserMessage], None],
        max_parallel: int,
    ) -> None:
        self.runtime = runtime
        self.calls = calls
        self.signal = signal
        self.recorder = recorder
        self.marks = recorder if isinstance(recorder, DispatchMarks) else None
        self.changes = recorder if isinstance(recorder, ChangedArguments) else None
        self.accept_context = accept_context
        self.max_parallel = max_parallel
        self.cancellation = AbortController()  # aborted when our task is cancelled
        self.call_signal = AbortSignal.any(signal, self.cancellation.signal)
        arguments = [read_arguments(c.arguments) for c in calls]
        self.malformed = [a.problem for a in arguments]
        self.inputs = [
            ToolExecutionInput(
                call_id=c.id,
                name=c.name,
                arguments=a.value,
                agent=agent,
                signal=self.call_signal,
            )
            for c, a in zip(calls, arguments, strict=True)
        ]
        self.slots: dict[int, _Slot] = {}
        self.results: list[ToolExecutionResult | None] = [None] * len(calls)
        self.in_flight: dict[asyncio.Task[Dispatched], int] = {}
        self.next_start = 0
        self.commit_cursor = 0
        self.stopped = False  # aborted, failed or cancelled: start nothing more
        self.cancelled = False
        self.failure: BaseException | None = None
        self.lost: SessionWriteFailed | None = None  # the log cannot record: abort and drain
        self.concluded = False

    def _halted(self) -> bool:
        if self.signal.aborted:
            self.stopped = True
        return self.stopped

    def _cancelled(self) -> None:
        """Our task is being cancelled: start nothing more; started bodies see an abort."""
        self.cancelled = self.stopped = True
        self.cancellation.abort(AbortError())

    def _fail(self, exc: BaseException) -> None:
        if isinstance(exc, SessionWriteFailed):
            self._lose(exc)
            return
        if self.failure is None:
            self.failure = exc
        self.stopped = True

    def _lose(self, exc: SessionWriteFailed) -> None:
        """The log cannot record: abort the started calls; they are still awaited and offered
        to the recorder (see the module note)."""
        if self.lost is None:
            self.lost = exc
        if self.failure is None:
            self.failure = exc
        self.stopped = True
        self.cancellation.abort(exc)

    def _settled(self, task: asyncio.Task[Dispatched]) -> None:
        # A done callback, so a failure is known before the lane resumes (e.g. from a prepare).
        if not task.cancelled():
            exc = task.exception()
            if exc is not None:
                self._fail(exc)

    async def run(self) -> StepOutcome:
        try:
            return await self._run()
        finally:
            self.call_signal.dispose()

    async def _run(self) -> StepOutcome:
        n = len(self.calls)
        while self.next_start < n and not self._halted():
            parallel = self.runtime.execution_mode(self.inputs[self.next_start]) == "parallel"
            await self._group(parallel)
        if self.failure is not None:
            raise self.failure
        started = self.next_start
        for index in range(started, n):
            await self._synthesize(index)
        if self.cancelled:
            raise asyncio.CancelledError
        results = tuple(r for r in self.results if r is not None)
        return StepOutcome(results, self.concluded, self.signal.aborted, started)

    async def _group(self, parallel: bool) -> None:
        first = self.next_start
        group_open = True
        while True:
            while (
                group_open
                and not self._halted()
                and self.next_start < len(self.calls)
                and len(self.in_flight) < self.max_parallel
            ):
                if self.next_start > first and (
                    not parallel
                    or self.runtime.execution_mode(self.inputs[self.next_start]) != "parallel"
                ):
                    group_open = False
                    break
                await self._guarded(self._start(self.next_start))
                await self._guarded(self._commit_ready())
            if not self.in_flight:
                return
            await self._wait_any()
            await self._guarded(self._commit_ready())

    async def _guarded(self, step: Awaitable[None]) -> None:
        try:
            await step
        except asyncio.CancelledError:
            self._cancelled()
        except Exception as exc:
            self._fail(exc)

    async def _start(self, index: int) -> None:
        self.next_start = index + 1
        call_seq = await self.recorder.tool_call(self.calls[index])
        prepared: Prepared = self.runtime.create(self.inputs[index])
        slot = self.slots[index] = _Slot(call=prepared.call, call_seq=call_seq)
        malformed = self.malformed[index]
        if prepared.kind == "dispatch" and malformed is not None:  # answered here, unpoliced
            result = malformed_arguments_result(self.calls[index].name, malformed)
            prepared = Prepared("final-result", prepared.call, result)
        if prepared.kind == "dispatch":
            try:
                prepared = await self.runtime.policy(prepared.call)
            except asyncio.CancelledError:
                prepared.call.interrupted = True
                slot.result = aborted_before_dispatch_result()
                raise
            changed = prepared.call.arguments
            if self.changes is not None and changed != self.inputs[index].arguments:
                self.changes.arguments_changed(self.calls[index], changed)
        if prepared.kind == "dispatch":
            if self.stopped:  # a failure elsewhere: prepared, but never dispatched
                return
            task = asyncio.get_running_loop().create_task(
                self._dispatch(prepared.call, self.calls[index])
            )
            task.add_done_callback(self._settled)
            self.in_flight[task] = index
        else:
            slot.result = prepared.result
            slot.needs_post = prepared.kind == "post-result"

    async def _dispatch(self, call: Call, request: ToolCallRequest) -> Dispatched:
        """The dispatch task: the call's `tool/call` durable first (one fsync covers every call
        recorded since the last; the lane has usually started the rest of the group by the time
        this runs), then the pipeline's dispatch. A log that cannot sync is lost recording: the
        step's calls abort, so this dispatch sees the abort and never runs the body (ABD)."""
        try:
            await self.recorder.durable()
        except SessionWriteFailed as exc:
            self._lose(exc)
        marks = self.marks
        if marks is not None:
            marks.dispatched(request)
        try:
            return await self.runtime.dispatch(call)
        finally:
            if marks is not None:
                marks.settled(request)

    async def _wait_any(self) -> None:
        while True:
            try:
                done, _ = await asyncio.wait(
                    set(self.in_flight), return_when=asyncio.FIRST_COMPLETED
                )
                break
            except asyncio.CancelledError:
                # Our task is being cancelled: start nothing more, but never abandon a dispatch.
                self._cancelled()
        for task in done:
            index = self.in_flight.pop(task)
            try:
                dispatched = task.result()
            except BaseException as exc:  # only an invariant violation reaches here
                self._fail(exc)
                continue
            slot = self.slots[index]
            slot.result = dispatched.result
            slot.needs_post = dispatched.kind == "post-result"

    async def _commit_ready(self) -> None:
        while self.failure is None or self.failure is self.lost:
            slot = self.slots.get(self.commit_cursor)
            if slot is None or slot.result is None:
                return
            index = self.commit_cursor
            if slot.needs_post:
                try:
                    final = await self.runtime.finalize(slot.call, slot.result)
                except asyncio.CancelledError:
                    self._cancelled()
                    slot.call.interrupted = True
                    reached = slot.call.outcome  # what post-execute reached, if it got that far
                    final = self.runtime.finish(
                        slot.call, supersede(slot.call, slot.result if reached is None else reached)
                    )
            else:
                final = self.runtime.finish(slot.call, slot.result)
            self.results[index] = final
            self.commit_cursor += 1
            del self.slots[index]
            try:
                await self.recorder.tool_result(self.calls[index], slot.call_seq, final)
            except SessionWriteFailed as exc:
                self._lose(exc)  # the log holds the result; the calls still running abort
                continue
            for context in final.additional_contexts:
                self.accept_context(context)
            if not final.is_error and final.concludes_turn:
                self.concluded = True

    async def _synthesize(self, index: int) -> None:
        call = self.calls[index]
        call_seq = await self.recorder.tool_call(call)
        result = aborted_before_dispatch_result()
        self.results[index] = result
        await self.recorder.tool_result(call, call_seq, result)


async def execute_tool_calls(
    runtime: ToolRuntime,
    calls: Sequence[ToolCallRequest],
    *,
    signal: AbortSignal,
    agent: object | None,
    recorder: StepRecorder,
    accept_context: Callable[[UserMessage], None],
    max_parallel: int = 10,
) -> StepOutcome:
    """Run `calls` in model order through the registry's staged API (see the module note)."""
    if isinstance(max_parallel, bool) or not isinstance(max_parallel, int) or max_parallel < 1:
        raise ValueError("max_parallel_tool_calls must be a positive integer")
    step = _Step(runtime, calls, signal, agent, recorder, accept_context, max_parallel)
    return await step.run()
