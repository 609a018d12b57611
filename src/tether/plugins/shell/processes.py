"""The process API of tool bodies: `run_process`, the contained, abort-aware way to run a program.

Owns `run_process(command, *, signal, ...)`. It is what `bash` does, for any tool: the process
runs contained (its own PID namespace under bwrap, ended with it, with its abort, and with tether
even when tether is SIGKILLed — `tether.plugins.sandbox`) and, by default, sandboxed like `bash`
(`workspace-write`: it may write in `cwd` and a private /tmp, and has no network; pass
`sandbox="danger-full-access"`, or a `SandboxPolicy` with `network_access=True`, for a tool that
needs more). Where namespaces cannot be created, full access runs under the subprocess service's
fallback and a sandbox refuses, like `bash`.

`signal` is the call's (`exec.signal`). When it aborts — the caller cancelled, or the tool's own
`timeout_ms` expired (the timeout policy) — the process group gets SIGTERM, the namespace SIGKILL
after `grace_ms`, and once nothing of it runs, `run_process` raises the signal's abort
(`signal.throw_if_aborted()`): the call ends `ABORTED`, or `TOOL_TIMEOUT` inside the tool's budget,
never after the program would have finished on its own. `timeout_ms` is a limit of the run
itself: it ends the process the same way but is a result (`timed_out`), not a raise.

    @tool(timeout_ms=60_000)
    async def run_tests(path: str, exec: ToolRunContext) -> str:
        result = await run_process(["pytest", "-q", path], signal=exec.signal, cwd=repo)
        return result.stdout.text

A string command runs with `bash -c`; a sequence is an argv, never shell-interpreted. Each call
has its own subprocess service, closed before `run_process` returns: nothing outlives it. Does not
own the `bash` tool's executor (`local.py`), whose settings come from the `shell` plugin.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final

from ...core.signals import AbortSignal
from ...core.timeout import MAX_TIMER_DELAY_MS, deadline
from ..sandbox.policy import SandboxMode, SandboxPolicy
from ._collect import CaptureLimits
from ._spec import SpawnSpec
from .local import run_result
from .records import ShellRunResult
from .subprocesses import SubprocessService, check_grace_ms

__all__ = ["PROCESS_TIMEOUT", "run_process"]

PROCESS_TIMEOUT: Final = "PROCESS_TIMEOUT"
"""The code of `run_process`'s own `timeout_ms` deadline."""

_NO_ENV: Final[Mapping[str, str | None]] = MappingProxyType({})


async def run_process(
    command: str | Sequence[str],
    *,
    signal: AbortSignal,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str | None] = _NO_ENV,
    stdin: str | bytes | None = None,
    timeout_ms: float | None = None,
    sandbox: SandboxPolicy | SandboxMode | str = SandboxMode.WORKSPACE_WRITE,
    max_output_bytes: int = 1_000_000,
    grace_ms: float = 3000,
) -> ShellRunResult:
    """Run `command` to its end, contained and sandboxed (see the module note), and return how
    it ended: `exit_code` / `signal_name`, `timed_out` (its own `timeout_ms`), and the tail of
    stdout and stderr (`max_output_bytes` each; `truncated` says when the head was dropped).

    `cwd` defaults to the current directory and is the workspace a `workspace-write` sandbox
    keeps writable; `env` overlays the scrubbed environment (`None` removes a variable); `stdin`
    is written then closed (None: /dev/null).

    Raises the signal's abort (after the process is gone) when `signal` aborts — also before
    anything started; `ValueError` for a bad argument; `tether.plugins.shell.ShellError` when
    the program cannot be started (`SHELL_SPAWN_FAILED`, e.g. `ENOENT`);
    `tether.plugins.sandbox.SandboxUnavailable` when the sandbox cannot be had here.
    """
    signal.throw_if_aborted()
    argv = ("bash", "-c", command) if isinstance(command, str) else tuple(command)
    if not argv or not all(isinstance(part, str) for part in argv):
        raise ValueError("run_process: command must be a string or a non-empty list of strings")
    if isinstance(max_output_bytes, bool) or not (
        isinstance(max_output_bytes, int) and max_output_bytes > 0
    ):
        raise ValueError("run_process: max_output_bytes must be a positive integer")
    check_grace_ms(grace_ms, "run_process:")
    if timeout_ms is not None and (
        isinstance(timeout_ms, bool)
        or not isinstance(timeout_ms, int | float)
        or not 0 < timeout_ms <= MAX_TIMER_DELAY_MS
    ):
        raise ValueError(
            "run_process: timeout_ms must be a positive number no greater than "
            f"{MAX_TIMER_DELAY_MS}"
        )
    directory = os.fspath(cwd) if cwd is not None else os.getcwd()
    limits = CaptureLimits(max_output_bytes)
    spec = SpawnSpec(
        argv=argv,
        cwd=directory,
        stdout=limits,
        stderr=limits,
        env=env,
        stdin=stdin.encode() if isinstance(stdin, str) else stdin,
        grace_ms=grace_ms,
        ends_with_leader=True,
        sandbox=SandboxPolicy.of(sandbox),
        workspace=directory,
    )
    service = SubprocessService()
    try:
        with deadline(signal, timeout_ms or 0, PROCESS_TIMEOUT) as limit:
            process = await service.spawn(spec, signal=limit.signal)
            status = await process.settled()
    finally:
        await service.aclose()
    signal.throw_if_aborted()  # else only its own deadline can have stopped it
    budget = math.inf if timeout_ms is None else timeout_ms
    return run_result(process, status, timeout_ms=budget, timeout_code=PROCESS_TIMEOUT)
