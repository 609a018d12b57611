"""One spawned process group: collection, settlement, and the termination escalation.

Design note
-----------
Two kinds. A *contained* process (spawned with a `Jail`, `tether.plugins.sandbox.confine`) is
`bwrap` running the command in its own PID namespace: everything the command starts ends with its
leader, with its namespace, or with tether (`_namespace.py`), so nothing below about descendants,
tags, looks or the subreaper applies to it — its escalation is SIGTERM to the command's group,
then SIGKILL to the namespace, and it has settled once bwrap has exited and the pipes closed. A
sandboxed one with a process bound waits (bwrap's `--block-fd`) until the loop has read its init's
pid (`--info-fd`) and bounded it (`_bound_processes`). The rest of this note is the
*uncontained* process, the fallback where namespaces cannot be created.
(Launching bwrap and the handshake over its descriptors belong to `_bwrap.py`; `SpawnSpec`,
`Phase` and `ExitStatus` to `_spec.py`, re-exported here.)

Contract. A `Subprocess` is spawned in its own session (`start_new_session=True`, so its pid is
its process group id). Its `done` future resolves exactly once, with the leader's `ExitStatus`,
when the process has *settled*: the leader has exited and been reaped, both output pipes are
closed (or the drain bound passed), and a termination that was started has finished. It never
resolves with an exception. (Starting the child and its descriptors belong to `_spawn.py`.)
`terminate()` is idempotent and synchronous; it starts the escalation, which the process owns:

    look for the command's other processes (`_descendants.claim`: by the tag in their
    environment, so those that left the group are found too) → SIGTERM to the group and to
    them → wait up to `grace_ms` for all of them to be gone → look again (a process forked
    meanwhile) → SIGKILL to the group and to the survivors → confirm (up to three rounds) →
    reap the ones tether adopted (`_reaper.py`).

The escalation is independent of the leader: a descendant that traps SIGTERM dies after the grace
even though the leader exited at once.

Descendants. Each spawn gets a unique tag (`_tree.TAG_VARIABLE` in its environment). Since tether
is the child subreaper (Linux), a process that left the group (`setsid -f`, a double fork,
`nohup setsid ... &`, a `set -m` job, `disown`) and whose parent exited is re-parented to tether,
so the tag finds it after the leader has exited as well. `observe()` records the ones seen
alive (pid and start; the owning service looks every half second and writes the escaped ones to
the orphan ledger); they are signalled only while they are the very instance recorded.
`ends_with_leader` (the bash executor sets it, foreground and background): when the leader
exits, whatever the command left running — in the group or escaped — is stopped with the same
escalation before the process settles. A quick check (is the group empty, does tether have a
child that is not a leader) skips the full look in the common case.

Settlement bound. A descendant that inherited stdout/stderr and outlives the leader would keep
the pipes open forever; `grace_ms` after the leader exits the pipes are closed and the process
settles anyway (what was still unread in the pipe is dropped). Without `ends_with_leader` such a
lingering group is not killed by settlement; the owning service keeps it and terminates it when
it is disposed.

PID reuse. A group that was once seen gone (`ESRCH`, or only zombies left) is never signalled
again. This process is the leader's only reaper, so until it reaps the leader the pid (= the
pgid) cannot be reused and `killpg` is safe; after that the group is checked before every
signal (a live group keeps its id reserved). Residual window: a group that empties between that
check and the `killpg` (microseconds) and whose id is re-allocated to a new group leader within
the same window. Other processes of the command are signalled through a pidfd after checking
their start time (`signal_exact`), so a recycled pid is never hit.

Abort. `add_abort(signal)` wires a lifetime signal: its abort, while unsettled, records the
reason as `stop_reason` (first only) and calls `terminate()`; the listener is removed at
settlement.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal as signals
from collections.abc import Callable, Iterable
from typing import Final

from ...core.signals import AbortSignal
from ..sandbox.cgroups import CommandGroup
from ..sandbox.environment import DEFAULT_ENV_POLICY, EnvPolicy
from ..sandbox.plan import Jail
from ._bwrap import Handshake, launch
from ._collect import SpillDirectory, StreamCollector
from ._descendants import Leader, claim
from ._env import child_environment
from ._group import group_alive, running, signal_exact, signal_group
from ._namespace import (
    kill_namespace,
    pidfd_of,
    status_of,
    terminate_namespace,
    wait_inits_gone,
)
from ._reaper import is_subreaper, reap
from ._spawn import STDERR, STDOUT, Launched
from ._spec import ExitStatus, Phase, SpawnSpec, new_tag, signal_name
from ._tree import TAG_VARIABLE, ProcessEntry, boot_ticks, direct_children, read_tree

__all__ = ["ExitStatus", "Phase", "SpawnSpec", "Subprocess", "new_tag", "signal_name"]

_log = logging.getLogger("tether.shell")

_KILL_CONFIRM_S: Final = 2.0
"""How long to keep confirming a SIGKILLed group's death (SIGKILL cannot be ignored)."""
_POLL_FIRST_S: Final = 0.001
_POLL_MAX_S: Final = 0.025
_KILL_ROUNDS: Final = 3
"""SIGKILL rounds, each after a fresh look (a process forked while the previous one ran)."""

