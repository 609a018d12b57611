"""The subprocess service: spawns process groups and owns every one of them until it is gone.

Owns: argument checks before spawning, the translation of spawn failures into `ShellError`
(with the errno name, e.g. `ENOENT`), the table of live groups (a process leaves it once its
group is seen gone; a group that outlived its leader stays until the service is closed), the
private spill directory, the optional orphan ledger (`_ledger.py`), `aclose()` (terminate
every live group and await its settlement and termination, then delete the spill directory
unless `keep_spill_files`)
and a host-exit hook that SIGKILLs whatever is
still alive when the interpreter exits without closing the service. Does not own what to run
(the bash executor) or how one process is stopped (`_process.py`).
"""

from __future__ import annotations

import asyncio
import atexit
import errno
import math
import weakref
from typing import Final

from ...core.signals import AbortSignal
from ...core.timeout import MAX_TIMER_DELAY_MS
from ._collect import SpillDirectory
from ._ledger import GroupLedger
from ._process import SpawnSpec, Subprocess
from .errors import ShellError, SpawnAbortedError

__all__ = ["SubprocessService", "check_grace_ms"]

_ALL_LIVE: Final[weakref.WeakSet[Subprocess]] = weakref.WeakSet()
_hook_installed = False


def check_grace_ms(grace_ms: float, prefix: str = "subprocess") -> None:
    """Raises `ValueError("<prefix> grace_ms must be a positive finite number no greater than
    2147483647")` for a grace that cannot arm a timer."""
    if (
        isinstance(grace_ms, bool)
        or not isinstance(grace_ms, int | float)
        or not math.isfinite(grace_ms)
        or not 0 < grace_ms <= MAX_TIMER_DELAY_MS
    ):
        raise ValueError(
            f"{prefix} grace_ms must be a positive finite number no greater than "
            f"{MAX_TIMER_DELAY_MS}"
        )


def _kill_at_exit() -> None:
    for process in list(_ALL_LIVE):
        try:
            process.kill_now()
        except Exception:
            continue


def _install_exit_hook() -> None:
    global _hook_installed
    if not _hook_installed:
        _hook_installed = True
        atexit.register(_kill_at_exit)


def _spawn_failure(exc: OSError) -> ShellError:
    code = errno.errorcode.get(exc.errno or 0, "EIO")
    where = f": {exc.filename!r}" if exc.filename is not None else ""
    error = ShellError(f"spawn failed: {code}: {exc.strerror or exc}{where}")
    error.__cause__ = exc
    return error


class SubprocessService:
    """Spawns and owns process groups. Close it with `await service.aclose()`."""

    __slots__ = ("_closed", "_ledger", "_live", "_spill")

    def __init__(
        self, *, ledger: GroupLedger | None = None, keep_spill_files: bool = False
    ) -> None:
        self._live: set[Subprocess] = set()
        self._spill = SpillDirectory(keep=keep_spill_files)
        self._closed = False
        self._ledger = ledger

    @property
    def live(self) -> int:
        """How many groups the service still owns (running, draining, or outliving a leader)."""
        return len(self._live)

    async def spawn(self, spec: SpawnSpec, *, signal: AbortSignal) -> Subprocess:
        """Spawn `spec`; `signal` is its lifetime: an abort before settlement terminates it.

        Raises `ValueError` for an empty argv or a bad `grace_ms`, `RuntimeError` when the
        service is closed, `SpawnAbortedError` when `signal` has already aborted, and
        `ShellError` (`SHELL_SPAWN_FAILED`, message with the errno name) when the OS refuses.
        """
        if not spec.argv or not spec.argv[0]:
            raise ValueError("invalid argv: expected a non-empty program name at argv[0]")
        check_grace_ms(spec.grace_ms)
        if self._closed:
            raise RuntimeError("the subprocess service is closed; it spawns nothing new")
        if signal.aborted:
            raise SpawnAbortedError(signal.reason)
        try:
            process = Subprocess.spawn(spec, self._spill)
        except OSError as exc:
            raise _spawn_failure(exc) from exc
        _install_exit_hook()
        _ALL_LIVE.add(process)
        self._live.add(process)
        if self._ledger is not None:
            self._ledger.add(process.pid)
        process.done.add_done_callback(lambda _: self._settled(process))
        process.add_abort(signal)
        return process

    def _settled(self, process: Subprocess) -> None:
        if process.group_gone():
            self._forget(process)

    def _forget(self, process: Subprocess) -> None:
        self._live.discard(process)
        _ALL_LIVE.discard(process)
        if self._ledger is not None:
            self._ledger.remove(process.pid)

    async def aclose(self) -> None:
        """Terminate every live group, await settlement and termination, delete spill files
        (unless `keep_spill_files`). Idempotent; spawning afterwards raises."""
        self._closed = True
        while self._live:
            live = list(self._live)
            for process in live:
                process.terminate()
            await asyncio.gather(*(process.stopped() for process in live))
            for process in live:
                self._forget(process)
        self._spill.remove()
        if self._ledger is not None:
            self._ledger.close()
