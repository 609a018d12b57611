"""A `pids` cgroup per sandboxed command, where this process may create one.

Owns `command_group(limit)`: a fresh cgroup `tether-<pid>-<n>` with `pids.max` = `limit`, made under
this process's own cgroup in a `pids` hierarchy it can write — cgroup v2 where `pids` is enabled for
its children (a delegated subtree, e.g. a systemd user scope with `Delegate=`), else the cgroup v1
`pids` hierarchy (root, on hosts and containers with a v1 or hybrid layout) — or None when neither
can be had (the usual unprivileged case: `bounds.py` says what bounds it then). The spawner moves
the namespace's init into it before the command starts (bwrap's `--block-fd`: `shell/_bwrap.py`,
applied by `shell/_process.py`), so every process of the command is counted, by the kernel, and a
fork past the bound fails with EAGAIN; `CommandGroup.hit()` reads whether that happened
(`pids.events`). `CommandGroup.remove()` removes it once the command's namespace is gone; the first
use in a process removes the empty groups that a SIGKILLed tether left behind (those whose owner pid
is gone). No memory controller is touched: the memory cgroups here may belong to whatever started
tether.

The hierarchy is found once per process (a probe: create a group, see `pids.max`, remove it).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import threading
from dataclasses import dataclass

__all__ = ["CommandGroup", "command_group", "pids_base"]


@functools.cache
def _stale() -> re.Pattern[str]:
    return re.compile(r"tether-(\d+)-\d+")


_counter = itertools.count()
_lock = threading.Lock()
_base: list[str | None] = []  # found once per process


@dataclass(frozen=True, slots=True)
class CommandGroup:
    """One command's `pids` cgroup (a directory under the hierarchy)."""

    path: str
    limit: int

    def add(self, pid: int) -> None:
        """Move `pid` into the group (its children are born there). Raises `OSError`."""
        with open(os.path.join(self.path, "cgroup.procs"), "w") as procs:
            procs.write(str(pid))

    def hit(self) -> bool:
        """Whether a fork was refused for the bound (`pids.events`: `max N`, N > 0)."""
        try:
            with open(os.path.join(self.path, "pids.events")) as events:
                for line in events:
                    name, _, count = line.partition(" ")
                    if name == "max":
                        return int(count) > 0
        except (OSError, ValueError):
            pass
        return False

    def remove(self) -> None:
        """Remove the group (it must be empty: call once the namespace is gone). Never raises."""
        with contextlib.suppress(OSError):
            os.rmdir(self.path)


def _own_paths() -> tuple[str | None, str | None]:
    """This process's cgroup path in the v2 hierarchy and in the v1 `pids` hierarchy."""
    v2 = v1 = None
    try:
        with open("/proc/self/cgroup") as cgroups:
            for line in cgroups:
                number, controllers, path = line.rstrip("\n").split(":", 2)
                if number == "0" and controllers == "":
                    v2 = path
                elif "pids" in controllers.split(","):
                    v1 = path
    except (OSError, ValueError):
        pass
    return v2, v1


def _mounts() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(root, mount point) of each cgroup v2 mount and each v1 mount with `pids`."""
    v2: list[tuple[str, str]] = []
    v1: list[tuple[str, str]] = []
    try:
        with open("/proc/self/mountinfo") as mountinfo:
            for line in mountinfo:
                fields = line.split()
                dash = fields.index("-")
                root, point, fstype = fields[3], fields[4], fields[dash + 1]
                if fstype == "cgroup2":
                    v2.append((root, point))
                elif fstype == "cgroup" and "pids" in fields[dash + 3].split(","):
                    v1.append((root, point))
    except (OSError, ValueError, IndexError):
        pass
    return v2, v1


def _under(mounts: list[tuple[str, str]], path: str | None) -> list[str]:
    found = []
    for root, point in mounts:
        if path is None or not (path == root or path.startswith(root.rstrip("/") + "/")):
            continue
        relative = path[len(root) :].lstrip("/")
        found.append(os.path.join(point, relative) if relative else point)
    return found


def _usable(base: str) -> bool:
    """Whether a child of `base` gets a `pids.max` (probed by making one)."""
    probe = os.path.join(base, f"tether-{os.getpid()}-probe")
    try:
        os.mkdir(probe)
    except OSError:
        return False
    try:
        return os.path.exists(os.path.join(probe, "pids.max"))
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(probe)


def _remove_stale(base: str) -> None:
    """Remove the groups of tethers that are gone (only empty ones can be removed)."""
    with contextlib.suppress(OSError):
        for name in os.listdir(base):
            match = _stale().fullmatch(name)
            if match is None or int(match[1]) == os.getpid():
                continue
            try:
                os.kill(int(match[1]), 0)
            except ProcessLookupError:
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(base, name))
            except OSError:
                continue  # alive (another user's): not ours to judge


def pids_base() -> str | None:
    """The directory under which this process makes command groups, or None (found once)."""
    with _lock:
        if not _base:
            v2_path, v1_path = _own_paths()
            v2_mounts, v1_mounts = _mounts()
            found = None
            for base in _under(v2_mounts, v2_path) + _under(v1_mounts, v1_path):
                if _usable(base):
                    found = base
                    break
            if found is not None:
                _remove_stale(found)
            _base.append(found)
        return _base[0]


def command_group(limit: int) -> CommandGroup | None:
    """A new group with `pids.max` = `limit`, or None where no group can be made."""
    base = pids_base()
    if base is None:
        return None
    path = os.path.join(base, f"tether-{os.getpid()}-{next(_counter)}")
    try:
        os.mkdir(path)
    except OSError:
        return None
    group = CommandGroup(path, limit)
    try:
        with open(os.path.join(path, "pids.max"), "w") as pids_max:
            pids_max.write(str(limit))
    except OSError:
        group.remove()
        return None
    return group
