"""Instructions per tool call, counted by valgrind: the pipeline's cost without the machine's noise.

Wall-clock numbers on a shared 2-core VM move by 2× between runs (`bench/pipeline.py` prints
them); instruction counts do not. This script runs itself under `valgrind --tool=callgrind` with
instrumentation off, and switches it on (with `callgrind_control`) only around CALLS calls of each
configuration, after a warm-up. It prints instructions per call for the task floors — `create_task`
+ await of a bare coroutine (a plain task), on 3.12+ the same with `eager_start=True`, and 100
plain tasks created then awaited (per task) — building the `ToolExecutionInput` alone;
`tools.execute` of the no-op tool with no plugins; with the timeout policy only; with one pre- or
one post-execute listener only; with all three (the configuration `bench/pipeline.py` times); and
pydantic-ai's `ToolManager.handle_call` for the same no-op tool (when pydantic-ai-slim is
installed: the `bench` dependency group). Ratios are to the task floor that matches what the
pipeline does (plain on 3.11, eager on 3.12+; `bench/README.md` says why). Needs valgrind (Debian
package `valgrind`).

    python bench/pipeline_instructions.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

CONFIGS: dict[str, tuple[bool, bool, bool]] = {  # dump name (one word) -> (policy, pre, post)
    "plain": (False, False, False),
    "policy": (True, False, False),
    "pre": (False, True, False),
    "post": (False, False, True),
    "full": (True, True, True),
}
LABELS = {
    "task": "create_task(body()) + await (plain)",
    "eager": "create_task(body(), eager_start=True)",
    "batched": "100 plain tasks, then awaited (each)",
    "input": "ToolExecutionInput(...) alone",
    "plain": "tools.execute, no plugins",
    "policy": "+ timeout policy only",
    "pre": "+ pre-execute listener only",
    "post": "+ post-execute listener only",
    "full": "+ timeout policy + pre + post",
    "peer": "pydantic-ai ToolManager.handle_call",
}


def _settle_heap() -> None:
    """Collect, then move every surviving object out of the collector's generations: a full
    collection of the imported heap landing inside one window would add ~10k instructions per
    call to that row alone. Collections of what the calls themselves allocate still count."""
    gc.collect()
    gc.freeze()


def _control(*args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(os.getpid())], capture_output=True, check=False)


async def _inner(calls: int) -> None:
    from pydantic import BaseModel

    from tether import (
        AbortController,
        Context,
        ToolExecutionInput,
        ToolOutput,
        ToolRuntime,
        define_tool,
    )
    from tether.plugins import timeout_policy

    class NoArgs(BaseModel):
        text: str = ""

    async def noop(args: NoArgs, exec: object) -> str:
        return "ok"

    async def build(policy: bool, pre: bool, post: bool) -> Context:
        ctx = Context()
        await ctx.plugin(ToolRuntime)
        if policy:
            await ctx.plugin(timeout_policy)

        async def pre_listener(exec: object, next: Callable[[], Awaitable[object]]) -> object:
            return await next()

        async def post_listener(
            exec: object, result: object, next: Callable[[], Awaitable[object]]
        ) -> object:
            return await next()

        if pre:
            ctx.on("tools/pre-execute", pre_listener)
        if post:
            ctx.on("tools/post-execute", post_listener)
        ctx.tools.register(
            define_tool(
                name="noop",
                description="does nothing",
                parameters=NoArgs,
                output=ToolOutput(schema=str),
                execute=noop,
                timeout_ms=60_000 if policy else None,
            )
        )
        return ctx

    caller = AbortController().signal
    args = {"text": "hi"}

    def make_input() -> ToolExecutionInput:
        return ToolExecutionInput(call_id="c", name="noop", arguments=args, signal=caller)

    for _ in range(100):
        make_input()
    _settle_heap()
    _control("-z")
    _control("-i", "on")
    for _ in range(calls):
        make_input()
    _control("-i", "off")
    _control("-d", "input")

    async def bare() -> str:
        return "ok"

    loop = asyncio.get_running_loop()
    for _ in range(100):
        await loop.create_task(bare())
    _settle_heap()
    _control("-z")
    _control("-i", "on")
    for _ in range(calls):
        await loop.create_task(bare())
    _control("-i", "off")
    _control("-d", "task")
    if sys.version_info >= (3, 12):
        for _ in range(100):
            await asyncio.Task(bare(), loop=loop, eager_start=True)  # type: ignore[call-arg]
        _settle_heap()
        _control("-z")
        _control("-i", "on")
        for _ in range(calls):
            await asyncio.Task(bare(), loop=loop, eager_start=True)  # type: ignore[call-arg]
        _control("-i", "off")
        _control("-d", "eager")
    _settle_heap()
    _control("-z")
    _control("-i", "on")
    for _ in range(calls // 100):
        tasks = [loop.create_task(bare()) for _ in range(100)]
        for task in tasks:
            await task
    _control("-i", "off")
    _control("-d", "batched")
    for name, config in CONFIGS.items():
        ctx = await build(*config)
        execute = ctx.tools.execute
        for _ in range(200):
            await execute(make_input())
        _settle_heap()
        _control("-z")
        _control("-i", "on")
        for _ in range(calls):
            await execute(make_input())
        _control("-i", "off")
        _control("-d", name)
        await ctx.dispose()
    from pipeline import pydantic_ai_manager  # bench/pipeline.py, beside this script

    peer = await pydantic_ai_manager()
    if peer is not None:
        await peer(200)
        _settle_heap()
        _control("-z")
        _control("-i", "on")
        await peer(calls)
        _control("-i", "off")
        _control("-d", "peer")
    _control("-z")
    _control("-i", "on")
    _control("-i", "off")
    _control("-d", "switching")


def _outer(calls: int) -> None:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("needs valgrind and callgrind_control (Debian package valgrind)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--instr-atstart=no",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--inner",
                "--calls",
                str(calls),
            ],
            check=True,
            capture_output=True,
        )
        totals: dict[str, int] = {}
        for dump in Path(tmp).glob("callgrind.out.*"):
            text = dump.read_text()
            name = re.search(r"^desc: Trigger: .*dump (\w+)", text, re.M)
            total = re.search(r"^totals: (\d+)$", text, re.M)
            if name is not None and total is not None:
                totals[name.group(1)] = int(total.group(1))
    overhead = totals.get("switching", 0)
    per_call = {name: (total - overhead) / calls for name, total in totals.items()}
    gauge = "eager" if "eager" in per_call else "task"
    print(f"python {sys.version.split()[0]}, {calls} calls per row, callgrind instruction counts")
    print(f"{'path':<40} {'instructions/call':>18} {'× gauge':>8}")
    for name, label in LABELS.items():
        if name in per_call:
            ratio = per_call[name] / per_call[gauge] if gauge in per_call else float("nan")
            print(f"{label:<40} {per_call[name]:>18,.0f} {ratio:>8.2f}")
        elif name != "eager":
            print(f"{label:<40} {'(no dump)':>18}")
    if "peer" in per_call and "full" in per_call:
        ratio = per_call["peer"] / per_call["full"]
        print(f"pydantic-ai's ToolManager path / tether's full pipeline: {ratio:.2f}× (≥ 3×)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.inner:
        asyncio.run(_inner(opts.calls))
    else:
        _outer(opts.calls)


if __name__ == "__main__":
    main()
