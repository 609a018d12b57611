"""The model-facing job controller: `job_output`, `job_list`, `job_kill`.

Owns: the three definitions (descriptions, values, exact renderings; the parameters are in
`tether.plugins.jobs.args`, imported by the first call), the public
snapshot the model sees (`id, kind, label, status, detail?, started_at, finished_at?`: never the
owner or `reported`), and argument checks. Every call acts as `exec.agent`, so a model only
reaches its own jobs and unowned ones. None declares `timeout_ms`: `job_output` bounds its own
wait (`wait_ms`, capped) and forwards `exec.signal` to it. A wait cut short by the caller returns
without consuming output, so the registry records the call as `ABORTED` and nothing is lost.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, NotRequired

from typing_extensions import TypedDict

from ...core.json import JsonValue
from ...core.timeout import format_ms
from ...tools import ModelRef, ToolDefinition, ToolOutput, ToolRunContext, define_tool
from ...tools.results import ContentBlock, text_content
from .config import JobsConfig

if TYPE_CHECKING:  # the argument models (tether.plugins.jobs.args) and the job vocabulary
    # (model.py): imported by the first call (issue 36)
    from .args import JobKillParameters, JobListParameters, JobOutputParameters
    from .model import JobSnapshot
    from .registry import JobRegistry

__all__ = ["PublicJob", "job_tools", "public_job", "status_line"]


class PublicJob(TypedDict):
    id: str
    kind: str
    label: str
    status: str
    detail: NotRequired[str]
    started_at: int
    finished_at: NotRequired[int]


class JobOutputValue(TypedDict):
    text: str
    job: PublicJob


class JobKillValue(TypedDict):
    outcome: Literal["cancellation-requested", "already-finished"]
    job: PublicJob


def public_job(snapshot: JobSnapshot) -> PublicJob:
    """What the model may see of a job."""
    job: PublicJob = {
        "id": snapshot.id,
        "kind": snapshot.kind,
        "label": snapshot.label,
        "status": snapshot.status.value,
        "started_at": snapshot.started_at,
    }
    if snapshot.detail is not None:
        job["detail"] = snapshot.detail
    if snapshot.finished_at is not None:
        job["finished_at"] = snapshot.finished_at
    return job


def status_line(job: Any) -> str:
    """`[status: <status>]` or `[status: <status>, <detail>]` for a public job (JSON)."""
    detail = job.get("detail")
    return f"[status: {job['status']}, {detail}]" if detail else f"[status: {job['status']}]"


def _check_job_id(job_id: str) -> None:
    if not job_id.strip():
        raise ValueError(f"invalid job_id: expected a non-empty string, got {json.dumps(job_id)}")


def _render_output(_args: object, value: JsonValue) -> Sequence[ContentBlock]:
    out: Any = value
    body = out["text"] or "(no new output)"
    separator = "" if body.endswith("\n") else "\n"
    return text_content(f"{body}{separator}{status_line(out['job'])}")


def _render_list(_args: object, value: JsonValue) -> Sequence[ContentBlock]:
    jobs: Any = value
    if not jobs:
        return text_content("(no background jobs)")
    return text_content(
        "\n".join(f"{j['id']} [{j['kind']}] {j['status']} — {j['label']}" for j in jobs)
    )


def _render_kill(_args: object, value: JsonValue) -> Sequence[ContentBlock]:
    out: Any = value
    job = out["job"]
    if out["outcome"] == "cancellation-requested":
        return text_content(f"requested cancellation of job {job['id']}")
    return text_content(f"job {job['id']} had already finished {status_line(job)}")


def job_tools(jobs: JobRegistry, config: JobsConfig) -> list[ToolDefinition]:
    """The three controller tools over `jobs`."""

    async def job_output(args: JobOutputParameters, exec: ToolRunContext) -> JobOutputValue:
        from .model import JobWaitAborted  # the first call: issue 36

        _check_job_id(args.job_id)
        if args.wait or args.wait_ms is not None:
            wait_ms = args.wait_ms
            if wait_ms is not None and not (math.isfinite(wait_ms) and wait_ms > 0):
                raise ValueError(
                    f"invalid wait_ms: expected a positive number, got {format_ms(wait_ms)}"
                )
            budget = min(
                config.wait_timeout_ms if wait_ms is None else wait_ms, config.max_wait_timeout_ms
            )
            try:
                await jobs.wait(
                    args.job_id, signal=exec.signal, timeout_ms=budget, caller=exec.agent
                )
            except JobWaitAborted:  # not consuming: the registry supersedes this with ABORTED
                return {"text": "", "job": public_job(jobs.get(args.job_id, exec.agent))}
        read = jobs.read(args.job_id, exec.agent)
        return {"text": read.text, "job": public_job(read.job)}

    async def job_list(_args: JobListParameters, exec: ToolRunContext) -> list[PublicJob]:
        return [public_job(job) for job in jobs.list(exec.agent)]

    async def job_kill(args: JobKillParameters, exec: ToolRunContext) -> JobKillValue:
        _check_job_id(args.job_id)
        outcome = jobs.kill(args.job_id, exec.agent, args.reason)
        return {
            "outcome": "cancellation-requested" if outcome == "requested" else "already-finished",
            "job": public_job(jobs.get(args.job_id, exec.agent)),
        }

    return [
        define_tool(
            name="job_output",
            description=(
                "Read a background job. Stream jobs return only output since the previous "
                "read; final-output jobs return their result after settlement. Every response "
                "ends with `[status: ...]`. Reads are non-blocking unless `wait: true`, which "
                "waits up to the configured cap."
            ),
            parameters=ModelRef("tether.plugins.jobs.args:JobOutputParameters"),
            output=ToolOutput(schema=JobOutputValue, render=_render_output),
            execute=job_output,
        ),
        define_tool(
            name="job_list",
            description=(
                "List your background jobs (running and finished) with their ids, kinds, "
                "and statuses."
            ),
            parameters=ModelRef("tether.plugins.jobs.args:JobListParameters"),
            output=ToolOutput(schema=list[PublicJob], render=_render_list),
            execute=job_list,
        ),
        define_tool(
            name="job_kill",
            description=(
                "Request cancellation of a running background job by job id. Returns "
                "immediately; the job settles as killed once its work actually stops."
            ),
            parameters=ModelRef("tether.plugins.jobs.args:JobKillParameters"),
            output=ToolOutput(schema=JobKillValue, render=_render_kill),
            execute=job_kill,
        ),
    ]
