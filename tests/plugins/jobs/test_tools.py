"""Contract of the job controller tools (spec §4.4) with real background `bash` commands.

- A background `bash` call returns `started background job <id>` at once.
- `job_output` returns new output and ends with `[status: ...]`; a bounded wait that runs out is
  a success reading `[status: running]` and the job keeps running; a caller abort mid-wait ends
  the call `ABORTED` without consuming output.
- `job_list` shows the caller's jobs; `job_kill` requests cancellation and the process group dies.
- Disposing the `jobs` plugin (or the context) kills every job's processes.
- An owner learns of a job that finished unreported through a completion notice.
- None of the tools declares `timeout_ms`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from tether.core.signals import AbortController
from tether.kernel import Context
from tether.plugins.jobs import JobRegistry
from tether.plugins.jobs import plugin as jobs_plugin
from tether.plugins.shell import bash as bash_plugin
from tether.plugins.shell import plugin as shell_plugin
from tether.tools import ToolFailure, ToolRuntime, UserMessage

from ..shell._support import call, marker, sleeping, text, until


@pytest.fixture
async def ctx(tmp_path: Path) -> AsyncIterator[Context]:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(shell_plugin, {"grace_ms": 200, "cwd": str(tmp_path)})
    await ctx.plugin(jobs_plugin)
    await ctx.plugin(bash_plugin)
    yield ctx
    await ctx.dispose()


async def background(ctx: Context, command: str, *, agent: object | None = None) -> str:
    result = await call(
        ctx,
        {"command": command, "description": "In background", "run_in_background": True},
        agent=agent,
    )
    rendered = text(result)
    assert rendered.startswith("started background job ")
    return rendered.removeprefix("started background job ")


async def test_a_background_command_returns_a_job_id_and_its_output_later(ctx: Context) -> None:
    job_id = await background(ctx, "echo one; echo two >&2")
    result = await call(ctx, {"job_id": job_id, "wait": True}, name="job_output")

    assert job_id == "bash-1"
    assert text(result) == "one\n[stderr]\ntwo\n[status: completed, exit code: 0]"


async def test_a_wait_that_runs_out_is_a_success_and_the_job_keeps_running(
    ctx: Context,
) -> None:
    duration = marker()
    job_id = await background(ctx, f"echo started; sleep {duration}")
    await until(lambda: len(sleeping(duration)) == 1)
    result = await call(ctx, {"job_id": job_id, "wait_ms": 50}, name="job_output")

    assert not result.is_error
    assert text(result).endswith("[status: running]")
    assert len(sleeping(duration)) == 1


async def test_reads_are_consuming(ctx: Context) -> None:
    job_id = await background(ctx, "echo once")
    first = await call(ctx, {"job_id": job_id, "wait": True}, name="job_output")
    second = await call(ctx, {"job_id": job_id}, name="job_output")

    assert text(first) == "once\n[status: completed, exit code: 0]"
    assert text(second) == "(no new output)\n[status: completed, exit code: 0]"


async def test_job_kill_stops_the_process_group(ctx: Context) -> None:
    duration = marker()
    job_id = await background(ctx, f"sleep {duration} & wait")
    await until(lambda: len(sleeping(duration)) == 1)

    killed = await call(ctx, {"job_id": job_id, "reason": "not needed"}, name="job_kill")
    settled = await call(ctx, {"job_id": job_id, "wait": True}, name="job_output")
    again = await call(ctx, {"job_id": job_id}, name="job_kill")

    assert text(killed) == f"requested cancellation of job {job_id}"
    assert text(settled) == "(no new output)\n[status: killed, signal: SIGTERM]"
    assert text(again) == f"job {job_id} had already finished [status: killed, signal: SIGTERM]"
    assert sleeping(duration) == []


async def test_job_list_shows_the_callers_jobs(ctx: Context) -> None:
    assert text(await call(ctx, {}, name="job_list")) == "(no background jobs)"
    first = await background(ctx, "true")
    await call(ctx, {"job_id": first, "wait": True}, name="job_output")
    second = await background(ctx, "sleep   60\n# two lines")

    listing = text(await call(ctx, {}, name="job_list"))

    assert listing == (
        f"{first} [bash] completed — true\n{second} [bash] running — sleep 60 # two lines"
    )


async def test_another_sessions_job_is_out_of_reach(ctx: Context) -> None:
    alice, bob = SimpleNamespace(id="alice"), SimpleNamespace(id="bob")
    job_id = await background(ctx, "sleep 60", agent=alice)

    result = await call(ctx, {"job_id": job_id}, name="job_output", agent=bob)
    listing = await call(ctx, {}, name="job_list", agent=bob)

    assert text(result) == f"Error: job {job_id} belongs to another session"
    assert text(listing) == "(no background jobs)"


async def test_a_caller_abort_mid_wait_is_aborted_and_consumes_nothing(
    ctx: Context, tmp_path: Path
) -> None:
    echoed = tmp_path / "echoed"
    job_id = await background(ctx, f"echo kept; touch {echoed}; sleep 60")
    await until(echoed.exists)
    controller = AbortController()
    pending = asyncio.ensure_future(
        call(ctx, {"job_id": job_id, "wait": True}, name="job_output", signal=controller.signal)
    )
    await until(lambda: ctx.jobs._jobs[job_id].waiters == 1)  # the call is inside its wait
    controller.abort()
    result = await pending
    after = await call(ctx, {"job_id": job_id, "wait_ms": 1}, name="job_output")

    assert isinstance(result, ToolFailure)
    assert result.code == "ABORTED"
    assert text(after) == "kept\n[status: running]"


async def test_unknown_and_empty_job_ids_are_refused(ctx: Context) -> None:
    unknown = await call(ctx, {"job_id": "bash-9"}, name="job_output")
    empty = await call(ctx, {"job_id": ""}, name="job_kill")

    assert isinstance(unknown, ToolFailure)
    assert unknown.code == "UNKNOWN_JOB"
    assert text(unknown) == "Error: unknown job bash-9"
    assert text(empty) == 'Error: invalid job_id: expected a non-empty string, got ""'


async def test_disposing_the_jobs_plugin_kills_every_job(tmp_path: Path) -> None:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(shell_plugin, {"grace_ms": 200, "cwd": str(tmp_path)})
    jobs = await ctx.plugin(jobs_plugin)
    await ctx.plugin(bash_plugin)
    stubborn, plain = marker(), marker()
    await background(ctx, f"trap '' TERM; sleep {stubborn} & wait")
    await background(ctx, f"sleep {plain} & wait")
    await until(lambda: len(sleeping(stubborn)) == len(sleeping(plain)) == 1)

    await jobs.dispose()

    assert sleeping(stubborn) == sleeping(plain) == []
    assert ctx.get("jobs") is None
    await ctx.dispose()


async def test_the_job_limit_applies_to_background_bash(tmp_path: Path) -> None:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(shell_plugin, {"grace_ms": 200, "cwd": str(tmp_path)})
    await ctx.plugin(jobs_plugin, {"max_concurrent_jobs_per_owner": 1})
    await ctx.plugin(bash_plugin)
    await background(ctx, "sleep 60")

    refused = await call(
        ctx, {"command": "sleep 60", "description": "x", "run_in_background": True}
    )

    assert text(refused).startswith("Error: background job limit reached for this owner (limit: 1)")
    assert isinstance(ctx.jobs, JobRegistry)
    assert len(ctx.jobs.list()) == 1
    await ctx.dispose()


async def test_an_owner_is_notified_when_its_job_finishes_unreported(ctx: Context) -> None:
    inbox: list[UserMessage] = []
    owner = SimpleNamespace(id="alice", inject=inbox.append)
    job_id = await background(ctx, "exit 3", agent=owner)

    await until(lambda: bool(inbox))

    (notice,) = inbox
    assert [block["text"] for block in notice.content] == [
        f"background job {job_id} (bash: exit 3) finished [status: completed, exit code: 3]. "
        "Read its output with job_output."
    ]
    assert notice.source["form"] == "notice"


async def test_no_job_tool_declares_a_timeout(ctx: Context) -> None:
    for name in ("job_output", "job_list", "job_kill", "bash"):
        definition = ctx.tools.get(name)
        assert definition is not None
        assert definition.timeout_ms is None
