"""The local bash executor, `ctx.shell`: `bash -c <command>` in a fresh shell per call.

Owns: resolving a request against the config (defaults, caps, workdir), the child's fixed
environment overlay (`NO_COLOR=1`, `TERM=dumb`, `PAGER=cat`, `GIT_PAGER=cat`, then the request's
`env`), the foreground deadline (`deadline(signal, timeout_ms, "BASH_TIMEOUT")`) and the
first-cause classification of a run, and the background handle (`BackgroundProcess`: status,
consuming output cursors, `kill()`). Does not own spawning or stopping processes (the
`SubprocessService` it holds, which also owns background processes until it is closed).

No state persists between calls: bash is non-login and reads no rc files.

No process escapes a command: when bash exits (a normal finish, a timeout, an abort, a `kill()`),
every process the command started that still runs — in its process group or not (`setsid -f`,
a double fork, `nohup setsid ... &`, a `set -m` job, `disown`) — is gone before the run returns
or the background process settles: the kernel ends its PID namespace (`_namespace.py`), or, where
namespaces cannot be created, tether stops them (SIGTERM, then SIGKILL after `grace_ms`;
`_process.py`, `_reaper.py`). A background command's processes live until it ends or is killed.

The sandbox of a request is its own (`ShellRequest.sandbox`) or the config's, with the workspace
`cwd` (the process's current directory when unset); a sandbox that cannot be had raises
`tether.plugins.sandbox.SandboxUnavailable` from `run` and `start`.

The start-up sweep — stopping what a killed tether left running (`reap_orphans` over the orphan
ledger), removing the spill directories of tethers that are gone and the placeholders a killed
tether's sandboxed commands left in the writable roots (with the one line for a workspace that is
the home directory) — runs in a thread the executor starts when it is built (issue 36: its
imports and its work are not on the path to the first model request). The first `run` or `start`
and `aclose` wait for it, so it still comes before the first command, and a tether that runs none
(`tether tools list`) still stops a killed one's processes before it exits; the thread is not a
daemon, so an executor never closed is waited for at interpreter exit too. None of the sweep can
disturb a command running meanwhile: the ledger of a live owner is never read, the spill
directory of a live owner never removed, and a placeholder never while a command holds its root's
lock (`tether.plugins.sandbox.placeholders`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
from collections.abc import Awaitable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from ...core.signals import AbortSignal
from ...core.timeout import TimeoutReason, clamp_timeout, deadline
from ..sandbox.policy import SandboxMode, SandboxPolicy
from ._ledger import GroupLedger
from .config import ShellConfig
from .errors import SpawnAbortedError
from .subprocesses import SubprocessService

if TYPE_CHECKING:  # the process machinery and the records: imported by the first command
    from ._process import Subprocess
    from ._spec import SpawnSpec
    from .records import (
        ExitStatus,
        OutputDelta,
        ProcessStatus,
        ResolvedShellRequest,
        ShellRequest,
        ShellRunResult,
    )

__all__ = ["BASH_TIMEOUT", "BackgroundProcess", "LocalBashExecutor", "run_result"]

BASH_TIMEOUT: Final = "BASH_TIMEOUT"
"""The code of the foreground deadline (`timeout_of(signal, BASH_TIMEOUT)`)."""

_OVERLAY: Final = MappingProxyType(
    {"NO_COLOR": "1", "TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat"}
)


class LocalBashExecutor:
    """Runs commands with local bash. Close with `await executor.aclose()` (kills everything)."""

    __slots__ = ("_config", "_subprocesses", "_sweep")

    def __init__(
        self, config: ShellConfig | None = None, *, subprocesses: SubprocessService | None = None
    ) -> None:
        self._config = config = ShellConfig() if config is None else config
        self._sweep: threading.Thread | None = None
        if subprocesses is None:
            ledger = None
            if config.orphan_ledger_dir is not None:  # made here: an unusable one fails the mount
                ledger = GroupLedger(Path(config.orphan_ledger_dir))
            base = config.cwd if config.cwd is not None else os.getcwd()  # the cwd of now
            self._sweep = threading.Thread(  # started by `warm_up`, or run by the first need
                target=_start_up_sweep, args=(config, base), name="tether-shell-sweep"
            )
            subprocesses = SubprocessService(
                ledger=ledger,
                keep_spill_files=config.keep_spill_files,
                spill_parent=config.spill_dir,
                env_policy=config.sandbox.env,
            )
        self._subprocesses = subprocesses

    @property
    def config(self) -> ShellConfig:
        return self._config

    def add_writable_root(self, directory: str) -> None:
        """Make `directory` (an absolute path) one of the sandbox's `writable_roots` for the
        requests resolved from now on (a directory the user added: `/add-dir`). Its protected
        paths stay read-only as in every writable root; the file tools' writes follow, since
        they obey this executor's policy (`tether.plugins.fs.local`)."""
        sandbox = self._config.sandbox
        if directory in sandbox.writable_roots:
            return
        roots = (*sandbox.writable_roots, directory)
        self._config = self._config.model_copy(
            update={"sandbox": sandbox.model_copy(update={"writable_roots": roots})}
        )

    @property
    def subprocesses(self) -> SubprocessService:
        """The service that owns this executor's processes."""
        return self._subprocesses

    def resolve(self, request: ShellRequest) -> ResolvedShellRequest:
        """Apply defaults and caps. Raises `ValueError`:
        `bash-local: request.timeout_ms must be a positive finite number`,
        `bash-local: request.stdout_max_bytes must be a positive finite number`."""
        from .records import ResolvedShellRequest  # the first command: issue 36

        config = self._config
        timeout_ms = clamp_timeout(
            request.timeout_ms,
            config.timeout_ms,
            config.max_timeout_ms,
            "bash-local: request.timeout_ms",
        )
        cap = request.stdout_max_bytes
        if cap is None:
            cap = config.max_output_bytes
        elif (
            isinstance(cap, bool)
            or not isinstance(cap, int | float)
            or not (math.isfinite(cap) and cap > 0)
        ):
            raise ValueError(
                "bash-local: request.stdout_max_bytes must be a positive finite number"
            )
        base = config.cwd if config.cwd is not None else os.getcwd()
        workdir = base if request.workdir is None else os.path.join(base, request.workdir)
        stdin = request.stdin.encode() if isinstance(request.stdin, str) else request.stdin
        if request.sandbox is None:
            sandbox = config.sandbox.policy(base)
        else:
            sandbox = SandboxPolicy.of(request.sandbox)
        return ResolvedShellRequest(
            command=request.command,
            workdir=workdir,
            timeout_ms=timeout_ms,
            stdout_max_bytes=math.ceil(cap),
            stdin=stdin,
            env=request.env,
            sandbox=sandbox,
            workspace=base,
        )

    def _spawn_spec(self, request: ResolvedShellRequest, stdout_max_bytes: int) -> SpawnSpec:
        from ._collect import CaptureLimits  # the first command: issue 36
        from ._spec import SpawnSpec

        config = self._config
        env: Mapping[str, str | None] = _OVERLAY
        if request.env:
            env = {**_OVERLAY, **request.env}
        return SpawnSpec(
            argv=("bash", "-c", request.command),
            cwd=request.workdir,
            env=env,
            stdin=request.stdin,
            stdout=CaptureLimits(stdout_max_bytes, config.max_spill_bytes),
            stderr=CaptureLimits(config.max_output_bytes, config.max_spill_bytes),
            grace_ms=config.grace_ms,
            ends_with_leader=True,
            sandbox=request.sandbox,
            workspace=request.workspace,
        )

    async def run(
        self, request: ShellRequest | ResolvedShellRequest, *, signal: AbortSignal
    ) -> ShellRunResult:
        """Run in the foreground until the command settles. The deadline and `signal` terminate
        the process group (SIGTERM, then SIGKILL after `grace_ms`); the result says which of
        them fired first (`timed_out` / `aborted`).

        Raises `ValueError` from `resolve`, `SpawnAbortedError` when `signal` has already
        aborted, `ShellError` when bash cannot be started (e.g. `ENOENT` for a missing workdir).
        If the awaiting task is cancelled, the group is terminated and awaited, then
        `CancelledError` propagates.
        """
        spec = _resolved(self, request)
        self._swept()
        with deadline(signal, spec.timeout_ms, BASH_TIMEOUT) as limit:
            process = await self._subprocesses.spawn(
                self._spawn_spec(spec, spec.stdout_max_bytes), signal=limit.signal
            )
            status = await process.settled()
        return run_result(process, status, timeout_ms=spec.timeout_ms, timeout_code=BASH_TIMEOUT)

    async def start(
        self, request: ShellRequest | ResolvedShellRequest, *, signal: AbortSignal
    ) -> BackgroundProcess:
        """Start in the background, without a timeout; stdout keeps `max_output_bytes`.

        `signal` cancels only the start: `SpawnAbortedError` when it has already aborted. Once
        started, the process belongs to the returned handle (stop it with `kill()`) and to the
        subprocess service (closing it kills the process). Raises like `run` otherwise.
        """
        spec = _resolved(self, request)
        if signal.aborted:
            raise SpawnAbortedError(signal.reason)
        self._swept()
        process = await self._subprocesses.spawn(
            self._spawn_spec(spec, self._config.max_output_bytes), signal=AbortSignal.never()
        )
        return BackgroundProcess(process)

    async def aclose(self) -> None:
        """Kill and await every process this executor's service owns (after the start-up sweep,
        if it still runs)."""
        self._swept()
        await self._subprocesses.aclose()

    def warm_up(self) -> None:
        """Start the start-up sweep in its thread, if it has not started (`kernel/warm-up`: the
        agent's first model response is arriving; until then the sweep would compete with the
        boot for the interpreter lock, issue 36)."""
        sweep = self._sweep
        if sweep is not None and sweep.ident is None:
            sweep.start()

    def _swept(self) -> None:
        """The start-up sweep done (once): waited for when it runs, run here when nothing
        started it (a boot with no agent loop: `tether tools ...`, a library's context)."""
        sweep, self._sweep = self._sweep, None
        if sweep is None:
            return
        if sweep.ident is None:
            sweep.run()
        else:
            sweep.join()


