"""Helpers for Code Mode tests: a context with the real sandbox, real shell and fs tools, a
sleeping concurrency-safe tool that records when it ran, and one `run_code` call."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from tether import AbortController, AbortSignal
from tether.kernel import Context
from tether.plugins import timeout_policy
from tether.plugins.code_mode.sandbox import MontyRuntime
from tether.plugins.code_mode.seam import CodeBudgets
from tether.plugins.code_mode.tool import run_code_tool
from tether.plugins.fs import plugin as fs_plugin
from tether.plugins.shell import bash as bash_plugin
from tether.plugins.shell import plugin as shell_plugin
from tether.tools import (
    ToolExecution,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolFailure,
    ToolOutput,
    ToolRunContext,
    ToolRuntime,
    define_tool,
)

__all__ = ["Lab", "NapArgs", "code_of", "lab", "text_of"]


class NapArgs(BaseModel):
    ms: float
    label: str = ""


@dataclass
class Lab:
    """The mounted context and what the test tools and the runtime observed."""

    ctx: Context
    project: Path
    worker_pids: list[int] = field(default_factory=list)
    naps: dict[str, tuple[float, float]] = field(default_factory=dict)
    results: list[tuple[ToolExecution, ToolExecutionResult]] = field(default_factory=list)

    async def run(
        self,
        code: str,
        *,
        signal: AbortSignal | None = None,
        agent: object | None = None,
        call_id: str = "rc",
        description: str = "Run a test program",
    ) -> ToolExecutionResult:
        result: ToolExecutionResult = await self.ctx.tools.execute(
            ToolExecutionInput(
                call_id=call_id,
                name="run_code",
                arguments={"code": code, "description": description},
                signal=AbortController().signal if signal is None else signal,
                agent=agent,
            )
        )
        return result

    def inner(self) -> list[tuple[str, str | None]]:
        """(call_id, code) of every published nested result, in publication order."""
        return [
            (e.call_id, r.code if isinstance(r, ToolFailure) else None)
            for e, r in self.results
            if e.parent is not None
        ]


async def lab(
    project: Path,
    *,
    budgets: Mapping[str, float] | None = None,
    max_parallel_calls: int = 10,
    timeout_ms: float | None = None,
    nap_timeout_ms: float | None = None,
) -> Lab:
    """tools, the timeout policy, shell + bash + fs rooted at `project`, `nap`, and run_code
    with a real Monty runtime whose worker pids are recorded."""
    ctx = Context()
    found = Lab(ctx, project)
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(timeout_policy)
    await ctx.plugin(shell_plugin, {"grace_ms": 200, "cwd": str(project)})
    await ctx.plugin(bash_plugin, {"enable_run_in_background": False})
    await ctx.plugin(fs_plugin, {"root": str(project)})
    ctx.provide(
        "code_runtime",
        MontyRuntime(CodeBudgets(**(budgets or {})), on_worker=found.worker_pids.append),
    )

    async def nap(args: NapArgs, exec: ToolRunContext) -> str:
        began = time.monotonic()
        try:
            async with exec.signal.cancels():
                await asyncio.sleep(args.ms / 1000)
        finally:
            found.naps[args.label or exec.call_id] = (began, time.monotonic())
        return f"slept {args.label}"

    ctx.tools.register(
        define_tool(
            name="nap",
            description="Sleep for `ms` milliseconds.",
            parameters=NapArgs,
            output=ToolOutput(schema=str),
            execute=nap,
            is_concurrency_safe=lambda _args: True,
            timeout_ms=nap_timeout_ms,
        )
    )
    ctx.tools.register(  # as the code-mode plugin does
        run_code_tool(ctx, max_parallel_calls=max_parallel_calls, timeout_ms=timeout_ms),
        reserved=True,
    )
    ctx.on("tools/result", lambda exec, result: found.results.append((exec, result)))
    return found


def text_of(result: ToolExecutionResult) -> str:
    return "".join(str(block.get("text", "")) for block in result.content)


def code_of(result: ToolExecutionResult) -> str | None:
    return result.code if isinstance(result, ToolFailure) else None
