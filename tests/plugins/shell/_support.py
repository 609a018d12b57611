"""Helpers for tests that run real processes: liveness as the OS reports it, and bounded polls."""

from __future__ import annotations

import asyncio
import secrets
import shlex
import time
from collections.abc import Callable
from pathlib import Path

import psutil

from tether.core.signals import AbortController, AbortSignal
from tether.kernel import Context
from tether.plugins.sandbox import KernelSupport
from tether.tools import ToolExecutionInput, ToolExecutionResult

from ...patience import PATIENCE_S
from ...users import PYTHON_FOR_ALL

UNCONTAINED = KernelSupport(None, False, False, False, "no namespaces in this test")
"""What a machine without namespaces offers: `SubprocessService(support=UNCONTAINED)` runs the
fallback (subreaper, tags, orphan ledger) and refuses sandboxed commands."""


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (an unreaped dead process counts as gone)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


async def until(condition: Callable[[], bool], *, within_s: float = PATIENCE_S) -> None:
    """Poll a real condition (bounded); fail if it does not hold in time."""
    end = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"condition not met within {within_s}s")
        await asyncio.sleep(0.005)


def pids(path: Path) -> list[int]:
    """The pids a command wrote to `path`, one per line (none yet: empty)."""
    try:
        return [int(line) for line in path.read_text().split()]
    except FileNotFoundError:
        return []


async def call(
    ctx: Context,
    arguments: dict[str, object],
    *,
    name: str = "bash",
    signal: AbortSignal | None = None,
    agent: object | None = None,
) -> ToolExecutionResult:
    """Execute one tool call with a fresh caller signal unless one is given."""
    result: ToolExecutionResult = await ctx.tools.execute(
        ToolExecutionInput(
            call_id="c1",
            name=name,
            arguments=arguments,
            signal=AbortController().signal if signal is None else signal,
            agent=agent,
        )
    )
    return result


def text(result: ToolExecutionResult) -> str:
    """The single text block of a result."""
    (block,) = result.content
    value = block["text"]
    assert isinstance(value, str)
    return value


def marker() -> str:
    """A `sleep` duration no other process uses: `60.<9 random digits>` (argv identifies it)."""
    return f"60.{secrets.randbelow(10**9):09d}"


def sleeping(duration: str) -> list[psutil.Process]:
    """The live (non-zombie) processes whose argv is exactly `sleep <duration>`."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.cmdline() == ["sleep", duration] and alive(process.pid):
                found.append(process)
        except psutil.Error:
            continue
    return found


def exists(pid: int) -> bool:
    """The pid names any process at all, a zombie included (false once it has been reaped)."""
    return psutil.pid_exists(pid)


_DAEMON = (
    "import os, sys\n"
    "if os.fork(): sys.exit(0)\n"
    "os.setsid()\n"
    "if os.fork(): sys.exit(0)\n"
    "fd = os.open(os.devnull, os.O_RDWR)\n"
    "[os.dup2(fd, n) for n in (0, 1, 2)]\n"
    "os.execvp('sleep', ['sleep', sys.argv[1]])\n"
)

ESCAPES: dict[str, str] = {
    "setsid -f": "setsid -f sleep {d}",
    "double fork": "(setsid sleep {d} &)",
    "env -i": "setsid -f env -i sleep {d}",
    "nohup": "nohup sleep {d} > /dev/null 2>&1 &",
    "set -m job": "set -m; sleep {d} &",
    "disown": "sleep {d} > /dev/null 2>&1 & disown",
    "daemonizing python": f"{PYTHON_FOR_ALL} -c {shlex.quote(_DAEMON)} {{d}}",
}
"""Every way out of a command the issue names, each starting `sleep <d>` (a Python every user
can run for the daemon: the suite's own may be under root's home)."""
