"""The process API of tool bodies, `run_process` (issue 24 §3), with real processes and the real
pipeline.

Contract: a tool body that runs a program with `run_process(..., signal=exec.signal)` gets what
`bash` gets. The program is contained (nothing it starts outlives the call) and sandboxed like
`bash` by default (`workspace-write` in its `cwd`). When the call is aborted its processes are
gone before the result, which is `ABORTED`; when the tool's `timeout_ms` expires the result is
`TOOL_TIMEOUT` at once, not when the program would have ended. A string is a `bash -c` command,
a sequence an argv. Its own `timeout_ms` is a result (`timed_out`). An aborted signal starts
nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from tether import AbortController, AbortError, AbortSignal, ToolRunContext, run_process
from tether.kernel import Context
from tether.plugins import timeout_policy
from tether.plugins.sandbox import SandboxPolicy
from tether.tools import (
    ToolExecutionInput,
    ToolExecutionResult,
    ToolOutput,
    ToolRuntime,
    define_tool,
)

from ._support import marker, sleeping, until


class Command(BaseModel):
    command: str


@pytest.fixture
async def ctx(tmp_path: Path) -> AsyncIterator[Context]:
    """A registry with the timeout policy and one tool, `run`, whose body is `run_process` in
    `tmp_path` with a 200 ms grace; `slow` is the same with `timeout_ms=500`."""
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(timeout_policy)

    async def body(args: Command, exec: ToolRunContext) -> str:
        result = await run_process(args.command, signal=exec.signal, cwd=tmp_path, grace_ms=200)
        return result.stdout.text + (f"[exit {result.exit_code}]" if result.exit_code else "")

    for name, timeout_ms in (("run", None), ("slow", 500)):
        ctx.tools.register(
            define_tool(
                name=name,
                description="Run a command.",
                parameters=Command,
                output=ToolOutput(schema=str),
                execute=body,
                timeout_ms=timeout_ms,
            )
        )
    yield ctx
    await ctx.dispose()


async def call(
    ctx: Context, command: str, *, name: str = "run", signal: AbortSignal | None = None
) -> ToolExecutionResult:
    result: ToolExecutionResult = await ctx.tools.execute(
        ToolExecutionInput(
            call_id="c1",
            name=name,
            arguments={"command": command},
            signal=signal if signal is not None else AbortController().signal,
        )
    )
    return result


async def test_a_body_gets_the_programs_output(ctx: Context) -> None:
    result = await call(ctx, "echo hello; echo oops >&2; exit 3")

    assert result.to_json()["content"] == [{"type": "text", "text": "hello\n[exit 3]"}]


async def test_nothing_a_program_started_outlives_the_call(ctx: Context) -> None:
    duration = marker()

    result = await call(
        ctx, f"setsid -f sleep {duration}; until pgrep -fx 'sleep {duration}'; do :; done"
    )

    assert not result.is_error
    assert sleeping(duration) == []


async def test_an_aborted_call_is_aborted_and_its_processes_are_gone(ctx: Context) -> None:
    duration = marker()
    controller = AbortController()
    pending = asyncio.create_task(
        call(ctx, f"setsid -f sleep {duration}; sleep {duration}", signal=controller.signal)
    )
    await until(lambda: len(sleeping(duration)) == 2, within_s=30)

    controller.abort()
    result = await pending

    assert result.to_json()["error"] == {
        "message": "tool call aborted",
        "info": {"name": "AbortError", "code": "ABORTED"},
    }
    assert sleeping(duration) == []


async def test_the_tools_timeout_is_tool_timeout_at_once_not_when_the_program_ends(
    ctx: Context,
) -> None:
    duration = marker()
    began = time.monotonic()

    result = await call(ctx, f"trap '' TERM; sleep {duration}", name="slow")

    assert result.to_json()["error"] == {
        "message": "tool call timed out after 500ms",
        "info": {"name": "ToolTimeoutError", "code": "TOOL_TIMEOUT"},
    }
    assert sleeping(duration) == []
    assert time.monotonic() - began < 30  # the program would run 60 s: it did not


async def test_a_program_writes_only_in_its_cwd_by_default(tmp_path: Path) -> None:
    inside, outside = tmp_path / "ws", Path.home() / f".tether-test-{marker()}"
    inside.mkdir()

    result = await run_process(f"touch made {outside}", signal=AbortSignal.never(), cwd=inside)

    assert "Read-only file system" in result.stderr.text
    assert (inside / "made").exists()
    assert not outside.exists()


async def test_full_access_is_asked_for_explicitly(tmp_path: Path) -> None:
    target = tmp_path / "outside" / "made"
    target.parent.mkdir()

    result = await run_process(
        ["touch", str(target)],
        signal=AbortSignal.never(),
        cwd=tmp_path / "outside",
        sandbox="danger-full-access",
    )

    assert (result.exit_code, target.exists()) == (0, True)


async def test_a_sequence_is_an_argv_never_a_shell_line(tmp_path: Path) -> None:
    result = await run_process(
        ["echo", "$HOME; rm -rf /"], signal=AbortSignal.never(), cwd=tmp_path
    )

    assert result.stdout.text == "$HOME; rm -rf /\n"


async def test_its_own_timeout_is_a_result(tmp_path: Path) -> None:
    duration = marker()

    result = await run_process(
        f"sleep {duration}", signal=AbortSignal.never(), cwd=tmp_path, timeout_ms=300
    )

    assert (result.timed_out, result.signal_name, result.timeout_ms) == (True, "SIGTERM", 300)
    assert sleeping(duration) == []


async def test_network_access_is_a_policy_too(tmp_path: Path) -> None:
    policy = SandboxPolicy(network_access=True)
    script = "import socket; socket.socket(socket.AF_UNIX); print('unix sockets allowed')"

    result = await run_process(
        ["python3", "-c", script], signal=AbortSignal.never(), cwd=tmp_path, sandbox=policy
    )

    assert result.stdout.text == "unix sockets allowed\n"


async def test_an_aborted_signal_starts_nothing(tmp_path: Path) -> None:
    controller = AbortController()
    controller.abort("stop")

    with pytest.raises(AbortError):
        await run_process(["touch", "made"], signal=controller.signal, cwd=tmp_path)
    assert not (tmp_path / "made").exists()


async def test_bad_arguments_are_refused_naming_the_field(tmp_path: Path) -> None:
    never = AbortSignal.never()
    with pytest.raises(ValueError, match=r"^run_process: command must be"):
        await run_process([], signal=never, cwd=tmp_path)
    with pytest.raises(ValueError, match=r"^run_process: timeout_ms must be a positive number"):
        await run_process("true", signal=never, cwd=tmp_path, timeout_ms=0)
    with pytest.raises(ValueError, match=r"^run_process: grace_ms must be"):
        await run_process("true", signal=never, cwd=tmp_path, grace_ms=-1)