def run_result(
    process: Subprocess, status: ExitStatus, *, timeout_ms: float, timeout_code: str
) -> ShellRunResult:
    """A settled foreground process as a result: `timed_out` when its own deadline
    (`timeout_code`) stopped it, `aborted` when another reason did."""
    from .records import ShellRunResult  # the first command: issue 36

    reason = process.stop_reason
    timed_out = isinstance(reason, TimeoutReason) and reason.code == timeout_code
    return ShellRunResult(
        exit_code=status.exit_code,
        signal_name=status.signal_name,
        timed_out=timed_out,
        aborted=reason is not None and not timed_out,
        timeout_ms=timeout_ms,
        stdout=process.stdout.result(),
        stderr=process.stderr.result(),
        bound_hit=process.bound_hit,
    )


def _resolved(
    executor: LocalBashExecutor, request: ShellRequest | ResolvedShellRequest
) -> ResolvedShellRequest:
    from .records import ResolvedShellRequest  # the first command: issue 36

    return request if isinstance(request, ResolvedShellRequest) else executor.resolve(request)


def _start_up_sweep(config: ShellConfig, base: str) -> None:
    """The start-up sweep, in its thread (see the module note): what a killed tether left."""
    try:
        from ._ledger import reap_orphans, sweep_spill_directories  # in the thread: issue 36

        if config.orphan_ledger_dir is not None:
            reap_orphans(Path(config.orphan_ledger_dir))
        if config.spill_dir is not None:
            sweep_spill_directories(config.spill_dir)
        _sweep_placeholders(config, base)
    except Exception:  # each step keeps its own errors; this is a bug, said, not a crash
        logging.getLogger("tether.shell").warning(
            "the shell's start-up sweep failed", exc_info=True
        )


