"""The stream-json session's task records for background jobs, in Claude Code's shape: the
Claude Agent SDK parses them into `TaskStartedMessage` and `TaskNotificationMessage`.

Owns `TaskMessages`, a pair of `JobRegistry` listeners for one session:

    {"type": "system", "subtype": "task_started", "task_id" (the job id, `bash-1`: what
     `stop_task` takes), "description" (the job's label), "task_type" (`local_bash` for a
     background command, `local_<kind>` otherwise), "session_id", "uuid"}
    {"type": "system", "subtype": "task_notification", "task_id", "status" (`completed`,
     `failed`, `stopped` for a killed job), "output_file" (always "": tether keeps a job's
     output in memory, `job_output` reads it), "summary", "session_id", "uuid"}

Only the session's own jobs (a subagent's are its own). Never `local_agent`: the SDK holds its
stdin open while such a task runs, and tether runs subagents inside their `task` call.
Does not own the jobs (`tether.plugins.jobs`) nor when records are written
(`tether.cli.stream_input`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Final

from ..plugins.jobs.model import JobSnapshot, JobStatus

__all__ = ["TaskMessages"]

_STATUS: Final = {
    JobStatus.COMPLETED: "completed",
    JobStatus.FAILED: "failed",
    JobStatus.KILLED: "stopped",
}


class TaskMessages:
    """Writes the task records of the jobs `agent()` owns, for session `session_id()` (see the
    module note)."""

    def __init__(
        self,
        write: Callable[[Mapping[str, object]], None],
        session_id: Callable[[], str],
        agent: Callable[[], object],
    ) -> None:
        self._write = write
        self._session_id = session_id
        self._agent = agent

    def started(self, job: JobSnapshot, owner: object | None) -> None:
        """`on_job_started`: `task_started`."""
        if owner is not self._agent():
            return
        self._record(
            "task_started",
            task_id=job.id,
            description=job.label,
            task_type=f"local_{job.kind}",
        )

    def done(self, job: JobSnapshot, owner: object | None) -> None:
        """`on_job_done`: `task_notification`."""
        if owner is not self._agent():
            return
        status = _STATUS.get(job.status, "failed")
        summary = f'Background command "{job.label}" {status}'
        if job.detail:
            summary += f" ({job.detail})"
        self._record(
            "task_notification", task_id=job.id, status=status, output_file="", summary=summary
        )

    def _record(self, subtype: str, **fields: object) -> None:
        self._write(
            {
                "type": "system",
                "subtype": subtype,
                **fields,
                "session_id": self._session_id(),
                "uuid": str(uuid.uuid4()),
            }
        )
