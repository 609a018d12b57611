"""The job registry, `ctx.jobs`: ids, lifecycle, access, waiting, completion and teardown for
long-running work that tools start (background bash commands, later subagents).

Owns: admission (checks before the producer runs; a per-owner limit counting running, stopping
and still-starting jobs), `<kind>-<n>` ids, the access boundary (an owned job is reachable only
by a caller of the same session; ids are predictable, so this check is the boundary), consuming
reads, kill requests, bounded waits, settlement (first outcome wins; waiters resolved, then
listeners notified, each contained) and teardown (`aclose`: cancel every live job with
`jobs service disposed` and await its settlement). Does not own the work: producers own their
resources and stop them in `JobHooks.cancel`.

Waiting never abandons anything: a wait that times out or is aborted returns or raises while
the job keeps running.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, TypeAlias

from ...core.errors import error_message
from ...core.signals import AbortSignal
from ...core.timeout import deadline, format_ms, timeout_of

if TYPE_CHECKING:  # the job vocabulary (model.py): imported by the first job, not at the mount
    from .model import JobHooks, JobOutcome, JobRead, JobSnapshot, JobStart

__all__ = ["DEFAULT_JOB_LIMIT", "JobDoneListener", "JobRegistry", "JobStartedListener"]

_log = logging.getLogger("tether.jobs")

DEFAULT_JOB_LIMIT = 10
_WAIT_TIMEOUT = "JOB_WAIT_TIMEOUT"

JobDoneListener: TypeAlias = "Callable[[JobSnapshot, object | None], object]"
"""`(snapshot, owner)`, called once when a job settles (contained: a raise is logged)."""
JobStartedListener: TypeAlias = "Callable[[JobSnapshot, object | None], object]"
"""`(snapshot, owner)`, called once when a job is registered, before any settlement
(contained: a raise is logged)."""


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(slots=True)
class _Job:
    snapshot: JobSnapshot
    owner: object | None
    hooks: JobHooks
    on_settle: list[Callable[[], None]]
    watcher: asyncio.Task[None] | None = None
    output: str | None = None
    waiters: int = 0


class JobRegistry:
    """`ctx.jobs`. Close with `await registry.aclose()` (kills every job).

    Made at the mount without the job vocabulary: each method imports what it uses of model.py
    where it first needs it (issue 36), so a boot that starts no job loads none of it."""

    def __init__(self, *, max_jobs_per_owner: int = DEFAULT_JOB_LIMIT) -> None:
        if (
            isinstance(max_jobs_per_owner, bool)
            or not isinstance(max_jobs_per_owner, int)
            or max_jobs_per_owner <= 0
        ):
            raise ValueError(
                "jobs: max_jobs_per_owner must be a positive whole number, got "
                f"{max_jobs_per_owner!r}"
            )
        self._limit = max_jobs_per_owner
        self._jobs: dict[str, _Job] = {}
        self._counters: dict[str, int] = {}
        self._starting: dict[str | None, int] = {}
        self._listeners: list[JobDoneListener] = []
        self._started: list[JobStartedListener] = []
        self._closed = False

    # -- starting ------------------------------------------------------------------------------

    async def start(self, spec: JobStart, *, signal: AbortSignal) -> str:
        """Admit and start a job; returns its id. Every check runs before `spec.run()`; if a
        check or `run()` raises, nothing is registered and no id is used.

        Raises `InvalidJob` (empty kind or label), `JobLimitReached` (the owner already has
        `max_jobs_per_owner` live jobs), the abort (`signal.throw_if_aborted()`) when `signal`
        has aborted before `run()`, whatever `run()` raises, and `RuntimeError` once the
        registry is closed. `signal` cancels the start only; the started job is the registry's.
        """
        from .model import (  # the first job: issue 36
            InvalidJob,
            JobLimitReached,
            JobSnapshot,
            JobStatus,
            owner_session,
        )

        if self._closed:
            raise RuntimeError("the jobs service is closed; it starts no new jobs")
        if not isinstance(spec.kind, str) or not spec.kind.strip():
            raise InvalidJob("invalid job kind: expected a non-empty string")
        if not isinstance(spec.label, str) or not spec.label.strip():
            raise InvalidJob("invalid job label: expected a non-empty string")
        session = owner_session(spec.owner)
        if self._live_count(session) >= self._limit:
            raise JobLimitReached(self._limit)
        self._starting[session] = self._starting.get(session, 0) + 1
        try:
            signal.throw_if_aborted()
            hooks = await spec.run()
        finally:
            self._starting[session] -= 1
        number = self._counters.get(spec.kind, 0) + 1
        self._counters[spec.kind] = number
        job_id = f"{spec.kind}-{number}"
        job = _Job(
            snapshot=JobSnapshot(
                id=job_id,
                kind=spec.kind,
                label=spec.label,
                owner_session=session,
                status=JobStatus.RUNNING,
                detail=None,
                started_at=_now_ms(),
                finished_at=None,
                reported=False,
            ),
            owner=spec.owner,
            hooks=hooks,
            on_settle=[],
        )
        self._jobs[job_id] = job
        job.watcher = asyncio.get_running_loop().create_task(self._watch(job))
        if self._closed:  # closed while `run()` was starting the work
            self._cancel_for_teardown(job)
        else:
            self._tell(self._started, job, "on_job_started", "job-started")
        return job_id

    def _live_count(self, session: str | None) -> int:
        live = sum(
            1
            for job in self._jobs.values()
            if job.snapshot.owner_session == session and not job.snapshot.status.terminal
        )
        return live + self._starting.get(session, 0)

    # -- reading -------------------------------------------------------------------------------

    def list(self, caller: object | None = None) -> list[JobSnapshot]:
        """The caller's jobs and every unowned job, in start order."""
        from .model import owner_session  # issue 36: see the class note

        session = owner_session(caller)
        return [
            job.snapshot
            for job in self._jobs.values()
            if job.snapshot.owner_session is None or job.snapshot.owner_session == session
        ]

    def _find(self, job_id: str, caller: object | None) -> _Job:
        from .model import JobForbidden, JobNotFound, owner_session  # issue 36: the class note

        job = self._jobs.get(job_id)
        if job is None:
            raise JobNotFound(job_id)
        owner = job.snapshot.owner_session
        if owner is not None and owner != owner_session(caller):
            raise JobForbidden(job_id)
        return job

    def get(self, job_id: str, caller: object | None = None) -> JobSnapshot:
        """The job's snapshot (not consuming). Raises `JobNotFound`, `JobForbidden`."""
        return self._find(job_id, caller).snapshot

    def read(self, job_id: str, caller: object | None = None) -> JobRead:
        """Consuming read: a stream job's new output; a final-output job's output once
        terminal (repeatable), `""` before. Reading a terminal job marks it reported."""
        from .model import JobRead  # issue 36: see the class note

        job = self._find(job_id, caller)
        terminal = job.snapshot.status.terminal
        if job.hooks.read_output is not None:
            text = job.hooks.read_output()
        else:
            text = (job.output or "") if terminal else ""
        if terminal:
            self._mark_reported(job)
        return JobRead(text, job.snapshot)

    # -- killing and waiting -------------------------------------------------------------------

    def kill(
        self, job_id: str, caller: object | None = None, reason: str | None = None
    ) -> Literal["requested", "already-finished"]:
        """Ask the producer to stop. A terminal job is only marked reported. A raising `cancel`
        propagates and leaves the job running and unreported."""
        from .model import JobStatus  # issue 36: see the class note

        job = self._find(job_id, caller)
        if job.snapshot.status.terminal:
            self._mark_reported(job)
            return "already-finished"
        if job.snapshot.status is JobStatus.RUNNING:
            job.hooks.cancel(reason)
            job.snapshot = replace(job.snapshot, status=JobStatus.STOPPING)
        self._mark_reported(job)
        return "requested"

    async def wait(
        self,
        job_id: str,
        *,
        signal: AbortSignal,
        timeout_ms: float,
        caller: object | None = None,
    ) -> JobSnapshot:
        """Wait until the job settles, `timeout_ms` passes (returns the live snapshot; the job
        keeps running) or `signal` aborts (raises `JobWaitAborted`; the job keeps running).
        A settled job returns at once; a waiter present at settlement sees the terminal state,
        which marks it reported. Raises `InvalidJob` for a bad `timeout_ms`."""
        from .model import InvalidJob, JobWaitAborted  # issue 36: see the class note

        if (
            isinstance(timeout_ms, bool)
            or not isinstance(timeout_ms, int | float)
            or not math.isfinite(timeout_ms)
            or timeout_ms <= 0
        ):
            shown = (
                format_ms(timeout_ms) if isinstance(timeout_ms, int | float) else repr(timeout_ms)
            )
            raise InvalidJob(
                f"invalid wait timeout: expected a positive number of milliseconds, got {shown}"
            )
        job = self._find(job_id, caller)
        if job.snapshot.status.terminal:
            return job.snapshot
        if signal.aborted:
            raise JobWaitAborted()
        loop = asyncio.get_running_loop()
        wake: asyncio.Future[None] = loop.create_future()

        def stop(_reason: object = None) -> None:
            if not wake.done():
                wake.set_result(None)

        job.waiters += 1
        job.on_settle.append(stop)
        try:
            with deadline(signal, timeout_ms, _WAIT_TIMEOUT) as limit:
                remove = limit.signal.add_listener(stop)
                try:
                    await asyncio.shield(wake)
                finally:
                    remove()
                aborted = limit.signal.aborted and timeout_of(limit.signal, _WAIT_TIMEOUT) is None
        finally:
            job.waiters -= 1
            job.on_settle.remove(stop)
        if job.snapshot.status.terminal:
            return job.snapshot
        if aborted:
            raise JobWaitAborted()
        return job.snapshot

    # -- settlement ----------------------------------------------------------------------------

    def on_job_done(self, listener: JobDoneListener) -> Callable[[], None]:
        """Call `listener(snapshot, owner)` when a job settles; returns the remover."""
        return _added(self._listeners, listener)

    def on_job_started(self, listener: JobStartedListener) -> Callable[[], None]:
        """Call `listener(snapshot, owner)` when a job is registered (its id is known, it has
        not settled yet); returns the remover."""
        return _added(self._started, listener)

    async def _watch(self, job: _Job) -> None:
        from .model import JobOutcome, JobStatus  # a job was started: model.py is loaded

        try:
            outcome = await asyncio.shield(job.hooks.done)
            if not isinstance(outcome, JobOutcome) or not outcome.status.terminal:
                raise TypeError(f"a job's done must give a terminal JobOutcome, got {outcome!r}")
        except Exception as exc:
            outcome = JobOutcome(JobStatus.FAILED, error_message(exc))
        self._settle(job, outcome)

    def _settle(self, job: _Job, outcome: JobOutcome) -> None:
        if job.snapshot.status.terminal:
            return
        job.output = outcome.output
        job.snapshot = replace(
            job.snapshot,
            status=outcome.status,
            detail=outcome.detail,
            finished_at=_now_ms(),
            reported=job.snapshot.reported or job.waiters > 0,
        )
        for wake in list(job.on_settle):
            wake()
        if self._closed:
            return
        self._tell(self._listeners, job, "on_job_done", "job-done")

    def _tell(self, listeners: Sequence[JobDoneListener], job: _Job, on: str, kind: str) -> None:
        """Call each listener with the job's snapshot and owner, each contained."""
        snapshot = job.snapshot
        for listener in list(listeners):
            try:
                result = listener(snapshot, job.owner)
                if asyncio.iscoroutine(result):
                    result.close()
                    raise TypeError(f"{kind} listeners are synchronous; it returned a coroutine")
            except Exception:
                _log.warning("job %s: %s listener failed", snapshot.id, on, exc_info=True)

    def _mark_reported(self, job: _Job) -> None:
        if not job.snapshot.reported:
            job.snapshot = replace(job.snapshot, reported=True)

    # -- teardown ------------------------------------------------------------------------------

    def _cancel_for_teardown(self, job: _Job) -> None:
        from .model import JobOutcome, JobStatus  # a job was started: model.py is loaded

        self._mark_reported(job)
        if job.snapshot.status is not JobStatus.RUNNING:
            return
        try:
            job.hooks.cancel("jobs service disposed")
        except Exception as exc:
            detail = f"cancel threw during teardown; work may be orphaned: {error_message(exc)}"
            _log.warning("job %s: %s", job.snapshot.id, detail, exc_info=True)
            self._settle(job, JobOutcome(JobStatus.FAILED, detail))
            if job.watcher is not None:
                job.watcher.cancel()  # its producer may never settle; do not wait for it
            return
        job.snapshot = replace(job.snapshot, status=JobStatus.STOPPING)

    async def aclose(self) -> None:
        """Stop notifying, cancel every live job, await every settlement, forget them all."""
        self._closed = True
        self._listeners.clear()
        while self._jobs:
            jobs = list(self._jobs.values())
            for job in jobs:
                self._cancel_for_teardown(job)
            watchers = [job.watcher for job in jobs if job.watcher is not None]
            if watchers:
                await asyncio.wait(watchers)
            for job in jobs:
                self._jobs.pop(job.snapshot.id, None)


def _added(listeners: list[JobDoneListener], listener: JobDoneListener) -> Callable[[], None]:
    """Append `listener`; the remover takes it out again (once)."""
    listeners.append(listener)

    def remove() -> None:
        if listener in listeners:
            listeners.remove(listener)

    return remove