_UNREAPED_LEADERS: set[int] = set()
"""Leaders of this process that have not been reaped yet (tether's known children)."""


class Subprocess:
    """A live or settled process group. Build with `Subprocess.spawn(spec, spill_dir)`."""

    __slots__ = (
        "__weakref__",
        "_contained",
        "_done",
        "_drain_timer",
        "_ends_with_leader",
        "_exited",
        "_grace_s",
        "_group",
        "_group_gone",
        "_handshake",
        "_hit",
        "_init_gone",
        "_jail",
        "_killer",
        "_launched",
        "_leader",
        "_loop",
        "_members",
        "_open_pipes",
        "_remove_abort",
        "_returncode",
        "_tag",
        "phase",
        "pid",
        "stderr",
        "stdout",
        "stop_reason",
    )

    pid: int
    """The leader's pid, which is also the process group id."""
    phase: Phase
    stop_reason: object
    """The lifetime signal's reason when it aborted before settlement, else None."""

    def __init__(self, spec: SpawnSpec, spill_dir: SpillDirectory) -> None:
        self._loop = asyncio.get_running_loop()
        self.stdout = StreamCollector(spec.stdout, spill_dir=spill_dir, label="stdout")
        self.stderr = StreamCollector(spec.stderr, spill_dir=spill_dir, label="stderr")
        self._grace_s = spec.grace_ms / 1000.0
        self._done: asyncio.Future[ExitStatus] = self._loop.create_future()
        self._exited: asyncio.Future[None] = self._loop.create_future()
        self._open_pipes = {STDOUT, STDERR}
        self._returncode: int | None = None
        self._drain_timer: asyncio.TimerHandle | None = None
        self._killer: asyncio.Task[None] | None = None
        self._group_gone = False
        self._remove_abort: Callable[[], None] | None = None
        self._launched: Launched | None = None
        self._ends_with_leader = spec.ends_with_leader
        self._tag = new_tag()
        self._leader = Leader(0, None)
        self._members: dict[int, ProcessEntry] = {}
        self._jail: Jail | None = None
        self._handshake: Handshake | None = None  # a contained command: bwrap's fds
        self._group: CommandGroup | None = None  # its pids cgroup, removed at settlement
        self._hit: str | None = None  # `bound_hit`, read as the group is removed
        self._init_gone: asyncio.Task[None] | None = None
        self._contained = False
        self.phase = Phase.RUNNING
        self.stop_reason = None
        self.pid = 0

    @classmethod
    def spawn(
        cls,
        spec: SpawnSpec,
        spill_dir: SpillDirectory,
        *,
        tag: str | None = None,
        jail: Jail | None = None,
        env_policy: EnvPolicy = DEFAULT_ENV_POLICY,
    ) -> Subprocess:
        """Start `spec` in a new session (synchronously: there is no window in which a
        cancellation could leave a half-started process). With a `jail` (`confine()`), it runs
        contained, as the jail says, and the jail is released when it exits; without one, it
        runs under the fallback: `tag` is its `TETHER_PROCESS_TAG` (default: a new one). The
        environment is tether's as `env_policy` passes it, overlaid by `spec.env`. Raises
        `OSError` when it cannot be spawned (bad cwd, missing program)."""
        self = cls(spec, spill_dir)
        env = child_environment(spec.env, policy=env_policy)
        if jail is None:
            if tag is not None:
                self._tag = tag
            env[TAG_VARIABLE] = self._tag
            not_before = boot_ticks()
            self._launched = Launched.start(
                spec.argv, cwd=spec.cwd, env=env, stdin=spec.stdin, events=self
            )
            self.pid = pid = self._launched.pid
            _UNREAPED_LEADERS.add(pid)
            self._leader = Leader(pid, not_before)
            return self
        for name, value in jail.env.items():
            if name not in spec.env:
                env[name] = value
        self._launched, handshake = launch(spec, env, jail, self)
        self._handshake = handshake
        if handshake.waiting:  # the command starts once bounded
            self._loop.add_reader(handshake.info, self._info_readable)
        jail.spawned()
        self._jail = jail
        self._contained = True
        self.pid = self._launched.pid
        self._leader = Leader(self.pid, None)
        return self

    @property
    def bound_hit(self) -> str | None:
        """`max_processes` when the kernel refused a fork of the command for its process bound
        (read from its cgroup; None where it has none, or the bound was never reached)."""
        group = self._group
        if group is not None:
            return "max_processes" if group.hit() else None
        return self._hit

    @property
    def contained(self) -> bool:
        """It runs in its own PID namespace (its processes end with its leader, by the kernel)."""
        return self._contained

    # -- facts ---------------------------------------------------------------------------------

    @property
    def done(self) -> asyncio.Future[ExitStatus]:
        """Resolves once, at settlement. Await it shielded (`asyncio.shield`) or via `settled()`."""
        return self._done

    @property
    def leader_exited(self) -> bool:
        """The leader has exited and been reaped."""
        return self._exited.done()

    @property
    def terminating(self) -> bool:
        """`terminate()` was called."""
        return self._killer is not None

    def group_gone(self) -> bool:
        """True once no member of the group is alive (checked now; remembered once seen)."""
        if self._contained:
            return self.leader_exited  # the namespace ended with it
        if not self._group_gone and self.leader_exited and not group_alive(self.pid):
            self._group_gone = True
        return self._group_gone

    def finished(self) -> bool:
        """The group is gone and no other process of the command still runs (for a process
        without `ends_with_leader`, after a look if tether may have adopted one)."""
        if not self.group_gone() or any(running(p) for p in self._members.values()):
            return False
        return self._ends_with_leader or not self._left_behind()

    # -- descendants ---------------------------------------------------------------------------

    @property
    def tag(self) -> str:
        """The value of `TETHER_PROCESS_TAG` the command and its descendants carry."""
        return self._tag

    @property
    def leader(self) -> Leader:
        return self._leader

    def escaped(self) -> list[ProcessEntry]:
        """The running processes of the command, known to tether, that left its group."""
        return [p for p in self._members.values() if p.pgid != self.pid]

    def observe(self, processes: Iterable[ProcessEntry]) -> bool:
        """Take what `claim` found for this command now: remember the live ones, reap the
        zombies tether adopted, forget the gone. True when the escaped set changed."""
        before = {p.pid for p in self.escaped()}
        members: dict[int, ProcessEntry] = {}
        dead = []
        for process in processes:
            if process.dead:
                dead.append(process)
            else:
                members[process.pid] = process
        for pid, known in self._members.items():
            if pid not in members and running(known):  # left this process's tree somehow
                members[pid] = known
        if dead:
            reap(dead)
        self._members = members
        return before != {p.pid for p in self.escaped()}

    def _look(self) -> list[ProcessEntry]:
        """Look at the tree now; the command's running processes besides the leader. Never
        raises: if the look fails (logged), the processes already known are returned."""
        if self._contained:
            return []  # contained: nothing to look for
        try:
            found = claim(read_tree(), {self._tag: self._leader})
            self.observe(found.get(self._tag, ()))
        except Exception:
            _log.warning("looking for the processes of %r failed", self, exc_info=True)
        return list(self._members.values())

    def _left_behind(self) -> bool:
        """After the leader exited: might the command have left a process running?"""
        if self._contained:
            return False
        try:
            os.killpg(self.pid, 0)
        except ProcessLookupError:
            group_empty = True
        except PermissionError:
            return True
        else:
            group_empty = False
        if group_empty and not self._members:
            if not is_subreaper():
                return False  # what left the group was re-parented to init: out of reach
            children = direct_children()
            if children is not None and not children - _UNREAPED_LEADERS:
                return False  # no process of the group, nothing adopted: nothing left
        if self._look():
            return True
        return not group_empty and group_alive(self.pid)

    # -- lifetime ------------------------------------------------------------------------------

    def add_abort(self, signal: AbortSignal) -> None:
        """Terminate when `signal` aborts before settlement (see the module note)."""
        if self.phase is not Phase.SETTLED and self._remove_abort is None:
            self._remove_abort = signal.add_listener(self._aborted)

    def _aborted(self, reason: object) -> None:
        if self.phase is Phase.SETTLED:
            return
        if self.stop_reason is None:
            self.stop_reason = reason
        self.terminate()

    def terminate(self) -> None:
        """Start the SIGTERM → grace → SIGKILL escalation once; a gone group whose other
        processes are gone too is left alone."""
        if self._contained and self.leader_exited:
            return
        if self._killer is not None or (self._group_gone and not self._look()):
            return
        self._killer = self._loop.create_task(self._escalate())
        self._killer.add_done_callback(self._killer_done)

    async def settled(self) -> ExitStatus:
        """Await settlement. If the awaiting task is cancelled, the group is terminated and still
        awaited to settlement (never abandoned), then the cancellation propagates."""
        try:
            return await asyncio.shield(self._done)
        except asyncio.CancelledError:
            self.terminate()
            while not self._done.done():
                try:
                    await asyncio.shield(self._done)
                except asyncio.CancelledError:
                    continue
            raise

    async def stopped(self) -> None:
        """Await settlement and any termination in progress (for the owning service)."""
        await asyncio.shield(self._done)
        killer = self._killer
        if killer is not None and not killer.done():
            await asyncio.shield(killer)

    # -- termination ---------------------------------------------------------------------------

    async def _escalate(self) -> None:
        if self._contained:
            await self._escalate_contained()
            return
        members = self._look()
        self._signal(signals.SIGTERM)
        for process in members:
            if process.pgid != self.pid:  # the group's members got it from `killpg`
                signal_exact(process, signals.SIGTERM)
        members = await self._wait_gone(self._grace_s, members)
        for _ in range(_KILL_ROUNDS):
            members = self._look()
            if self.group_gone() and not members:
                return
            self._signal(signals.SIGKILL)
            for process in members:
                signal_exact(process, signals.SIGKILL)
            await self._wait_gone(_KILL_CONFIRM_S, members)

    async def _escalate_contained(self) -> None:
        """SIGTERM to the command's group, `grace_ms`, then SIGKILL to its namespace
        (`_namespace.py`); done when bwrap has exited (its namespace is gone then)."""
        if self.leader_exited:
            return
        inits = terminate_namespace(self.pid)
        try:
            for timeout_s in (self._grace_s, *(_KILL_CONFIRM_S,) * _KILL_ROUNDS):
                await asyncio.wait((self._exited,), timeout=timeout_s)
                if self.leader_exited:
                    break
                inits += kill_namespace(self.pid)
        finally:
            # bwrap killed before it reaped its init: the namespace is gone once init is
            await wait_inits_gone(inits, _KILL_CONFIRM_S * _KILL_ROUNDS)

    def _signal(self, sig: signals.Signals) -> None:
        if self._group_gone:
            return
        if self.leader_exited and not group_alive(self.pid):
            self._group_gone = True
            return
        if not signal_group(self.pid, sig):
            self._group_gone = True

    async def _wait_gone(self, timeout_s: float, members: list[ProcessEntry]) -> list[ProcessEntry]:
        """Poll (backing off from 1 ms to 25 ms, waking early when the leader exits) until the
        group and `members` are gone or `timeout_s` passes; returns the members still running."""
        loop = self._loop
        end = loop.time() + timeout_s
        delay = _POLL_FIRST_S
        while True:
            members = [p for p in members if running(p)]
            if self.group_gone() and not members:
                return members
            remaining = end - loop.time()
            if remaining <= 0:
                return members
            step = min(delay, remaining)
            if self._exited.done():
                await asyncio.sleep(step)
            else:
                await asyncio.wait((self._exited,), timeout=step)
            delay = min(delay * 2, _POLL_MAX_S)

    def _killer_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._loop.call_exception_handler(
                {"message": "process termination failed", "exception": task.exception()}
            )
        self._maybe_settle()

    # -- events from the launched process (ProcessEvents) -------------------------------------

    def on_output(self, stream: int, data: bytes) -> None:
        (self.stdout if stream == STDOUT else self.stderr).feed(data)

    def on_output_closed(self, stream: int) -> None:
        self._open_pipes.discard(stream)
        self._maybe_settle()

    def on_exit(self, returncode: int | None) -> None:
        if self.phase is not Phase.RUNNING:
            return
        _UNREAPED_LEADERS.discard(self.pid)
        jail, self._jail = self._jail, None
        if jail is not None:
            jail.release()
        if self._contained:
            returncode = status_of(returncode, stopped=self._killer is not None)
            init = self._namespace_init()
            if init is not None:  # bwrap exited on the command's status; its init may still run
                self._init_gone = self._loop.create_task(
                    wait_inits_gone([init], _KILL_CONFIRM_S * _KILL_ROUNDS)
                )
                self._init_gone.add_done_callback(lambda _: self._maybe_settle())
        self._returncode = returncode
        self.phase = Phase.DRAINING
        self._exited.set_result(None)
        if self._open_pipes:
            self._drain_timer = self._loop.call_later(self._grace_s, self._drain_expired)
        if self._ends_with_leader and self._killer is None and self._left_behind():
            self._killer = self._loop.create_task(self._escalate())
            self._killer.add_done_callback(self._killer_done)
        self._maybe_settle()

    def _info_readable(self) -> None:
        """bwrap's `--info-fd` has data: once it names the namespace's init, bound it and let
        the command start (`_bound_processes`); at EOF bwrap ended before it made one."""
        handshake = self._handshake
        if handshake is None or not handshake.waiting or not handshake.read():
            return
        self._loop.remove_reader(handshake.info)
        if handshake.init_pid is not None:
            self._bound_processes(handshake, handshake.init_pid)

    def _bound_processes(self, handshake: Handshake, init: int) -> None:
        """Set `RLIMIT_NPROC` to the bound on the namespace's `init` while it waits on bwrap's
        `--block-fd`, then let the command start: every process of the command inherits it, and
        inside its own user namespace it counts only the command's processes
        (`sandbox/bounds.py`); where a `pids` cgroup can be made, init is moved into one with
        `pids.max` = the bound too (`sandbox/cgroups.py`; root is exempt from `RLIMIT_NPROC`).
        Fails closed: when the bound cannot be set, init and bwrap are killed and `--block-fd`
        stays open until settlement, so the command never runs (its result: killed by SIGKILL)."""
        assert self._launched is not None
        if self._killer is not None:
            return  # being stopped: it never starts (`block` is closed once bwrap exited)
        try:
            self._group = handshake.bound(init, self)
            handshake.start()
        except ProcessLookupError:
            return  # its init is gone already (bwrap failed, or was killed): nothing to start
        except Exception:
            _log.warning("cannot bound the processes of %r; not starting it", self, exc_info=True)
            for pid in (init, self._launched.pid):
                with contextlib.suppress(OSError):
                    os.kill(pid, signals.SIGKILL)

    def _namespace_init(self) -> int | None:
        """A pidfd for the namespace's init, from bwrap's `--info-fd` (`{"child-pid": N}`), or
        None when bwrap wrote none (it failed first) or init is already gone. bwrap exits as soon
        as its init reports the command's status, while init is still ending the namespace (the
        kernel kills and waits for its processes before init's exit completes; bwrap's death
        SIGKILLs init): the command has settled only once init has exited. Residual: init was
        reaped by the host and its pid reused in between, which costs a bounded wait."""
        handshake, self._handshake = self._handshake, None
        if handshake is None:
            return None
        if handshake.waiting:  # bwrap ended before its process bound was set
            self._loop.remove_reader(handshake.info)
            handshake.close_block()
        pid = handshake.finish()
        return None if pid is None else pidfd_of(pid)

    def _drain_expired(self) -> None:
        self._drain_timer = None
        if self._launched is not None:
            self._launched.close_output()

    def _maybe_settle(self) -> None:
        if self.phase is not Phase.DRAINING or self._open_pipes:
            return
        if self._killer is not None and not self._killer.done():
            return
        if self._init_gone is not None and not self._init_gone.done():
            return
        self.phase = Phase.SETTLED
        group, self._group = self._group, None
        if group is not None:
            self._hit = "max_processes" if group.hit() else None
            group.remove()  # the namespace is gone: the group is empty
        if self._drain_timer is not None:
            self._drain_timer.cancel()
            self._drain_timer = None
        if self._remove_abort is not None:
            self._remove_abort()
            self._remove_abort = None
        if self._launched is not None:
            self._launched.close()
        self.stdout.seal()
        self.stderr.seal()
        code = self._returncode
        if code is None or code >= 0:
            status = ExitStatus(code, None)
        else:
            status = ExitStatus(None, signal_name(-code))
        self._done.set_result(status)

    def kill_now(self) -> None:
        """At interpreter exit: SIGKILL whatever is left, synchronously (the exit hook)."""
        if self._contained:
            if self._launched is not None and not self.leader_exited:
                for pidfd in kill_namespace(self.pid):  # the kernel ends the rest; not awaited
                    os.close(pidfd)
                self._launched.kill_and_reap_now()
            return
        members = self._look() if self.pid else []
        if self._launched is not None and not self.leader_exited:
            self._launched.kill_and_reap_now()
        elif not self._group_gone and self.pid and group_alive(self.pid):
            signal_group(self.pid, signals.SIGKILL)
        for process in members:
            signal_exact(process, signals.SIGKILL)

    def __repr__(self) -> str:
        return f"<Subprocess pid={self.pid} {self.phase.value}>"
