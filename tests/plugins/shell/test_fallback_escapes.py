"""No process escapes a bash command — the fallback, where namespaces cannot be created (issue
11 §7; issue 24: the kernel's containment is `test_containment.py`), with real processes.

Every test here runs uncontained (`TETHER_BWRAP` empty, full access), so tether's own bookkeeping
holds the guarantee. Contract: when a command ends — it finishes, times out, is aborted, or (in the
background) is killed or finishes — every process it started that still runs is stopped before the
run returns or the background process settles, including processes that left its process group and
were re-parented (tether is their child subreaper): `setsid -f`, a double fork with `setsid`,
`nohup setsid ... &`, a `set -m` job, `disown` after `setsid`, and a plain `&` job. Tether reaps
the ones it adopted (no zombie is left). A background command's processes live until that command
ends; a foreground command finishing beside it does not touch them. An escaped process that exits
on its own while its command runs is reaped too, and being the subreaper never takes the exit
status of a child asyncio waits for.

Each test's escaped process is `sleep 60.<9 random digits>`, found by its exact argv.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tether.core.signals import AbortController, AbortSignal
from tether.kernel import Context
from tether.plugins.jobs import plugin as jobs_plugin
from tether.plugins.jobs.model import JobStatus
from tether.plugins.jobs.registry import JobRegistry
from tether.plugins.shell import LocalBashExecutor, ShellRequest
from tether.plugins.shell import bash as bash_plugin
from tether.plugins.shell import plugin as shell_plugin
from tether.tools import ToolRuntime

from ._support import call, exists, marker, sleeping, text, until
from .conftest import GRACE_MS


@pytest.fixture
def executor(fallback_executor: LocalBashExecutor) -> LocalBashExecutor:
    return fallback_executor


@pytest.fixture
async def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Context]:
    """Tools, jobs, bash and a shell on a machine without `bwrap` (full access)."""
    monkeypatch.setenv("TETHER_BWRAP", "")
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    config = {"grace_ms": GRACE_MS, "cwd": str(tmp_path), "sandbox": "danger-full-access"}
    await ctx.plugin(shell_plugin, config)
    await ctx.plugin(jobs_plugin)
    await ctx.plugin(bash_plugin)
    yield ctx
    await ctx.dispose()


PATTERNS = {
    "setsid -f": "setsid -f sleep {d}",
    "double fork with setsid": "(setsid sleep {d} &)",
    "nohup setsid": "nohup setsid sleep {d} > /dev/null 2>&1 &",
    "set -m job": "set -m; sleep {d} &",
    "disown after setsid": "setsid sleep {d} > /dev/null & disown",
    "plain background job": "sleep {d} > /dev/null &",
}


def escape(pattern: str, duration: str) -> str:
    """The pattern, then wait until its sleep runs and print that sleep's pid."""
    return (
        f"{PATTERNS[pattern].format(d=duration)}\n"
        f"until pid=$(pgrep -fx 'sleep {duration}'); do sleep 0.01; done; echo $pid"
    )


@pytest.mark.parametrize("pattern", PATTERNS)
async def test_no_process_a_command_started_survives_its_normal_finish(
    executor: LocalBashExecutor, pattern: str
) -> None:
    duration = marker()

    result = await executor.run(
        ShellRequest(command=escape(pattern, duration)), signal=AbortSignal.never()
    )

    assert (result.exit_code, result.timed_out, result.aborted) == (0, False, False)
    escaped = int(result.stdout.text.split()[-1])
    assert sleeping(duration) == []
    assert not exists(escaped)  # stopped and reaped: no zombie left in tether
    assert executor.subprocesses.live == 0


@pytest.mark.parametrize("pattern", PATTERNS)
async def test_no_process_a_command_started_survives_its_abort(
    executor: LocalBashExecutor, pattern: str
) -> None:
    duration = marker()
    controller = AbortController()
    run = asyncio.create_task(
        executor.run(
            ShellRequest(command=f"{escape(pattern, duration)}; sleep 30"),
            signal=controller.signal,
        )
    )
    await until(lambda: len(sleeping(duration)) == 1)
    (escaped,) = sleeping(duration)

    controller.abort()
    result = await run

    assert result.aborted
    assert sleeping(duration) == []
    assert not exists(escaped.pid)
    assert executor.subprocesses.live == 0


