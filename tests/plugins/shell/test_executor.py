"""Contract of the `ctx.shell` seam and the local bash executor (spec §3.2–3.3).

- `resolve` fills defaults (timeout 120000 ms capped at 600000, the output cap, the workdir)
  and rejects bad values with `bash-local: request.<field> must be a positive finite number`.
- `run` is bounded by `deadline(signal, timeout_ms, "BASH_TIMEOUT")`; `timed_out` and `aborted`
  say which fired first and are never both set; a command that kills itself reports neither.
  It rejects only when nothing could be run. Cancelling the task that awaits it still
  terminates and awaits the process group.
- `start` runs in the background with no timeout; `read_output` is a consuming cursor that
  keeps working after exit; `kill` is true once.
- The seam works without the `bash` tool: a context with only the `shell` plugin runs commands.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from tether.core.signals import AbortController, AbortSignal
from tether.core.timeout import TimeoutReason
from tether.kernel import Context, InvalidPluginConfig
from tether.plugins.shell import (
    LocalBashExecutor,
    OutputDelta,
    ProcessStatus,
    ShellConfig,
    ShellRequest,
    SpawnAbortedError,
)
from tether.plugins.shell import plugin as shell_plugin

from ._support import alive, marker, sleeping, until


def test_resolve_fills_the_defaults() -> None:
    resolved = LocalBashExecutor().resolve(ShellRequest(command="true"))

    assert (resolved.timeout_ms, resolved.stdout_max_bytes) == (120_000, 64_000)
    assert resolved.workdir == os.getcwd()
    assert (resolved.stdin, dict(resolved.env)) == (None, {})


def test_resolve_caps_the_timeout_and_applies_config_overrides(tmp_path: Path) -> None:
    executor = LocalBashExecutor(
        ShellConfig(cwd=str(tmp_path), timeout_ms=1000, max_timeout_ms=5000)
    )

    assert executor.resolve(ShellRequest(command="x")).timeout_ms == 1000
    assert executor.resolve(ShellRequest(command="x", timeout_ms=10**9)).timeout_ms == 5000
    assert executor.resolve(ShellRequest(command="x", workdir="sub")).workdir == str(
        tmp_path / "sub"
    )
    assert executor.resolve(ShellRequest(command="x", workdir="/abs")).workdir == "/abs"


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan")])
def test_resolve_rejects_a_timeout_that_is_not_positive_and_finite(bad: float) -> None:
    with pytest.raises(
        ValueError, match=r"^bash-local: request\.timeout_ms must be a positive finite number$"
    ):
        LocalBashExecutor().resolve(ShellRequest(command="x", timeout_ms=bad))


def test_resolve_rejects_a_bad_output_cap() -> None:
    with pytest.raises(
        ValueError,
        match=r"^bash-local: request\.stdout_max_bytes must be a positive finite number$",
    ):
        LocalBashExecutor().resolve(ShellRequest(command="x", stdout_max_bytes=0))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("timeout_ms", 0, "bash-local: timeout_ms must be a positive finite number"),
        ("max_output_bytes", -5, "bash-local: max_output_bytes must be a positive finite number"),
        ("grace_ms", 2**31, "bash-local: grace_ms must be no greater than 2147483647"),
    ],
)
def test_config_values_are_checked_at_load(field: str, value: float, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ShellConfig.model_validate({field: value})


async def test_the_shell_plugin_rejects_bad_config_when_mounted() -> None:
    ctx = Context()
    with pytest.raises(InvalidPluginConfig, match="bash-local: timeout_ms must be a positive"):
        await ctx.plugin(shell_plugin, {"timeout_ms": -1})
    await ctx.dispose()


async def test_the_seam_runs_commands_without_the_bash_tool(tmp_path: Path) -> None:
    ctx = Context()
    await ctx.plugin(shell_plugin, {"cwd": str(tmp_path)})
    result = await ctx.shell.run(
        ShellRequest(command="echo hi; exit 4"), signal=AbortSignal.never()
    )
    await ctx.dispose()

    assert (result.stdout.text, result.exit_code, result.signal_name) == ("hi\n", 4, None)
    assert (result.timed_out, result.aborted, result.timeout_ms) == (False, False, 120_000)


async def test_a_run_past_its_timeout_is_timed_out_not_aborted(
    executor: LocalBashExecutor,
) -> None:
    result = await executor.run(
        ShellRequest(command="sleep 60", timeout_ms=50), signal=AbortSignal.never()
    )

    assert (result.timed_out, result.aborted) == (True, False)
    assert (result.exit_code, result.signal_name, result.timeout_ms) == (None, "SIGTERM", 50)


async def _abort_once_started(controller: AbortController, marker: Path, *reason: object) -> None:
    """Abort once the command has written `marker` (it runs), not after a fixed delay."""
    await until(marker.exists)
    controller.abort(*reason)


async def test_a_run_aborted_by_its_caller_is_aborted_not_timed_out(
    executor: LocalBashExecutor, tmp_path: Path
) -> None:
    controller = AbortController()
    aborting = asyncio.ensure_future(_abort_once_started(controller, tmp_path / "started"))
    result = await executor.run(
        ShellRequest(command="touch started; sleep 60"), signal=controller.signal
    )
    await aborting

    assert (result.timed_out, result.aborted, result.signal_name) == (False, True, "SIGTERM")


async def test_an_upstream_timeout_reason_is_an_abort_not_our_timeout(
    executor: LocalBashExecutor, tmp_path: Path
) -> None:
    controller = AbortController()
    reason = TimeoutReason("TOOL_TIMEOUT", 50)
    aborting = asyncio.ensure_future(_abort_once_started(controller, tmp_path / "started", reason))
    result = await executor.run(
        ShellRequest(command="touch started; sleep 60"), signal=controller.signal
    )
    await aborting

    assert (result.timed_out, result.aborted) == (False, True)


async def test_a_contained_command_that_kills_itself_reports_128_plus_the_signal(
    executor: LocalBashExecutor,
) -> None:
    result = await executor.run(ShellRequest(command="kill -KILL $$"), signal=AbortSignal.never())

    assert (result.signal_name, result.exit_code) == (None, 137)  # as bwrap and shells say it
    assert (result.timed_out, result.aborted) == (False, False)


async def test_an_uncontained_command_that_kills_itself_reports_the_signal(
    fallback_executor: LocalBashExecutor,
) -> None:
    result = await fallback_executor.run(
        ShellRequest(command="kill -KILL $$"), signal=AbortSignal.never()
    )

    assert (result.signal_name, result.exit_code) == ("SIGKILL", None)
    assert (result.timed_out, result.aborted) == (False, False)


async def test_a_run_with_an_already_aborted_signal_spawns_nothing(
    executor: LocalBashExecutor, tmp_path: Path
) -> None:
    controller = AbortController()
    controller.abort()
    marker = tmp_path / "ran"

    with pytest.raises(SpawnAbortedError, match=r"^aborted before spawn: operation aborted$"):
        await executor.run(ShellRequest(command=f"touch {marker}"), signal=controller.signal)
    assert not marker.exists()


async def test_cancelling_the_awaiting_task_still_terminates_and_awaits_the_group(
    executor: LocalBashExecutor,
) -> None:
    duration = marker()
    task = asyncio.ensure_future(
        executor.run(
            ShellRequest(command=f"sleep {duration} & wait"),
            signal=AbortSignal.never(),
        )
    )
    await until(lambda: len(sleeping(duration)) == 1)
    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    assert sleeping(duration) == []
    assert executor.subprocesses.live == 0


async def test_the_child_gets_the_fixed_overlay_and_request_env(
    executor: LocalBashExecutor,
) -> None:
    result = await executor.run(
        ShellRequest(command='echo "$NO_COLOR $TERM $PAGER $GIT_PAGER $EXTRA"', env={"EXTRA": "x"}),
        signal=AbortSignal.never(),
    )

    assert result.stdout.text == "1 dumb cat cat x\n"


async def test_a_background_process_has_no_timeout(tmp_path: Path) -> None:
    executor = LocalBashExecutor(ShellConfig(timeout_ms=20, grace_ms=200, cwd=str(tmp_path)))
    process = await executor.start(
        ShellRequest(command="sleep 0.2; echo done"), signal=AbortSignal.never()
    )
    status = await process.done
    await executor.aclose()

    assert (status.exit_code, process.status) == (0, ProcessStatus.COMPLETED)
    assert process.read_output() == OutputDelta("done\n", False)


async def test_background_reads_are_consuming_and_work_after_exit(
    executor: LocalBashExecutor, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    process = await executor.start(
        ShellRequest(command=f"echo one; while [ ! -e {gate} ]; do sleep 0.01; done; echo two >&2"),
        signal=AbortSignal.never(),
    )
    seen = ""

    def read_some() -> bool:
        nonlocal seen
        seen += process.read_output().delta
        return seen != ""

    await until(read_some)
    gate.touch()
    await process.done

    assert seen == "one\n"
    assert process.read_output().delta == "[stderr]\ntwo\n"
    assert process.read_output().delta == ""


async def test_kill_is_true_once_and_the_process_settles_killed(
    executor: LocalBashExecutor,
) -> None:
    process = await executor.start(ShellRequest(command="sleep 60"), signal=AbortSignal.never())

    assert process.status is ProcessStatus.RUNNING
    assert process.kill() is True
    assert process.kill() is False
    status = await process.done
    assert (process.status, status.signal_name) == (ProcessStatus.KILLED, "SIGTERM")
    assert not alive(process.pid)


async def test_starting_with_an_aborted_signal_spawns_nothing(
    executor: LocalBashExecutor,
) -> None:
    controller = AbortController()
    controller.abort("stop")

    with pytest.raises(SpawnAbortedError, match=r"^aborted before spawn: stop$"):
        await executor.start(ShellRequest(command="true"), signal=controller.signal)
    assert executor.subprocesses.live == 0


async def test_closing_the_executor_kills_background_processes(
    executor: LocalBashExecutor,
) -> None:
    process = await executor.start(ShellRequest(command="sleep 60"), signal=AbortSignal.never())

    await executor.aclose()

    assert process.status is ProcessStatus.KILLED
    assert not alive(process.pid)
