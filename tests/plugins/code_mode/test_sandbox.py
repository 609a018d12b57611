"""`MontyRuntime` (the `ctx.code_runtime` seam, spec §8.2) with hand-made bindings.

Contract: `run()` returns a result for every outcome and the worker process is gone afterwards;
budgets and endings map onto the failure kinds (`timeout`, `abort`, `worker-exit`,
`invalid-output`, `output-limit`, `exception`); binding calls are answered as futures, so the
program keeps running while they are pending.
"""

from __future__ import annotations

import asyncio
import os
import signal

from tether import AbortController
from tether.core.json import JsonValue
from tether.plugins.code_mode.sandbox import MontyRuntime
from tether.plugins.code_mode.seam import (
    BindingRejected,
    CodeBudgets,
    CodeRunError,
    CodeRunResult,
    ToolBindings,
)

from ..shell._support import alive


def echo_bindings(*names: str) -> ToolBindings:
    def call(name: str, args: object, *, alone: bool = False) -> asyncio.Future[JsonValue]:
        answer: asyncio.Future[JsonValue] = asyncio.get_running_loop().create_future()
        if name == "fail":
            answer.set_exception(BindingRejected("it failed"))
        else:
            answer.set_result({"name": name, "args": args})  # type: ignore[dict-item]
        return answer

    return ToolBindings(names or ("echo", "fail", "my-tool"), call)


async def run(code: str, *, budgets: CodeBudgets | None = None) -> tuple[CodeRunResult, list[int]]:
    workers: list[int] = []
    runtime = MontyRuntime(budgets, on_worker=workers.append)
    result = await runtime.run(
        program=code, bindings=echo_bindings(), signal=AbortController().signal
    )
    return result, workers


async def test_a_completed_run_returns_logs_and_value_and_its_worker_is_gone() -> None:
    result, workers = await run(
        "print('a')\nx = await tools.echo({'k': 1})\ny = await tools['my-tool']([])\nreturn [x, y]"
    )

    assert result == CodeRunResult(
        ("a",),
        [{"name": "echo", "args": {"k": 1}}, {"name": "my-tool", "args": []}],
        True,
    )
    assert [alive(pid) for pid in workers] == [False]


async def test_a_rejected_binding_raises_runtime_error_with_the_name_first() -> None:
    result, _ = await run(
        "try:\n    await tools.fail({})\nexcept ToolCallError as e:\n    return str(e)"
    )

    assert result.value == "fail: it failed"


async def test_a_value_that_is_not_lossless_json_is_invalid_output() -> None:
    result, _ = await run("return (1, 2)")

    assert result.error == CodeRunError(
        "invalid-output",
        "program completion must be lossless JSON: value at $ is a tuple, not JSON",
    )


async def test_output_past_the_cap_is_output_limit() -> None:
    result, workers = await run(
        "while True:\n    print('x' * 100)", budgets=CodeBudgets(max_output_bytes=1000)
    )

    assert result.error == CodeRunError("output-limit", "program output exceeded 1000 bytes")
    assert [alive(pid) for pid in workers] == [False]


async def test_a_returned_value_counts_against_the_output_cap() -> None:
    result, _ = await run("return 'y' * 2000", budgets=CodeBudgets(max_output_bytes=1000))

    assert result.error == CodeRunError("output-limit", "program output exceeded 1000 bytes")


async def test_the_memory_budget_is_enforced_in_the_sandbox() -> None:
    result, _ = await run(
        "x = []\nwhile True:\n    x.append('abcdefgh' * 1000)", budgets=CodeBudgets(max_memory_mb=8)
    )

    assert result.error is not None
    assert result.error.kind == "exception"
    assert "MemoryError: memory limit exceeded" in result.error.message


async def test_an_abort_while_the_sandbox_is_busy_kills_the_worker() -> None:
    workers: list[int] = []
    runtime = MontyRuntime(on_worker=workers.append)
    caller = AbortController()
    asyncio.get_running_loop().call_later(0.2, caller.abort, "stop now")

    result = await runtime.run(
        program="while True:\n    pass", bindings=echo_bindings(), signal=caller.signal
    )

    assert result.error == CodeRunError("abort", "program aborted: stop now")
    assert [alive(pid) for pid in workers] == [False]


async def test_the_wall_clock_ceiling_names_itself() -> None:
    result, _ = await run(
        "import asyncio\nawait asyncio.sleep(5)", budgets=CodeBudgets(max_wall_ms=200)
    )

    assert result.error == CodeRunError("timeout", "wall-clock ceiling reached (200ms)")


async def test_a_worker_killed_from_outside_is_worker_exit() -> None:
    workers: list[int] = []

    def kill_soon(pid: int) -> None:
        workers.append(pid)
        asyncio.get_running_loop().call_later(0.2, os.kill, pid, signal.SIGKILL)

    runtime = MontyRuntime(on_worker=kill_soon)

    result = await runtime.run(
        program="while True:\n    pass", bindings=echo_bindings(), signal=AbortController().signal
    )

    assert result.error is not None
    assert result.error.kind == "worker-exit"


async def test_a_pre_aborted_signal_starts_no_worker() -> None:
    workers: list[int] = []
    caller = AbortController()
    caller.abort("early")

    result = await MontyRuntime(on_worker=workers.append).run(
        program="return 1", bindings=echo_bindings(), signal=caller.signal
    )

    assert result.error == CodeRunError("abort", "program aborted: early")
    assert workers == []


async def test_gathered_sleeps_overlap_and_are_timed_by_the_host() -> None:
    result, _ = await run(
        "import asyncio, time\n"
        "await asyncio.gather(asyncio.sleep(0.1), asyncio.sleep(0.1))\n"
        "time.sleep(0.05)\n"
        "return 'rested'"
    )

    assert result.value == "rested"
