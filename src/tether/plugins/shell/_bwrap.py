"""Launching a contained command under `bwrap`, and its handshake over `--info-fd`/`--block-fd`.

Owns starting a command with a `Jail` (`tether.plugins.sandbox.confine`): the program is looked
for first (inside a jail, bwrap could only report a missing one as an exit code); bwrap gets
`--info-fd`, where it writes its namespace init's host pid (`{"child-pid": N}`), and, with a
process bound, `--block-fd`, on which the command waits until the bound is set on init
(`RLIMIT_NPROC`, and a `pids` cgroup where one can be made: `sandbox/bounds.py`,
`sandbox/cgroups.py`) and a byte is written. `Handshake` holds the two descriptors and reads
init's pid. Does not own when to bound or start the command, waiting on init or stopping the
namespace (`_process.py`, `_namespace.py`).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import resource
import shutil
from collections.abc import Mapping

from ..sandbox.cgroups import CommandGroup, command_group
from ..sandbox.plan import Jail
from ._spawn import Launched, ProcessEvents
from ._spec import SpawnSpec

__all__ = ["Handshake", "launch"]

_log = logging.getLogger("tether.shell")


def _check_program(program: str, cwd: str, env: Mapping[str, str]) -> None:
    """Raise `FileNotFoundError` as `exec` would for a program that cannot be found (inside a
    jail, bwrap could only report it as an exit code)."""
    if os.sep in program:
        found = os.path.exists(os.path.join(cwd, program))
    else:
        found = shutil.which(program, path=env.get("PATH", os.defpath)) is not None
    if not found:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def launch(
    spec: SpawnSpec, env: Mapping[str, str], jail: Jail, events: ProcessEvents
) -> tuple[Launched, Handshake]:
    """Start `spec` as `jail` says: bwrap with `--info-fd` and, when the jail bounds the
    processes, `--block-fd` (the command starts at `Handshake.start`). Raises `OSError` when it
    cannot be spawned (bad cwd, missing program); the jail is released and no descriptor is
    leaked then."""
    info, info_w = os.pipe()  # bwrap writes its init's host pid there (`--info-fd`)
    os.set_blocking(info, False)  # read once bwrap exited; never wait for a writer
    block_r, block_w = os.pipe() if jail.max_processes is not None else (-1, -1)
    try:
        _check_program(spec.argv[0], spec.cwd, env)
        extra = ["--info-fd", str(info_w)]
        if block_r >= 0:  # the command waits until its bound is set (`_bound_processes`)
            extra += ["--block-fd", str(block_r)]
        launched = Launched.start(
            [jail.argv[0], *extra, *jail.argv[1:]],
            cwd=spec.cwd,
            env=env,
            stdin=spec.stdin,
            events=events,
            pass_fds=(*jail.pass_fds, info_w, *((block_r,) if block_r >= 0 else ())),
        )
    except BaseException:
        os.close(info)
        if block_w >= 0:
            os.close(block_w)
        jail.release()
        raise
    finally:
        os.close(info_w)
        if block_r >= 0:
            os.close(block_r)
    block = None if jail.max_processes is None else (block_w, jail.max_processes)
    return launched, Handshake(info, block)


class Handshake:
    """bwrap's `--info-fd` (read end) and, with a process bound, its `--block-fd` (write end)
    for one contained command; `close_block()` and `finish()` close them."""

    __slots__ = ("_block", "_data", "info", "init_pid")

    def __init__(self, info: int, block: tuple[int, int] | None) -> None:
        self.info = info
        self._data = b""  # what was read from `info` so far
        self.init_pid: int | None = None  # read early when a process bound is set
        self._block = block  # `--block-fd` write end, and the process bound

    @property
    def waiting(self) -> bool:
        """The command waits on `--block-fd` (neither started nor given up yet)."""
        return self._block is not None

    def read(self) -> bool:
        """Read what `--info-fd` has now: True once it named init (`init_pid`) or bwrap closed
        it without naming one, False while more is to come."""
        try:
            chunk = os.read(self.info, 4096)
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        self._data += chunk
        if chunk:
            pid = _child_pid(self._data)
            if pid is None:
                return False  # not all of it yet
            self.init_pid = pid
        return True

    def bound(self, init: int, what: object) -> CommandGroup | None:
        """Set `RLIMIT_NPROC` to the bound on `init` and, where a `pids` cgroup can be made,
        move init into one with `pids.max` = the bound: that group (None without one). Raises
        `ProcessLookupError` when init is gone, another exception when the bound cannot be
        set."""
        assert self._block is not None
        limit = self._block[1]
        resource.prlimit(init, resource.RLIMIT_NPROC, (limit, limit))
        group = command_group(limit)
        if group is not None:
            try:
                group.add(init)
            except OSError:
                _log.warning("cannot move %r into %s", what, group.path, exc_info=True)
                group.remove()
                return None
        return group

    def start(self) -> None:
        """Let the command start: write to `--block-fd`, then close it."""
        assert self._block is not None
        os.write(self._block[0], b"x")
        self.close_block()

    def close_block(self) -> None:
        block, self._block = self._block, None
        if block is not None:
            os.close(block[0])

    def finish(self) -> int | None:
        """Close `--info-fd` (what is left read first, unless init was named already): init's
        host pid, or None when bwrap wrote none (it failed first)."""
        info = self.info
        if self.init_pid is not None:
            os.close(info)
            return self.init_pid
        try:
            self._data += os.read(info, 4096)
        except OSError:
            pass
        finally:
            os.close(info)
        return _child_pid(self._data)


def _child_pid(data: bytes) -> int | None:
    try:
        return int(json.loads(data)["child-pid"])
    except (ValueError, KeyError, TypeError):
        return None
