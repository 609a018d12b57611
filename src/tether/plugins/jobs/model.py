"""The background-job vocabulary: what a producer hands the registry and what callers read back.

Owns: `JobStatus` (`running` → optionally `stopping` → exactly one of `completed`, `killed`,
`failed`), `JobStart` and `JobHooks` (the producer's side), `JobOutcome`, `JobSnapshot` and
`JobRead` (the caller's side) and the registry's coded errors:

```
HarnessError
 └── JobError                code
      ├── JobNotFound        UNKNOWN_JOB         `unknown job <id>`
      ├── JobForbidden       JOB_FORBIDDEN       `job <id> belongs to another session`
      ├── JobLimitReached    JOB_LIMIT           `background job limit reached for this owner ...`
      ├── InvalidJob         INVALID_JOB         kind/label/wait timeout checks
      └── JobWaitAborted     ABORTED             `wait aborted` (the job keeps running)
```
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ...core.errors import HarnessError

__all__ = [
    "InvalidJob",
    "JobError",
    "JobForbidden",
    "JobHooks",
    "JobLimitReached",
    "JobNotFound",
    "JobOutcome",
    "JobRead",
    "JobSnapshot",
    "JobStart",
    "JobStatus",
    "JobWaitAborted",
    "owner_session",
]


class JobStatus(enum.Enum):
    """`RUNNING` → optionally `STOPPING` (a kill was requested) → one terminal status."""

    RUNNING = "running"
    STOPPING = "stopping"
    COMPLETED = "completed"
    KILLED = "killed"
    FAILED = "failed"

    @property
    def terminal(self) -> bool:
        return self in (JobStatus.COMPLETED, JobStatus.KILLED, JobStatus.FAILED)


@dataclass(frozen=True, slots=True)
class JobOutcome:
    """How a job ended (`status` is terminal); `output` is the final output of a job without a
    stream (`JobHooks.read_output is None`)."""

    status: JobStatus
    detail: str | None = None
    output: str | None = None


@dataclass(frozen=True, slots=True)
class JobHooks:
    """What a started producer gives the registry. `cancel(reason)` is synchronous, idempotent
    and must eventually settle `done`; `done` must not raise (a raise settles the job `failed`);
    `read_output()` returns output since the previous call (None: a final-output-only job)."""

    cancel: Callable[[str | None], object]
    done: Awaitable[JobOutcome]
    read_output: Callable[[], str] | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class JobStart:
    """A producer's request: `kind` prefixes the id (`bash-1`), `label` is one line for people,
    `owner` the live agent the job belongs to (None: unowned), `run` starts the work (all checks
    happen before it is called; if it raises, nothing is registered)."""

    kind: str
    label: str
    run: Callable[[], Awaitable[JobHooks]]
    owner: object | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class JobSnapshot:
    """A job as it is now (a fresh copy each call). `reported`: a kill, a read or wait that saw
    the terminal state, or teardown already told the owner, so no completion notice is due.
    Times are epoch milliseconds."""

    id: str
    kind: str
    label: str
    owner_session: str | None
    status: JobStatus
    detail: str | None
    started_at: int
    finished_at: int | None
    reported: bool


@dataclass(frozen=True, slots=True)
class JobRead:
    """One read: the text (new output of a stream job, or the final output) and the snapshot."""

    text: str
    job: JobSnapshot


def owner_session(agent: object | None) -> str | None:
    """The session key of an owner or caller: the agent's `id` when it is a string, else a
    key unique to that object; None for no agent."""
    if agent is None:
        return None
    ident = getattr(agent, "id", None)
    return ident if isinstance(ident, str) else f"agent@{id(agent):x}"


class JobError(HarnessError):
    """A job registry refusal."""


class JobNotFound(JobError):
    def __init__(self, job_id: str) -> None:
        super().__init__(f"unknown job {job_id}", "UNKNOWN_JOB")


class JobForbidden(JobError):
    def __init__(self, job_id: str) -> None:
        super().__init__(f"job {job_id} belongs to another session", "JOB_FORBIDDEN")


class JobLimitReached(JobError):
    def __init__(self, limit: int) -> None:
        super().__init__(
            f"background job limit reached for this owner (limit: {limit}); use job_kill to "
            "stop an unneeded job, wait for it to finish, then retry",
            "JOB_LIMIT",
        )


class InvalidJob(JobError):
    def __init__(self, message: str) -> None:
        super().__init__(message, "INVALID_JOB")


class JobWaitAborted(JobError):
    """The caller's signal aborted a wait; the job keeps running."""

    def __init__(self) -> None:
        super().__init__("wait aborted", "ABORTED")

    @property
    def name(self) -> str:
        return "AbortError"
