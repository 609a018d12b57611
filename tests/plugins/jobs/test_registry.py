"""Contract of the job registry, `ctx.jobs` (spec §4.3), with in-memory producers.

- Every check runs before the producer starts; a refused or failed start registers nothing and
  uses no id. Ids are `<kind>-<n>`, counted per kind from 1.
- Admission counts an owner's running and stopping jobs against its limit (default 10).
- An owned job is reachable only by its own session; unowned jobs by everyone.
- Reads are consuming for stream jobs; final-output jobs return their output once terminal.
- `kill` asks the producer first (a raise leaves the job running) and then reports `stopping`.
- `wait` returns the terminal snapshot, or the live one when its own timeout passes; a caller
  abort raises `wait aborted`; the job keeps running either way.
- Settlement notifies listeners (contained); a waiter present at settlement makes it reported.
- `aclose` cancels every live job and awaits it; a raising cancel settles the job `failed`.
"""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace

import pytest

from tether.core.signals import AbortController, AbortSignal
from tether.plugins.jobs import (
    JobHooks,
    JobOutcome,
    JobRegistry,
    JobsConfig,
    JobSnapshot,
    JobStart,
    JobStatus,
)
from tether.plugins.jobs.model import (
    InvalidJob,
    JobForbidden,
    JobLimitReached,
    JobNotFound,
    JobWaitAborted,
)

ALICE = SimpleNamespace(id="alice")
BOB = SimpleNamespace(id="bob")
NEVER = AbortSignal.never


class Work:
    """A producer whose work ends when `finish` is called or it is cancelled."""

    def __init__(
        self, *, stream: bool = True, cancel_raises: bool = False, cancel_settles: bool = True
    ) -> None:
        self.outcome: asyncio.Future[JobOutcome] = asyncio.get_running_loop().create_future()
        self.pending = ""
        self.cancels: list[str | None] = []
        self.stream = stream
        self.cancel_raises = cancel_raises
        self.cancel_settles = cancel_settles
        self.started = 0

    async def run(self) -> JobHooks:
        self.started += 1
        return JobHooks(
            cancel=self.cancel,
            done=self.outcome,
            read_output=self.read if self.stream else None,
        )

    def cancel(self, reason: str | None) -> None:
        self.cancels.append(reason)
        if self.cancel_raises:
            raise RuntimeError("boom")
        if self.cancel_settles:
            self.finish(JobOutcome(JobStatus.KILLED, "cancelled"))

    def read(self) -> str:
        text, self.pending = self.pending, ""
        return text

    def finish(self, outcome: JobOutcome) -> None:
        if not self.outcome.done():
            self.outcome.set_result(outcome)


async def start(
    registry: JobRegistry, work: Work, *, kind: str = "bash", owner: object | None = None
) -> str:
    spec = JobStart(kind=kind, label="sleep 60", owner=owner, run=work.run)
    return await registry.start(spec, signal=NEVER())


async def settled(registry: JobRegistry, job_id: str, caller: object | None = None) -> JobSnapshot:
    return await registry.wait(job_id, signal=NEVER(), timeout_ms=5000, caller=caller)


async def test_ids_are_counted_per_kind_from_one() -> None:
    registry = JobRegistry()
    ids = [
        await start(registry, Work()),
        await start(registry, Work(), kind="subagent"),
        await start(registry, Work()),
    ]
    await registry.aclose()

    assert ids == ["bash-1", "subagent-1", "bash-2"]


@pytest.mark.parametrize(
    ("kind", "label", "message"),
    [
        ("", "x", "invalid job kind: expected a non-empty string"),
        ("bash", " ", "invalid job label: expected a non-empty string"),
    ],
)
async def test_a_refused_start_runs_nothing_and_uses_no_id(
    kind: str, label: str, message: str
) -> None:
    registry = JobRegistry()
    work = Work()

    with pytest.raises(InvalidJob, match=rf"^{message}$"):
        await registry.start(JobStart(kind=kind, label=label, run=work.run), signal=NEVER())
    assert work.started == 0
    assert await start(registry, Work()) == "bash-1"
    await registry.aclose()


async def test_a_failing_producer_registers_nothing() -> None:
    registry = JobRegistry()

    async def broken() -> JobHooks:
        raise OSError("cannot start")

    with pytest.raises(OSError, match="cannot start"):
        await registry.start(JobStart(kind="bash", label="x", run=broken), signal=NEVER())
    assert registry.list() == []
    assert await start(registry, Work()) == "bash-1"
    await registry.aclose()


