"""Every process a command starts ends with it: the kernel's containment (issue 24 §1), with real
processes.

Contract: a command runs in its own PID namespace under `bwrap` (any sandbox mode, full access
included). When it ends — it finishes, it is aborted, its timeout fires, it is killed in the
background — every process it started is gone before the run returns or the background process
settles, by construction: the namespace's init exits with the command's leader and the kernel
kills the rest. No escape survives: `setsid -f`, a double fork, a cleared environment (`env -i`),
`nohup`, a `set -m` job, `disown`, a daemonizing Python. Nothing is looked for (no tag, no
subreaper), and the exit status is the command's (128 + N for a signal it did not get from
tether). A SIGKILLed tether is `test_killed_tether.py`.

Each escaped process is `sleep 60.<9 random digits>`, found on the host by its exact argv.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import psutil
import pytest

from tether.core.signals import AbortController, AbortSignal
from tether.kernel import Context
from tether.plugins.jobs.model import JobStatus
from tether.plugins.jobs.registry import JobRegistry
from tether.plugins.shell import LocalBashExecutor, ShellRequest

from ...processes import group_members
from ._support import ESCAPES, call, marker, sleeping, text, until


def escape(pattern: str, duration: str) -> str:
    """The pattern, then wait until its sleep runs (inside the namespace) and say so, on stdout
    and in the file `escaped` of the workspace."""
    return (
        f"{ESCAPES[pattern].format(d=duration)}\n"
        f"until pgrep -fx 'sleep {duration}' > /dev/null; do sleep 0.01; done\n"
        "echo escaped; touch escaped"
    )


async def test_a_contained_command_carries_no_bookkeeping(executor: LocalBashExecutor) -> None:
    support = executor.subprocesses.support
    assert (support.contain, support.sandbox, support.problem) == (True, True, None)

    result = await executor.run(
        ShellRequest(command="env | grep -c ^TETHER_PROCESS_TAG="), signal=AbortSignal.never()
    )

    assert result.stdout.text == "0\n"  # no tag to follow it by: the kernel holds it


@pytest.mark.parametrize("pattern", ESCAPES)
async def test_no_escape_survives_the_commands_normal_end(
    executor: LocalBashExecutor, pattern: str
) -> None:
    duration = marker()

    result = await executor.run(
        ShellRequest(command=escape(pattern, duration)), signal=AbortSignal.never()
    )

    assert (result.exit_code, result.stdout.text) == (0, "escaped\n"), result.stderr.text
    assert sleeping(duration) == []  # gone before the run returned
    assert executor.subprocesses.live == 0


@pytest.mark.parametrize("pattern", ESCAPES)
async def test_no_escape_survives_an_abort(
    executor: LocalBashExecutor, pattern: str, tmp_path: Path
) -> None:
    duration = marker()
    controller = AbortController()
    run = asyncio.create_task(
        executor.run(
            ShellRequest(command=f"{escape(pattern, duration)}; sleep 30"),
            signal=controller.signal,
        )
    )
    await until((tmp_path / "escaped").exists, within_s=30)
    assert len(sleeping(duration)) == 1

    controller.abort()
    result = await run

    assert result.aborted
    assert result.stdout.text == "escaped\n"
    assert sleeping(duration) == []


@pytest.mark.parametrize("pattern", ESCAPES)
async def test_no_escape_survives_the_timeout(executor: LocalBashExecutor, pattern: str) -> None:
    duration = marker()

    result = await executor.run(
        ShellRequest(command=f"{escape(pattern, duration)}; sleep 30", timeout_ms=3000),
        signal=AbortSignal.never(),
    )

    assert result.timed_out
    assert result.stdout.text == "escaped\n"  # it had escaped before the deadline
    assert sleeping(duration) == []


async def test_a_command_that_ignores_sigterm_is_killed_after_the_grace(
    executor: LocalBashExecutor,
) -> None:
    duration = marker()
    controller = AbortController()
    run = asyncio.create_task(
        executor.run(
            ShellRequest(command=f"trap '' TERM; sleep {duration}"), signal=controller.signal
        )
    )
    await until(lambda: len(sleeping(duration)) == 1)
    (sleeper,) = sleeping(duration)
    group = os.getpgid(sleeper.pid)  # the namespace's init leads it (pid 1 inside)

    controller.abort()
    result = await run

    assert (result.aborted, result.signal_name, result.exit_code) == (True, "SIGKILL", None)
    assert sleeping(duration) == []
    # bwrap was killed while its init ran: the result waited for init's own exit too
    assert group_members(group) == []


async def test_a_command_that_handles_sigterm_gets_it_and_exits_in_its_own_way(
    executor: LocalBashExecutor, tmp_path: Path
) -> None:
    controller = AbortController()
    command = "trap 'echo cleaning up; exit 5' TERM; touch ready; sleep 30 & wait"
    run = asyncio.create_task(executor.run(ShellRequest(command=command), signal=controller.signal))
    await until((tmp_path / "ready").exists, within_s=30)

    controller.abort()
    result = await run

    assert (result.aborted, result.exit_code, result.signal_name) == (True, 5, None)
    assert result.stdout.text == "cleaning up\n"


async def test_a_background_commands_processes_live_until_it_is_killed(
    executor: LocalBashExecutor,
) -> None:
    duration = marker()
    background = await executor.start(
        ShellRequest(command=f"{escape('setsid -f', duration)}; sleep 30"),
        signal=AbortSignal.never(),
    )
    await until(lambda: len(sleeping(duration)) == 1, within_s=30)
    (escaped,) = sleeping(duration)

    finished = await executor.run(ShellRequest(command="true"), signal=AbortSignal.never())
    assert finished.exit_code == 0
    assert sleeping(duration) == [escaped]  # another command's end leaves it alone

    assert background.kill()
    await background.done

    assert sleeping(duration) == []


async def test_a_background_commands_escapes_end_when_it_finishes(
    executor: LocalBashExecutor,
) -> None:
    duration = marker()
    background = await executor.start(
        ShellRequest(command=escape("double fork", duration)), signal=AbortSignal.never()
    )

    status = await background.done

    assert status.exit_code == 0
    assert background.read_output().delta == "escaped\n"
    assert sleeping(duration) == []


async def test_job_kill_ends_the_namespace_of_a_background_bash_job(ctx: Context) -> None:
    duration = marker()
    command = f"setsid -f env -i sleep {duration}; sleep 30"
    started = await call(
        ctx, {"command": command, "description": "escape", "run_in_background": True}
    )
    assert text(started) == "started background job bash-1"
    await until(lambda: len(sleeping(duration)) == 1, within_s=30)
    jobs = ctx.get("jobs")
    assert isinstance(jobs, JobRegistry)

    await call(ctx, {"job_id": "bash-1"}, name="job_kill")
    await until(lambda: jobs.get("bash-1").status.terminal)

    assert jobs.get("bash-1").status is JobStatus.KILLED
    assert sleeping(duration) == []


async def test_a_command_sees_only_its_own_processes(executor: LocalBashExecutor) -> None:
    result = await executor.run(
        ShellRequest(
            command=f"ls /proc | grep -qx {os.getpid()} && echo seen; ps -e -o pid= | wc -l"
        ),
        signal=AbortSignal.never(),
    )

    assert "seen" not in result.stdout.text
    assert int(result.stdout.text) <= 5  # a header, then init, bash, ps, wc


async def test_a_command_killed_while_bwrap_sets_it_up_leaves_nothing_behind(
    executor: LocalBashExecutor,
) -> None:
    """bwrap's child waits for bwrap to finish the user namespace before its parent-death signal
    is set: killing bwrap alone then would strand it. Killed at once, 20 times over."""
    duration = marker()
    statuses = []
    for _ in range(20):
        process = await executor.start(
            ShellRequest(command=f"sleep {duration}"), signal=AbortSignal.never()
        )
        process.kill()
        statuses.append((await process.done).signal_name)

    assert statuses == ["SIGTERM"] * 20
    await until(lambda: marked(duration) == [], within_s=5)


def marked(token: str) -> list[int]:
    """The pids of live processes whose command line mentions `token` (bwrap's included)."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.status() != psutil.STATUS_ZOMBIE and token in " ".join(process.cmdline()):
                found.append(process.pid)
        except psutil.Error:
            continue
    return found
