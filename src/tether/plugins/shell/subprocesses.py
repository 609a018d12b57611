"""The subprocess service: spawns process groups and owns every one of them until it is gone.

Owns: the choice of containment for each spawn (`tether.plugins.sandbox.confine` with the kernel's
support, asked by the first spawn and probed once per process: contained in a PID namespace, or —
where namespaces cannot be created — uncontained under the fallback described below, said once in
the log; a sandbox that cannot be had raises `SandboxUnavailable`), argument checks before spawning,
the translation of spawn failures into `ShellError` (with the errno name, e.g. `ENOENT`), the table
of live groups (a process leaves it once its group is seen gone and no process it left behind still
runs; one that outlived its leader stays until the service is closed), the private spill directory,
the optional orphan ledger (`_ledger.py`: a command's tag is recorded before it is spawned, its
group right after), the look at the tree every half second while a process is live (each process
records the processes of its command, `_descendants.py`; the escaped ones go to the ledger, so a
later tether can stop them if this one is SIGKILLed), `aclose()` (terminate every live group and
await its settlement and termination, then delete the spill directory unless `keep_spill_files`) and
a host-exit hook that SIGKILLs whatever is still alive when the interpreter exits without closing
the service. The fallback — the child subreaper (`_reaper.py`), the looks, the tags and the ledger —
runs only for uncontained processes, and the subreaper only where containment is unavailable. Does
not own what to run (the bash executor) or how one process is stopped (`_process.py`).
"""

from __future__ import annotations

import asyncio
import atexit
import errno
import logging
import math
import weakref
from typing import TYPE_CHECKING, Final

from ...core.signals import AbortSignal
from ...core.timeout import MAX_TIMER_DELAY_MS
from ..sandbox.environment import DEFAULT_ENV_POLICY, EnvPolicy
from .errors import ShellError, SpawnAbortedError

if TYPE_CHECKING:  # the process machinery and the kernel probe: imported by the first spawn
    from ..sandbox.probe import KernelSupport
    from ._collect import SpillDirectory
    from ._ledger import GroupLedger
    from ._process import Subprocess
    from ._spec import SpawnSpec

__all__ = ["SubprocessService", "check_grace_ms"]

_log = logging.getLogger("tether.shell")

_ALL_LIVE: Final[weakref.WeakSet[Subprocess]] = weakref.WeakSet()
_hook_installed = False
_warned = False
_LOOK_EVERY_S: Final = 0.5
"""How often the tree is looked at while processes are live."""


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


def _warn_uncontained(support: KernelSupport) -> None:
    """The one line, once per process, that says processes are not contained, why, and what
    still holds."""
    global _warned
    if _warned:
        return
    _warned = True
    _log.warning(
        "tether: processes are not contained (%s). What still holds: a command's processes are "
        "stopped when it ends (tether is their subreaper and follows them by a tag), and those a "
        "killed tether leaves are stopped by the next tether (the orphan ledger); a sandboxed "
        "command is refused (--sandbox danger-full-access runs commands without a sandbox)",
        support.problem,
    )


def _spawn_failure(exc: OSError) -> ShellError:
    code = errno.errorcode.get(exc.errno or 0, "EIO")
    where = f": {exc.filename!r}" if exc.filename is not None else ""
    error = ShellError(f"spawn failed: {code}: {exc.strerror or exc}{where}")
    error.__cause__ = exc
    return error