async def test_an_aborted_start_signal_runs_nothing() -> None:
    registry = JobRegistry()
    work = Work()
    controller = AbortController()
    controller.abort()

    with pytest.raises(Exception, match="operation aborted"):
        await registry.start(
            JobStart(kind="bash", label="x", run=work.run), signal=controller.signal
        )
    assert work.started == 0


async def test_the_default_limit_is_ten_jobs_per_owner() -> None:
    registry = JobRegistry()
    assert JobsConfig().max_concurrent_jobs_per_owner == 10
    for _ in range(10):
        await start(registry, Work(), owner=ALICE)

    with pytest.raises(JobLimitReached) as refused:
        await start(registry, Work(), owner=ALICE)
    await start(registry, Work(), owner=BOB)  # another owner has its own bucket
    await registry.aclose()

    assert refused.value.message == (
        "background job limit reached for this owner (limit: 10); use job_kill to stop an "
        "unneeded job, wait for it to finish, then retry"
    )


async def test_stopping_jobs_count_and_finished_ones_free_their_slot() -> None:
    registry = JobRegistry(max_jobs_per_owner=2)
    slow = Work(cancel_settles=False)
    done = Work()
    slow_id = await start(registry, slow)
    done_id = await start(registry, done)
    registry.kill(slow_id)

    with pytest.raises(JobLimitReached):
        await start(registry, Work())
    done.finish(JobOutcome(JobStatus.COMPLETED))
    await settled(registry, done_id)
    await start(registry, Work())
    slow.finish(JobOutcome(JobStatus.KILLED))
    await registry.aclose()


async def test_an_owned_job_is_invisible_to_other_sessions() -> None:
    registry = JobRegistry()
    mine = await start(registry, Work(), owner=ALICE)
    shared = await start(registry, Work())

    assert [job.id for job in registry.list(ALICE)] == [mine, shared]
    assert [job.id for job in registry.list(BOB)] == [shared]
    assert [job.id for job in registry.list()] == [shared]
    with pytest.raises(JobForbidden, match=rf"^job {mine} belongs to another session$"):
        registry.get(mine, BOB)
    with pytest.raises(JobNotFound, match=r"^unknown job bash-9$"):
        registry.get("bash-9", ALICE)
    assert registry.get(mine, ALICE).owner_session == "alice"
    await registry.aclose()


async def test_stream_reads_are_consuming() -> None:
    registry = JobRegistry()
    work = Work()
    job_id = await start(registry, work)
    work.pending = "line one\n"

    assert registry.read(job_id).text == "line one\n"
    assert registry.read(job_id).text == ""
    await registry.aclose()


async def test_a_final_output_job_returns_its_output_once_terminal_and_repeatably() -> None:
    registry = JobRegistry()
    work = Work(stream=False)
    job_id = await start(registry, work)

    assert registry.read(job_id).text == ""
    work.finish(JobOutcome(JobStatus.COMPLETED, "completed", output="the answer"))
    await settled(registry, job_id)
    first, second = registry.read(job_id), registry.read(job_id)

    assert (first.text, second.text) == ("the answer", "the answer")
    assert second.job.reported
    await registry.aclose()


async def test_kill_asks_the_producer_first_then_reports_stopping() -> None:
    registry = JobRegistry()
    work = Work(cancel_settles=False)
    job_id = await start(registry, work)

    assert registry.kill(job_id, reason="not needed") == "requested"
    snapshot = registry.get(job_id)
    assert (work.cancels, snapshot.status, snapshot.reported) == (
        ["not needed"],
        JobStatus.STOPPING,
        True,
    )
    work.finish(JobOutcome(JobStatus.KILLED, "signal: SIGTERM"))
    assert (await settled(registry, job_id)).status is JobStatus.KILLED
    assert registry.kill(job_id) == "already-finished"
    await registry.aclose()


async def test_a_raising_cancel_leaves_the_job_running_and_unreported() -> None:
    registry = JobRegistry()
    work = Work(cancel_raises=True)
    job_id = await start(registry, work)

    with pytest.raises(RuntimeError, match="boom"):
        registry.kill(job_id)
    snapshot = registry.get(job_id)
    assert (snapshot.status, snapshot.reported) == (JobStatus.RUNNING, False)
    work.finish(JobOutcome(JobStatus.COMPLETED))
    await registry.aclose()


async def test_a_wait_that_runs_out_returns_the_live_job() -> None:
    registry = JobRegistry()
    job_id = await start(registry, Work())

    snapshot = await registry.wait(job_id, signal=NEVER(), timeout_ms=20)

    assert snapshot.status is JobStatus.RUNNING
    await registry.aclose()