def _sweep_placeholders(config: ShellConfig, base: str) -> None:
    """Remove the placeholders a killed tether's sandboxed commands left in the writable roots of
    workspace `base` (`tether.plugins.sandbox.protected`; never while a command of any tether runs
    there)."""
    if config.sandbox.mode != SandboxMode.WORKSPACE_WRITE.value:
        return
    from ..sandbox.placeholders import remove_placeholders  # in the sweep's thread: issue 36
    from ..sandbox.protected import home_warning

    if (warning := home_warning(base)) is not None:
        logging.getLogger("tether").warning("%s", warning)
    policy = config.sandbox.policy(base)
    for root in (base, *policy.writable_roots):
        remove_placeholders(os.path.realpath(root))


class BackgroundProcess:
    """A background command's handle (implements `ShellProcess`)."""

    __slots__ = ("_killed", "_process", "_stderr_at", "_stdout_at")

    def __init__(self, process: Subprocess) -> None:
        self._process = process
        self._killed = False
        self._stdout_at = 0
        self._stderr_at = 0

    @property
    def pid(self) -> int:
        """The leader's pid (= its process group id)."""
        return self._process.pid

    @property
    def status(self) -> ProcessStatus:
        """`killed` once `kill()` was called or when the leader died by a signal."""
        from .records import ProcessStatus  # loaded with the command that made this handle

        if self._killed:
            return ProcessStatus.KILLED
        status = self.exit_status
        if status is None:
            return ProcessStatus.RUNNING
        return ProcessStatus.COMPLETED if status.signal_name is None else ProcessStatus.KILLED

    @property
    def exit_status(self) -> ExitStatus | None:
        done = self._process.done
        return done.result() if done.done() else None

    @property
    def done(self) -> Awaitable[ExitStatus]:
        return asyncio.shield(self._process.done)

    def read_output(self) -> OutputDelta:
        from .records import OutputDelta  # loaded with the command that made this handle

        out = self._process.stdout.read_from(self._stdout_at)
        err = self._process.stderr.read_from(self._stderr_at)
        self._stdout_at, self._stderr_at = out.next_offset, err.next_offset
        delta = out.text
        if err.text:
            sep = "\n" if delta and not delta.endswith("\n") else ""
            delta = f"{delta}{sep}[stderr]\n{err.text}"
        return OutputDelta(delta, out.lossy or err.lossy, out.spill_path, err.spill_path)

    def kill(self) -> bool:
        if self._killed or self._process.done.done():
            return False
        self._killed = True
        self._process.terminate()
        return True
