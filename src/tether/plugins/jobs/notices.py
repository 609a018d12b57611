"""Completion notices: the message an owner gets when one of its jobs settles unreported.

Owns the notice text (`background job <id> (<kind>: <label>) finished <status line>. Read its
output with job_output.`), its source (`{"kind": "plugin", "plugin": "jobs", "form": "notice",
"summary": ...}`, the summary bounded to 120 characters) and delivery: skipped when the job was
already reported or has no owner; otherwise handed to the owner's `inject(message)` (it joins the
owner's next step without opening a turn) when the owner has one.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from ...tools import UserMessage, user_message
from .tools import public_job, status_line

if TYPE_CHECKING:  # a job settled: model.py is loaded by then (issue 36)
    from .model import JobSnapshot

__all__ = ["completion_notice", "deliver_notice"]

_log = logging.getLogger("tether.jobs")
_SUMMARY_MAX: Final = 120


def completion_notice(snapshot: JobSnapshot) -> UserMessage:
    """The notice for a settled job."""
    status = status_line(public_job(snapshot))
    summary = f"{snapshot.kind} {snapshot.label} {status}"
    if len(summary) > _SUMMARY_MAX:
        summary = summary[: _SUMMARY_MAX - 1] + "…"
    return user_message(
        f"background job {snapshot.id} ({snapshot.kind}: {snapshot.label}) finished {status}. "
        "Read its output with job_output.",
        {"kind": "plugin", "plugin": "jobs", "form": "notice", "summary": summary},
    )


def deliver_notice(snapshot: JobSnapshot, owner: object | None) -> None:
    """`on_job_done` listener: notify the owner of a job that settled unreported."""
    if snapshot.reported or owner is None:
        return
    inject = getattr(owner, "inject", None)
    if callable(inject):
        inject(completion_notice(snapshot))
    else:
        _log.debug("job %s settled; its owner %r takes no notices", snapshot.id, owner)
