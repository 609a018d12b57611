"""How the session workflow starts its activities: every timeout, retry policy, cancellation
type, task queue and summary in one place, from the session's `SessionSpec` and the run's
`Behaviour`.

    model step    llm_task_queue; schedule-to-start `llm_schedule_to_start_s` (no worker took
                  it: the turn ends LLM_STEP_NOT_STARTED); start-to-close `llm_start_to_close_s`;
                  heartbeat `heartbeat_timeout_s`; retried `llm_attempts` times (a model call has
                  no side effects) except for errors a retry cannot fix: an over-limit payload
    tool call     tool_task_queue; schedule-to-start `tool_schedule_to_start_s` (no worker took
    and dispatch  it: TOOL_NOT_STARTED); start-to-close the tool's `timeout_ms` + `tool_grace_s`,
                  or `tool_backstop_s` without a budget (a backstop: TOOL_TIMEOUT is the timeout
                  policy's, inside the activity); heartbeat `heartbeat_timeout_s`; never retried
                  (a side effect is never repeated blindly)

All wait for a cancel to complete (`WAIT_CANCELLATION_COMPLETED`): an aborted call's own
`ABORTED` result, published after its body quiesced, is what the log records. A summary names
the step or the tool and its arguments, so Temporal's UI shows what runs. Schedule-to-start
timeouts and summaries are patches (`tether.temporal.versions`): a run recorded without them
keeps starting activities without them.

Workflow code: imported inside the workflow sandbox.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Final

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from .payloads import (
        LLM_STEP,
        TOOL_DISPATCH,
        LlmStepInput,
        LlmStepOutput,
        PlannedCall,
        SessionSpec,
        ToolCallInput,
        ToolCallOutput,
        ToolDispatchInput,
    )
    from .versions import START_TIMEOUTS, SUMMARIES, Behaviour

__all__ = ["PAYLOAD_TOO_LARGE", "start_model_step", "start_tool", "tool_summary"]

PAYLOAD_TOO_LARGE: Final = ("PayloadsTooLarge", "PayloadSizeError")
"""The failure types Temporal gives an activity whose payload is over the server's limit: the
same payload would be over it again, so these are never retried."""

_SUMMARY_CHARS: Final = 160


def _cancel_waits() -> workflow.ActivityCancellationType:
    return workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED


def start_model_step(
    spec: SessionSpec, behaviour: Behaviour, input: LlmStepInput
) -> workflow.ActivityHandle[LlmStepOutput]:
    to_start = timedelta(seconds=spec.llm_schedule_to_start_s)
    summary = f"model step {input.step} of turn {input.turn}"
    return workflow.start_activity(
        LLM_STEP,
        input,
        result_type=LlmStepOutput,
        task_queue=spec.llm_task_queue,
        schedule_to_start_timeout=to_start if START_TIMEOUTS in behaviour else None,
        start_to_close_timeout=timedelta(seconds=spec.llm_start_to_close_s),
        heartbeat_timeout=timedelta(seconds=spec.heartbeat_timeout_s),
        cancellation_type=_cancel_waits(),
        retry_policy=RetryPolicy(
            maximum_attempts=spec.llm_attempts,
            non_retryable_error_types=list(PAYLOAD_TOO_LARGE)
            if START_TIMEOUTS in behaviour
            else None,
        ),
        summary=summary if SUMMARIES in behaviour else None,
    )


def tool_summary(name: str, arguments: str, *, approved: bool = False) -> str:
    """`bash {"command": "ls"}`, cut to 160 characters; `(approved)` for a dispatch."""
    try:
        shown = json.dumps(json.loads(arguments), ensure_ascii=False, separators=(", ", ": "))
    except ValueError:
        shown = arguments
    text = f"{name}{' (approved)' if approved else ''} {shown}"
    return text if len(text) <= _SUMMARY_CHARS else text[: _SUMMARY_CHARS - 1] + "…"


def start_tool(
    spec: SessionSpec,
    behaviour: Behaviour,
    name: str,
    input: ToolCallInput | ToolDispatchInput,
    call: PlannedCall,
) -> workflow.ActivityHandle[ToolCallOutput]:
    """`tool_call` or `tool_dispatch` (`name`) of `call`."""
    budget = spec.tool_backstop_s
    if call.timeout_ms is not None:
        budget = call.timeout_ms / 1000 + spec.tool_grace_s
    to_start = timedelta(seconds=spec.tool_schedule_to_start_s)
    summary = tool_summary(call.name, call.arguments, approved=name == TOOL_DISPATCH)
    return workflow.start_activity(
        name,
        input,
        result_type=ToolCallOutput,
        task_queue=spec.tool_task_queue,
        schedule_to_start_timeout=to_start if START_TIMEOUTS in behaviour else None,
        start_to_close_timeout=timedelta(seconds=budget),
        heartbeat_timeout=timedelta(seconds=spec.heartbeat_timeout_s),
        cancellation_type=_cancel_waits(),
        retry_policy=RetryPolicy(maximum_attempts=1),
        summary=summary if SUMMARIES in behaviour else None,
    )