async def test_a_waiter_present_at_settlement_gets_the_terminal_state_and_no_notice() -> None:
    registry = JobRegistry()
    notices: list[JobSnapshot] = []
    registry.on_job_done(lambda snapshot, owner: notices.append(snapshot))
    work = Work()
    job_id = await start(registry, work, owner=ALICE)
    asyncio.get_running_loop().call_soon(
        work.finish, JobOutcome(JobStatus.COMPLETED, "exit code: 0")
    )

    snapshot = await registry.wait(job_id, signal=NEVER(), timeout_ms=5000, caller=ALICE)

    assert (snapshot.status, snapshot.detail, snapshot.reported) == (
        JobStatus.COMPLETED,
        "exit code: 0",
        True,
    )
    assert [n.reported for n in notices] == [True]
    await registry.aclose()


async def test_an_aborted_wait_raises_and_leaves_the_job_running() -> None:
    registry = JobRegistry()
    job_id = await start(registry, Work())
    controller = AbortController()
    asyncio.get_running_loop().call_soon(controller.abort)

    with pytest.raises(JobWaitAborted, match=r"^wait aborted$"):
        await registry.wait(job_id, signal=controller.signal, timeout_ms=5000)
    with pytest.raises(JobWaitAborted):
        await registry.wait(job_id, signal=controller.signal, timeout_ms=5000)
    assert registry.get(job_id).status is JobStatus.RUNNING
    await registry.aclose()


async def test_a_wait_needs_a_positive_timeout() -> None:
    registry = JobRegistry()
    job_id = await start(registry, Work())

    with pytest.raises(
        InvalidJob,
        match=r"^invalid wait timeout: expected a positive number of milliseconds, got 0$",
    ):
        await registry.wait(job_id, signal=NEVER(), timeout_ms=0)
    await registry.aclose()


async def test_settlement_notifies_every_listener_even_if_one_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = JobRegistry()
    seen: list[tuple[str, object]] = []

    def broken(snapshot: JobSnapshot, owner: object) -> None:
        raise ValueError("listener bug")

    registry.on_job_done(broken)
    registry.on_job_done(lambda snapshot, owner: seen.append((snapshot.id, owner)))
    work = Work()
    job_id = await start(registry, work, owner=ALICE)
    with caplog.at_level(logging.WARNING, logger="tether.jobs"):
        work.finish(JobOutcome(JobStatus.COMPLETED))
        await settled(registry, job_id, ALICE)

    assert seen == [(job_id, ALICE)]
    assert "on_job_done listener failed" in caplog.text
    await registry.aclose()


async def test_a_producer_whose_done_raises_settles_failed() -> None:
    registry = JobRegistry()
    work = Work()
    job_id = await start(registry, work)
    work.outcome.set_exception(RuntimeError("crashed"))

    snapshot = await settled(registry, job_id)

    assert (snapshot.status, snapshot.detail) == (JobStatus.FAILED, "crashed")
    await registry.aclose()


async def test_closing_cancels_every_live_job_and_awaits_it() -> None:
    registry = JobRegistry()
    running, finished = Work(), Work()
    await start(registry, running)
    finished_id = await start(registry, finished)
    finished.finish(JobOutcome(JobStatus.COMPLETED))
    await settled(registry, finished_id)

    await registry.aclose()

    assert running.cancels == ["jobs service disposed"]
    assert finished.cancels == []
    assert registry.list() == []
    with pytest.raises(RuntimeError, match="closed"):
        await start(registry, Work())


async def test_a_cancel_that_raises_at_teardown_settles_the_job_failed_without_waiting(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = JobRegistry()
    work = Work(cancel_raises=True)  # and its work never ends on its own
    await start(registry, work)

    with caplog.at_level(logging.WARNING, logger="tether.jobs"):
        await registry.aclose()

    assert "job bash-1: cancel threw during teardown; work may be orphaned: boom" in caplog.text
    assert registry.list() == []


async def test_a_started_job_is_told_to_its_start_listeners_running_with_its_owner() -> None:
    registry = JobRegistry()
    seen: list[tuple[str, JobStatus, object]] = []
    registry.on_job_started(
        lambda snapshot, owner: seen.append((snapshot.id, snapshot.status, owner))
    )

    job_id = await start(registry, Work(), owner=ALICE)

    assert seen == [(job_id, JobStatus.RUNNING, ALICE)]
    await registry.aclose()
