"""Background subagents: a `task` call with `run_in_background: true` starts a job.

Owns the job a background child runs as (kind `task`, so ids are `task-1`, ...; label
`<type>: <description>`; owner the calling agent, so only it reaches the job with `job_output`,
`job_list` and `job_kill`, and it gets the completion notice). The child is spawned inside the
job's start, after the registry's checks, and runs under an `AbortController` the job owns: it
is detached from the caller's turn — aborting that turn (Ctrl-C) does not touch it — and
`job_kill` (or the jobs service closing) aborts it, after which the job settles only once the
child is disposed, exactly as a foreground child is (every child tool call settled, process
groups gone, log balanced, scope disposed).

How the job ends: `completed` with the child's final text as its output; `killed` with its
partial output (`job_kill`, or the service closing); `failed` when the child's turn ended
otherwise (error, blocked, max-steps) or its run raised.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final

from ...core.errors import error_message
from ...core.signals import AbortController, AbortSignal
from ...plugins.jobs.model import JobHooks, JobOutcome, JobStart, JobStatus
from ...plugins.jobs.registry import JobRegistry
from ...tools.errors import ToolCallAborted
from ...tools.execution import ToolRunContext
from .agent_types import AgentType
from .child import Caller, Child, Host, spawn_child
from .errors import ChildNotStarted

if TYPE_CHECKING:
    from .task import TaskValue

__all__ = ["JOB_KIND", "start_background"]

JOB_KIND: Final = "task"
_LABEL_MAX: Final = 80


def _label(agent_type: AgentType, description: str) -> str:
    label = f"{agent_type.name}: {' '.join(description.split()) or 'subagent'}"
    return label if len(label) <= _LABEL_MAX else label[: _LABEL_MAX - 1] + "…"


async def _run(child: Child, prompt: str, signal: AbortSignal) -> JobOutcome:
    """The job's `done`: run the child, dispose it, say how it ended (never raises)."""
    try:
        outcome = await child.run(prompt, signal=signal)
    except Exception as exc:
        await child.dispose()
        return JobOutcome(JobStatus.FAILED, error_message(exc), child.output())
    await child.dispose()
    where = f"session {child.session_id}"
    if signal.aborted or outcome.kind == "aborted":
        return JobOutcome(JobStatus.KILLED, f"stopped; {where}", child.output())
    if outcome.completed:
        return JobOutcome(JobStatus.COMPLETED, where, outcome.text)
    return JobOutcome(JobStatus.FAILED, f"{outcome.kind}; {where}", child.output())


async def start_background(
    host: Host,
    caller: Caller,
    agent_type: AgentType,
    description: str,
    prompt: str,
    exec: ToolRunContext,
) -> TaskValue:
    """Start the child as a job of the calling agent; its job id and session."""
    jobs = host.ctx.get("jobs")
    if not isinstance(jobs, JobRegistry):
        raise RuntimeError(
            'background subagents need the "jobs" plugin; mount it or run in the foreground'
        )
    started: list[tuple[Child, asyncio.Future[JobOutcome]]] = []

    async def run() -> JobHooks:
        child = await spawn_child(host, caller, agent_type, call_id=exec.call_id, background=True)
        controller = AbortController()
        done = asyncio.ensure_future(_run(child, prompt, controller.signal))
        host.track(done, controller)
        started.append((child, done))
        return JobHooks(cancel=controller.abort, done=done)

    label = _label(agent_type, description)
    try:
        job_id = await jobs.start(
            JobStart(kind=JOB_KIND, label=label, owner=exec.agent, run=run), signal=exec.signal
        )
    except BaseException:
        if exec.signal.aborted and not started:
            raise ChildNotStarted() from None
        raise
    (child, done) = started[0]
    if exec.signal.aborted:  # aborted while starting: the caller will never see this id
        jobs.kill(job_id, exec.agent, "tool call aborted")
        await asyncio.shield(done)  # the child is disposed before the call ends
        if not child.model_called:
            raise ChildNotStarted()
        raise ToolCallAborted()
    return {
        "status": "running",
        "session_id": child.session_id,
        "agent_type": agent_type.name,
        "job_id": job_id,
    }