async def test_no_process_a_command_started_survives_its_timeout(
    executor: LocalBashExecutor,
) -> None:
    duration = marker()

    result = await executor.run(
        ShellRequest(command=f"{escape('setsid -f', duration)}; sleep 30", timeout_ms=1000),
        signal=AbortSignal.never(),
    )

    assert result.timed_out
    escaped = int(result.stdout.text.split()[-1])
    assert sleeping(duration) == []
    assert not exists(escaped)


async def test_a_process_that_traps_sigterm_is_killed_after_the_grace(
    executor: LocalBashExecutor,
) -> None:
    duration = marker()
    command = f"setsid -f bash -c \"trap '' TERM; sleep {duration}; true\""  # sleep ignores TERM

    result = await executor.run(
        ShellRequest(command=f"{command}\nuntil pgrep -fx 'sleep {duration}'; do sleep 0.01; done"),
        signal=AbortSignal.never(),
    )

    assert result.exit_code == 0
    assert not exists(int(result.stdout.text.split()[-1]))


async def test_a_background_commands_escaped_process_lives_until_it_is_killed(
    executor: LocalBashExecutor,
) -> None:
    duration = marker()
    background = await executor.start(
        ShellRequest(command=f"{escape('setsid -f', duration)}; sleep 30"),
        signal=AbortSignal.never(),
    )
    await until(lambda: len(sleeping(duration)) == 1)
    (escaped,) = sleeping(duration)

    finished = await executor.run(ShellRequest(command="true"), signal=AbortSignal.never())
    assert finished.exit_code == 0
    assert sleeping(duration) == [escaped]  # another command's end leaves it alone

    assert background.kill()
    await background.done

    assert sleeping(duration) == []
    assert not exists(escaped.pid)


async def test_a_background_commands_escaped_process_is_stopped_when_it_finishes(
    executor: LocalBashExecutor,
) -> None:
    duration = marker()
    background = await executor.start(
        ShellRequest(command=escape("setsid -f", duration)), signal=AbortSignal.never()
    )

    status = await background.done

    assert status.exit_code == 0
    escaped = int(background.read_output().delta.split()[-1])
    assert sleeping(duration) == []
    assert not exists(escaped)


async def test_an_escaped_process_that_exits_on_its_own_is_reaped_while_its_command_runs(
    executor: LocalBashExecutor,
) -> None:
    duration = f"2.{marker()[3:]}"  # seen alive by a look (every 0.5 s), then it exits
    background = await executor.start(
        ShellRequest(command=f"{escape('setsid -f', duration)}; sleep 30"),
        signal=AbortSignal.never(),
    )
    try:
        await until(lambda: len(sleeping(duration)) == 1)
        (escaped,) = sleeping(duration)

        await until(lambda: not exists(escaped.pid))  # exited, then reaped
    finally:
        background.kill()
        await background.done


async def test_a_child_asyncio_waits_for_keeps_its_exit_status(
    executor: LocalBashExecutor,
) -> None:
    duration = marker()
    escaping = asyncio.create_task(
        executor.run(
            ShellRequest(command=f"{escape('setsid -f', duration)}; sleep 0.5"),
            signal=AbortSignal.never(),
        )
    )
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import time, sys; time.sleep(0.3); sys.exit(7)"
    )

    assert await child.wait() == 7
    result = await escaping
    assert result.exit_code == 0
    assert sleeping(duration) == []


async def test_job_kill_stops_the_process_a_background_bash_job_escaped_to(ctx: Context) -> None:
    duration = marker()
    command = f"setsid -f sleep {duration}; sleep 30"
    started = await call(
        ctx, {"command": command, "description": "escape", "run_in_background": True}
    )
    assert text(started) == "started background job bash-1"
    await until(lambda: len(sleeping(duration)) == 1)
    (escaped,) = sleeping(duration)
    jobs = ctx.get("jobs")
    assert isinstance(jobs, JobRegistry)

    await call(ctx, {"job_id": "bash-1"}, name="job_kill")
    await until(lambda: jobs.get("bash-1").status.terminal)

    assert jobs.get("bash-1").status is JobStatus.KILLED
    assert sleeping(duration) == []
    assert not exists(escaped.pid)