class SubprocessService:
    """Spawns and owns process groups. Close it with `await service.aclose()`."""

    __slots__ = (
        "_closed",
        "_env_policy",
        "_keep_spill_files",
        "_ledger",
        "_live",
        "_look_timer",
        "_spill",
        "_spill_parent",
        "_support",
    )

    def __init__(
        self,
        *,
        ledger: GroupLedger | None = None,
        keep_spill_files: bool = False,
        spill_parent: str | None = None,
        support: KernelSupport | None = None,
        env_policy: EnvPolicy = DEFAULT_ENV_POLICY,
    ) -> None:
        self._env_policy = env_policy  # what every child inherits of tether's environment
        self._support: KernelSupport | None = None  # None: asked by the first spawn
        if support is not None:
            self._adopt(support)
        self._live: set[Subprocess] = set()
        self._keep_spill_files = keep_spill_files
        self._spill_parent = spill_parent
        self._spill: SpillDirectory | None = None  # made by the first spawn
        self._closed = False
        self._ledger = ledger
        self._look_timer: asyncio.TimerHandle | None = None

    @property
    def support(self) -> KernelSupport:
        """What the kernel offers its processes (containment, the sandbox): the one given, else
        `kernel_support()`, asked by the first spawn (or here)."""
        support = self._support
        if support is None:
            from ..sandbox.probe import kernel_support  # the first command: issue 36

            support = self._adopt(kernel_support())
        return support

    def _adopt(self, support: KernelSupport) -> KernelSupport:
        """Keep `support`; without containment, say so once and become the subreaper of what
        the commands leave (before anything is spawned)."""
        if not support.contain:
            from ._reaper import become_subreaper  # the uncontained fallback only

            _warn_uncontained(support)
            become_subreaper()
        self._support = support
        return support

    @property
    def live(self) -> int:
        """How many groups the service still owns (running, draining, or outliving a leader)."""
        return len(self._live)

    async def spawn(self, spec: SpawnSpec, *, signal: AbortSignal) -> Subprocess:
        """Spawn `spec`; `signal` is its lifetime: an abort before settlement terminates it.
        Its environment is tether's as the service's `env_policy` passes it (default: the
        built-in credential rules, `tether.plugins.sandbox.environment`), overlaid by `spec.env`.

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
        from ..sandbox.plan import confine  # the machinery loads at the first spawn: issue 36
        from ._collect import SpillDirectory
        from ._process import Subprocess
        from ._spec import new_tag

        if self._spill is None:
            self._spill = SpillDirectory(keep=self._keep_spill_files, parent=self._spill_parent)
        spill = self._spill
        jail = confine(
            spec.argv,
            policy=spec.sandbox,
            workspace=spec.workspace or spec.cwd,
            workdir=spec.cwd,
            support=self.support,
        )
        if jail is not None:  # contained: the kernel holds its processes, nothing to track
            try:
                process = Subprocess.spawn(spec, spill, jail=jail, env_policy=self._env_policy)
            except OSError as exc:
                raise _spawn_failure(exc) from exc
            self._own(process, signal)
            return process
        tag = new_tag()
        if self._ledger is not None:
            self._ledger.expect(tag)  # before the spawn: a kill from here on leaves it findable
        try:
            process = Subprocess.spawn(spec, spill, tag=tag, env_policy=self._env_policy)
        except OSError as exc:
            if self._ledger is not None:
                self._ledger.discard(tag)
            raise _spawn_failure(exc) from exc
        self._own(process, signal)
        if self._ledger is not None:
            self._ledger.add(process.pid, tag=tag)
        if self._look_timer is None:
            self._look_timer = asyncio.get_running_loop().call_later(_LOOK_EVERY_S, self._look)
        return process

    def _own(self, process: Subprocess, signal: AbortSignal) -> None:
        _install_exit_hook()
        _ALL_LIVE.add(process)
        self._live.add(process)
        process.done.add_done_callback(lambda _: self._settled(process))
        process.add_abort(signal)

    def _settled(self, process: Subprocess) -> None:
        if process.finished():
            self._forget(process)

    def _look(self) -> None:
        """Every `_LOOK_EVERY_S` while processes are live: record each one's descendants."""
        self._look_timer = None
        live = [process for process in self._live if not process.contained]
        if not live:
            return
        from ._descendants import claim  # loaded with `_process` by the first spawn
        from ._tree import read_tree

        try:
            found = claim(read_tree(), {process.tag: process.leader for process in live})
            for process in live:
                changed = process.observe(found.get(process.tag, ()))
                if changed and self._ledger is not None:
                    self._ledger.track(process.pid, process.escaped())
                if process.done.done() and process.finished():
                    self._forget(process)
        except Exception:
            _log.warning("looking for the descendants of running commands failed", exc_info=True)
        if any(not p.contained for p in self._live) and not self._closed:
            loop = asyncio.get_running_loop()
            self._look_timer = loop.call_later(_LOOK_EVERY_S, self._look)

    def _forget(self, process: Subprocess) -> None:
        self._live.discard(process)
        _ALL_LIVE.discard(process)
        if self._ledger is not None:
            self._ledger.remove(process.pid)

    async def aclose(self) -> None:
        """Terminate every live group, await settlement and termination, delete spill files
        (unless `keep_spill_files`). Idempotent; spawning afterwards raises."""
        self._closed = True
        if self._look_timer is not None:
            self._look_timer.cancel()
            self._look_timer = None
        while self._live:
            live = list(self._live)
            for process in live:
                process.terminate()
            await asyncio.gather(*(process.stopped() for process in live))
            for process in live:
                self._forget(process)
        if self._spill is not None:
            self._spill.remove()
        if self._ledger is not None:
            self._ledger.close()
