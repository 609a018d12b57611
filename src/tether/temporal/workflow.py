"""`SessionWorkflow`: one durable tether session on Temporal.

Owns the turn algorithm as a deterministic workflow — a turn is the `run_turn` Update, an abort
the `abort_turn` Signal, `close` ends the session — and the step scheduler's ordering rules,
applied to activities instead of tasks: an `exclusive` call is a barrier; a run of `parallel`
calls is a rolling pool of at most `max_parallel_tool_calls` activities; a call's `tool/call`
entry is written when it is scheduled and `tool/result` entries are committed strictly in model
order. Each call's `execution_mode` comes from the `llm_step` activity with the tool calls.

Cancellation: `abort_turn` stops new calls from being scheduled and cancels the in-flight
activities with `WAIT_CANCELLATION_COMPLETED`, so a started call's own published result
(`ABORTED` after its body quiesced) is what gets recorded; calls never scheduled, and activities
cancelled before they started, get synthesized `ABORTED_BEFORE_DISPATCH` results; a worker that
died mid-call is `TOOL_OUTCOME_UNKNOWN` (see `tether.temporal.outcomes`). Tool activities run
with `maximum_attempts=1`: a side effect is never retried.

Approval: a call whose policy asks (on a `--approvals` worker) ends its `tool_call` activity
before dispatch with the question; the workflow records `approval/asked` and holds the call — it
keeps its pool slot, so an exclusive call still is a barrier — until the `approve` Update answers
(`approval/decided`) and `tool_dispatch` runs it with the answer, or until an abort ends it
`ABORTED_BEFORE_DISPATCH` (`approval/decided` `cancelled`). No worker is occupied while it waits.

No plugin code runs here: the model and the tools run in activities on workers that mount a full
tether `Context`. Not here: the `agent/*` extension events of the local loop (session-start,
prompt screening, turn-stopping), which need an in-process `AgentLoop`.

Log entries: a turn's entries are the `run_turn` Update's result (`TurnResult.entries`), so the
history records them as they were produced; readers take them from there, never from this code
running again over an old history (the `log_page` query serves the turn that is still running,
and runs recorded before turns carried their entries). A field that would make an entry big (a
tool result, the request header) is already a `BlobRef` when an activity returns it.

Payloads stay small: a model step gets the conversation by reference (`Conversation`: sealed
segments in the payload store plus an inline tail; the step seals a tail that grew and returns
the smaller equivalent), and the header's digest instead of the header.

Between turns, after `turns_per_run` turns, when Temporal suggests it, or once the run's history
holds `history_bytes_per_run` bytes or `history_events_per_run` events, the workflow continues
as new (same workflow id) with a `SessionState`: the turn count, the conversation, the header's
digest and the log index the next run starts at, so one tether session spans the runs.

Versioning: the run decides its patches once, first (`tether.temporal.versions`); every
behaviour change takes its new path only where its patch is active.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from enum import StrEnum
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, CancelledError, TimeoutError, TimeoutType

with workflow.unsafe.imports_passed_through():
    from .options import start_model_step, start_tool
    from .outcomes import FailureKind, outcome_for, synthesized_record
    from .payloads import (
        SESSION_WORKFLOW,
        TOOL_CALL,
        TOOL_DISPATCH,
        ApprovalAsk,
        ApprovalDecision,
        BlobRef,
        LlmStepInput,
        LlmStepOutput,
        LogPage,
        PlannedCall,
        SessionSpec,
        SessionState,
        ToolCallInput,
        ToolCallOutput,
        ToolDispatchInput,
        TurnResult,
    )
    from .runlog import RunLog
    from .versions import HISTORY_SIZE_CONTINUE, PAYLOADS_BY_REFERENCE, Behaviour

__all__ = ["SessionWorkflow", "TurnState"]

_ABORTED_REASON: dict[str, Any] = {"kind": "aborted", "reason": {"kind": "user"}}


class TurnState(StrEnum):
    """What a session is doing, as the `status` query reports it."""

    IDLE = "idle"
    MODEL = "model"
    TOOLS = "tools"
    APPROVAL = "approval"
    ABORTING = "aborting"


class _Aborted(Exception):
    pass


class _Failed(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(str(error.get("message")))
        self.error = error


def failure_kind(error: ActivityError) -> FailureKind:
    """How an activity ended without a value (see `tether.temporal.outcomes`)."""
    cause = error.cause
    if isinstance(cause, CancelledError):
        return "cancelled"
    if isinstance(cause, TimeoutError):
        if cause.type == TimeoutType.HEARTBEAT:
            return "heartbeat-timeout"
        if cause.type == TimeoutType.START_TO_CLOSE:
            return "backstop-timeout"
        if cause.type == TimeoutType.SCHEDULE_TO_START:
            return "not-started"
        return "timeout"
    return "failed"


@workflow.defn(name=SESSION_WORKFLOW)
class SessionWorkflow:
    @workflow.init
    def __init__(self, spec: SessionSpec) -> None:
        state = spec.carried
        self._behaviour = Behaviour.of_this_run()
        self._spec = replace(spec, carried=None)
        self._log = RunLog(state)
        self._turn = 0 if state is None else state.turn
        self._first_turn = self._turn  # the turns run before this run
        self._busy = False
        self._state = TurnState.IDLE
        self._abort: str | None = None
        self._closing = False
        self._asks: dict[str, ApprovalAsk] = {}
        self._answers: dict[str, ApprovalDecision] = {}
        self._update_id: str | None = None
        self._prompt = ""

    @workflow.run
    async def run(self, spec: SessionSpec) -> int:
        """Lives until `close` and returns the number of turns run; between turns, continues as
        new when `_continue_due` says so."""
        await workflow.wait_condition(
            lambda: (
                not self._busy
                and workflow.all_handlers_finished()
                and (self._closing or self._continue_due())
            )
        )
        if not self._closing:
            workflow.continue_as_new(replace(self._spec, carried=self._carried()))
        return self._turn

    def _continue_due(self) -> bool:
        ran = self._turn - self._first_turn
        if ran >= self._spec.turns_per_run:
            return True
        if ran == 0:
            return False
        info = workflow.info()
        if info.is_continue_as_new_suggested():
            return True
        return HISTORY_SIZE_CONTINUE in self._behaviour and (
            info.get_current_history_size() >= self._spec.history_bytes_per_run
            or info.get_current_history_length() >= self._spec.history_events_per_run
        )

    def _carried(self) -> SessionState:
        by_reference = PAYLOADS_BY_REFERENCE in self._behaviour
        return self._log.carried(self._turn, by_reference=by_reference)

    # -- messages from clients -----------------------------------------------------------------

    @workflow.signal(name="abort_turn")
    def abort_turn(self, reason: str) -> None:
        """Abort the running turn (ignored when none runs)."""
        if self._busy and self._abort is None:
            self._abort = reason or "user"
            self._state = TurnState.ABORTING

    @workflow.signal(name="close")
    def close(self) -> None:
        """End the session once the running turn (if any) has ended."""
        self._closing = True

    @workflow.query(name="log_page")
    def log_page(self, start: int) -> LogPage:
        """This run's entries from session-log index `start` on, at most `LOG_PAGE_ENTRIES`
        (see `LogPage`)."""
        return self._log.page(start, workflow.info().continued_run_id)

    @workflow.query(name="status")
    def status(self) -> dict[str, Any]:
        """What the session is doing: `turn` (the running or last turn), `busy`, `state` (a
        `TurnState`), `last_activity` (ISO time of the last entry), `approvals` (calls waiting
        for a human), `update_id` (the running turn's `run_turn` Update, to wait for its
        result), `prompt` (its first 200 characters), `model` (the workers' model, once a step
        ran), the log's size, this run's base and where the running (or last) turn starts."""
        return {
            "turn": self._turn,
            "busy": self._busy,
            "state": str(self._state),
            "last_activity": self._log.last_activity.isoformat(),
            "approvals": len(self._asks),
            "update_id": self._update_id if self._busy else None,
            "prompt": self._prompt[:200],
            "model": None if self._log.context is None else self._log.context.get("model"),
            "log_size": self._log.size,
            "log_base": self._log.base,
            "turn_start": self._log.base + self._log.turn_start,
        }

    # -- approvals: a worker's `tool_call` defers an ask, any client answers --------------------

    @workflow.query(name="approvals")
    def approvals(self) -> list[ApprovalAsk]:
        """The calls waiting for an answer."""
        return list(self._asks.values())

    @workflow.update(name="approve")
    def approve(self, decision: ApprovalDecision) -> None:
        """Answer a waiting call (`allow-once` or `reject`, optionally with a reason), from any
        client; the call's `tool_dispatch` activity is scheduled with the answer."""
        ask = self._asks.pop(decision.call_id)
        self._answers[decision.call_id] = decision
        outcome = "allowed-once" if decision.answer == "allow-once" else "rejected"
        self._decided(ask, outcome, decision.reason if outcome == "rejected" else None)

    @approve.validator
    def _check_approval(self, decision: ApprovalDecision) -> None:
        if decision.call_id not in self._asks:
            raise ValueError(f'no tool call "{decision.call_id}" is waiting for approval')
        if decision.answer not in ("allow-once", "reject"):
            raise ValueError(
                f"answer {decision.answer!r} is not allow-once or reject (session rules would "
                "apply to every session on the worker, so Temporal sessions allow once)"
            )

    def _asked(self, ask: ApprovalAsk) -> None:
        self._asks[ask.call_id] = ask
        data: dict[str, Any] = {"turn": self._turn, "call_id": ask.call_id}
        data["tool_name"] = ask.tool_name
        if ask.reason is not None:
            data["reason"] = ask.reason
        data["fingerprint"] = ask.fingerprint
        self._emit("approval/asked", data)

    def _decided(self, ask: ApprovalAsk, outcome: str, reason: str | None = None) -> None:
        data: dict[str, Any] = {
            "turn": self._turn,
            "call_id": ask.call_id,
            "tool_name": ask.tool_name,
            "outcome": outcome,
            "answered_by": "user" if outcome != "cancelled" else "signal",
            "fingerprint": ask.fingerprint,
        }
        if reason is not None and reason.strip():
            data["reason"] = " ".join(reason.split())
        self._emit("approval/decided", data)

    @workflow.update(name="run_turn")
    async def run_turn(self, prompt: str) -> TurnResult:
        """Run one turn for `prompt`; it always ends with a `turn/end` entry, and its result
        carries the turn's entries."""
        await workflow.wait_condition(lambda: not self._busy)
        self._busy, self._abort = True, None
        info = workflow.current_update_info()
        self._update_id = None if info is None else info.id
        self._prompt = prompt
        try:
            return await self._run_turn(prompt)
        finally:
            self._busy, self._abort = False, None
            self._state = TurnState.IDLE
            self._asks.clear()
            self._answers.clear()

    @run_turn.validator
    def _check_turn(self, prompt: str) -> None:
        if self._closing:
            raise ValueError("the session is closed; start a new one")
        if self._busy:
            raise ValueError(
                f"turn {self._turn} is still running in this session: follow it with `tether "
                f"temporal attach {self._spec.session_id}`, stop it with `tether temporal abort "
                f"{self._spec.session_id}`"
            )
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError("run_turn needs a non-empty prompt")

    # -- the turn ------------------------------------------------------------------------------

    def _emit(
        self, type: str, data: dict[str, Any], refs: dict[str, BlobRef] | None = None
    ) -> None:
        self._log.emit(type, data, refs)

    async def _run_turn(self, prompt: str) -> TurnResult:
        spec = self._spec
        self._turn += 1
        turn = self._turn
        self._log.start_turn()
        self._emit("turn/start", {"turn": turn})
        reason: dict[str, Any] = {"kind": "completed"}
        text = ""
        entering: list[dict[str, Any]] = [
            {
                "id": f"msg_{workflow.uuid4().hex}",
                "role": "user",
                "content": [{"type": "text", "text": prompt}],
                "source": {"kind": "user"},
            }
        ]
        try:
            for step in range(1, spec.max_steps + 1):
                entering += self._log.parked
                self._log.parked = []
                self._emit("step/start", {"turn": turn, "step": step})
                for message in entering:
                    self._emit("user/message", message)
                entering = []
                try:
                    ending, answer = await self._step(turn, step)
                finally:
                    self._emit("step/end", {"turn": turn, "step": step})
                text = answer or text
                if ending == "max-tokens":
                    reason = {"kind": "max-tokens"}
                    break
                if ending == "completed" and not self._log.parked:
                    break
            else:
                reason = {"kind": "max-steps", "steps": spec.max_steps}
        except _Aborted:
            reason = dict(_ABORTED_REASON)
        except _Failed as failed:
            reason = (
                dict(_ABORTED_REASON)
                if self._abort is not None
                else {"kind": "error", "error": failed.error}
            )
        self._emit("turn/end", {"turn": turn, "reason": reason})
        return TurnResult(turn, reason, text, self._log.size, self._log.turn_entries())

    async def _step(self, turn: int, step: int) -> tuple[str, str]:
        if self._abort is not None:
            raise _Aborted
        out = await self._model(turn, step)
        self._log.record_request(out)
        for retry in out.retries:
            self._emit("llm/retry", {"turn": turn, "step": step, **retry})
        if out.error is not None:
            if out.message is not None and out.interrupted:
                data: dict[str, Any] = {"turn": turn, "step": step, "message": out.message}
                data["interrupted"] = True
                self._emit("assistant/message", data)
            if out.aborted or self._abort is not None:
                raise _Aborted
            raise _Failed(out.error)
        message = out.message or {}
        data = {"turn": turn, "step": step, "message": message}
        if out.usage is not None:
            data["usage"] = out.usage
        self._emit("assistant/message", data)
        answer = "".join(
            str(b.get("text", "")) for b in message.get("content", ()) if b.get("type") == "text"
        )
        if out.finish == "max-tokens":
            return "max-tokens", answer
        if not out.calls:
            return "completed", answer
        concluded = await self._calls(turn, step, out.calls)
        if self._abort is not None:
            raise _Aborted
        return ("completed" if concluded else "continue"), answer

    async def _model(self, turn: int, step: int) -> LlmStepOutput:
        spec = self._spec
        if PAYLOADS_BY_REFERENCE in self._behaviour:
            input = LlmStepInput(
                spec.session_id,
                turn,
                step,
                system_prompt=spec.system_prompt,
                max_tokens=spec.max_tokens,
                conversation=self._log.conversation(),
                header_sha256=self._log.header_sha,
            )
        else:  # a run that has not taken the patch: every entry inline
            history = self._log.history()
            input = LlmStepInput(
                spec.session_id, turn, step, history, spec.system_prompt, spec.max_tokens
            )
        self._state = TurnState.MODEL
        handle = start_model_step(spec, self._behaviour, input)
        await workflow.wait_condition(lambda: handle.done() or self._abort is not None)
        if not handle.done():
            handle.cancel()
        try:
            output: LlmStepOutput = await handle
            return output
        except (ActivityError, asyncio.CancelledError) as exc:
            if self._abort is not None:
                raise _Aborted from None
            if isinstance(exc, ActivityError) and failure_kind(exc) == "not-started":
                queue = spec.llm_task_queue or workflow.info().task_queue
                message = (
                    f"no worker of task queue {queue!r} took the model step within "
                    f"{spec.llm_schedule_to_start_s:g} s; start one: tether worker "
                    f"--task-queue {queue}"
                )
                raise _Failed({"message": message, "code": "LLM_STEP_NOT_STARTED"}) from None
            detail = str(exc.cause) if isinstance(exc, ActivityError) else "cancelled"
            failure = {"message": f"model step failed: {detail}", "code": "LLM_STEP_FAILED"}
            raise _Failed(failure) from None

    # -- the step scheduler --------------------------------------------------------------------

    async def _calls(self, turn: int, step: int, calls: list[PlannedCall]) -> bool:
        """Run one message's calls (module note); True when a result concluded the turn."""
        spec = self._spec
        n = len(calls)
        results: dict[int, ToolCallOutput | dict[str, Any]] = {}
        in_flight: dict[int, workflow.ActivityHandle[ToolCallOutput]] = {}
        waiting: dict[int, ApprovalAsk] = {}  # asked, not dispatched: they hold their pool slot
        cancelling: set[int] = set()
        cursor = 0  # the next result to commit, in model order
        next_start = 0
        concluded = False

        def commit() -> None:
            nonlocal cursor, concluded
            while cursor in results:
                outcome = results.pop(cursor)
                if isinstance(outcome, ToolCallOutput):
                    self._emit("tool/result", outcome.record, outcome.refs)
                    self._log.parked.extend(outcome.contexts)
                    concluded = concluded or outcome.concludes_turn
                else:
                    self._emit("tool/result", outcome)
                cursor += 1

        def record_call(call: PlannedCall) -> None:
            data = {"turn": turn, "step": step, "call_id": call.id, "name": call.name}
            data["arguments"] = call.arguments
            self._emit("tool/call", data)

        def start(index: int) -> None:
            call = calls[index]
            record_call(call)
            in_flight[index] = start_tool(
                spec, self._behaviour, TOOL_CALL, self._call_input(turn, step, call), call
            )

        def never_dispatched(index: int, detail: str) -> None:
            """A waiting call the turn's abort ends: answered or not, it is not dispatched."""
            ask = waiting.pop(index)
            if self._answers.pop(ask.call_id, None) is None:
                self._asks.pop(ask.call_id, None)
                self._decided(ask, "cancelled")
            results[index] = self._synthesized(
                "ABORTED_BEFORE_DISPATCH", turn, step, calls[index], detail
            )

        def answered() -> bool:
            return any(ask.call_id in self._answers for ask in waiting.values())

        while next_start < n and self._abort is None:
            first = next_start
            parallel = calls[first].mode == "parallel"
            group_open = True
            while True:
                while (
                    group_open
                    and self._abort is None
                    and next_start < n
                    and len(in_flight) + len(waiting) < spec.max_parallel_tool_calls
                ):
                    if next_start > first and (
                        not parallel or calls[next_start].mode != "parallel"
                    ):
                        group_open = False  # an exclusive call is a barrier
                        break
                    start(next_start)
                    next_start += 1
                if not in_flight and not waiting:
                    break
                if self._abort is None:
                    self._state = TurnState.TOOLS if in_flight else TurnState.APPROVAL
                await workflow.wait_condition(
                    lambda: (
                        any(h.done() for h in in_flight.values())
                        or answered()
                        or (
                            self._abort is not None
                            and (len(cancelling) < len(in_flight) or bool(waiting))
                        )
                    )
                )
                if self._abort is not None:
                    for index, handle in in_flight.items():
                        if index not in cancelling and not handle.done():
                            cancelling.add(index)
                            handle.cancel()
                    for index in list(waiting):
                        never_dispatched(index, "aborted while waiting for approval")
                for index, ask in list(waiting.items()):
                    decision = self._answers.pop(ask.call_id, None)
                    if decision is not None:
                        del waiting[index]
                        in_flight[index] = self._dispatch(turn, step, calls[index], decision, ask)
                for index in [i for i, h in in_flight.items() if h.done()]:
                    handle = in_flight.pop(index)
                    cancelling.discard(index)
                    outcome = await self._settled(turn, step, calls[index], handle)
                    if isinstance(outcome, ToolCallOutput) and outcome.ask is not None:
                        waiting[index] = outcome.ask
                        self._asked(outcome.ask)
                        if self._abort is not None:
                            never_dispatched(index, "aborted while approval was asked")
                        continue
                    results[index] = outcome
                commit()
        for index in range(next_start, n):
            record_call(calls[index])
            results[index] = self._synthesized(
                "ABORTED_BEFORE_DISPATCH", turn, step, calls[index], None
            )
        commit()
        return concluded

    def _dispatch(
        self, turn: int, step: int, call: PlannedCall, decision: ApprovalDecision, ask: ApprovalAsk
    ) -> workflow.ActivityHandle[ToolCallOutput]:
        dispatch = ToolDispatchInput(self._call_input(turn, step, call), decision, ask.fingerprint)
        return start_tool(self._spec, self._behaviour, TOOL_DISPATCH, dispatch, call)

    def _call_input(self, turn: int, step: int, call: PlannedCall) -> ToolCallInput:
        by_reference = PAYLOADS_BY_REFERENCE in self._behaviour
        session = self._spec.session_id
        return ToolCallInput(
            session, turn, step, call.id, call.name, call.arguments, by_reference=by_reference
        )

    def _synthesized(
        self, code: str, turn: int, step: int, call: PlannedCall, detail: str | None
    ) -> dict[str, Any]:
        message_id = f"msg_{workflow.uuid4().hex}"
        return synthesized_record(
            code, turn=turn, step=step, call_id=call.id, message_id=message_id, detail=detail
        )

    async def _settled(
        self,
        turn: int,
        step: int,
        call: PlannedCall,
        handle: workflow.ActivityHandle[ToolCallOutput],
    ) -> ToolCallOutput | dict[str, Any]:
        try:
            return await handle
        except asyncio.CancelledError:  # cancelled before the schedule command was even sent
            return self._synthesized("ABORTED_BEFORE_DISPATCH", turn, step, call, "not scheduled")
        except ActivityError as error:
            kind = failure_kind(error)
            code = outcome_for(kind, started=error.started_event_id != 0)
            detail = f"{kind}: {error.cause}"
            if kind == "not-started":
                queue = self._spec.tool_task_queue or workflow.info().task_queue
                detail = (
                    f"{kind}: no worker of task queue {queue!r} took the call within "
                    f"{self._spec.tool_schedule_to_start_s:g} s"
                )
            return self._synthesized(code, turn, step, call, detail)
