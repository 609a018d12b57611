"""Which processes each running command started: attribution over this process's tree.

Owns `claim(tree, leaders)`: walk this process's descendants from its direct children down
(parents first) and give each one to at most one command, identified by its tag:

- its environment carries a command's tag (`TETHER_PROCESS_TAG`, unique per spawn; see
  `_tree.py`), or else
- its parent belongs to a command (a child that scrubbed its environment is still its
  parent's), or else
- it is in a command leader's process group or session and started after the command was
  spawned (a zombie, whose environment can no longer be read; a `set -m` job keeps the
  leader's session).

Because tether is the child subreaper (`_reaper.py`), a process that left its command's group and
whose parent exited has been re-parented to tether, so it is in the walk. Does not own signalling
or reaping (`_process.py`, `_reaper.py`).

Tags are read from `/proc/<pid>/environ` once per process instance (pid and start) and cached
for as long as the instance is seen.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ._tree import ProcessEntry, read_tag

__all__ = ["Leader", "claim"]


@dataclass(frozen=True, slots=True)
class Leader:
    """A command's leader: its pid (= its process group and session id) and a start no process
    of the command precedes (`_tree.boot_ticks()` before the spawn; None: unknown)."""

    pid: int
    not_before: int | None


_tags: dict[tuple[int, int], str | None] = {}


def _tag(process: ProcessEntry) -> str | None:
    key = (process.pid, process.start)
    try:
        return _tags[key]
    except KeyError:
        pass
    tag = None if process.dead else read_tag(process.pid)
    _tags[key] = tag
    return tag


def claim(
    tree: Mapping[int, ProcessEntry], leaders: Mapping[str, Leader]
) -> dict[str, list[ProcessEntry]]:
    """Each tag's processes in `tree` (an entry per pid, as `_tree.read_tree()` gives), leaders
    themselves excluded; tags without processes are absent."""
    if not leaders:
        return {}
    me = os.getpid()
    children: dict[int, list[ProcessEntry]] = {}
    for process in tree.values():
        children.setdefault(process.ppid, []).append(process)
    by_pid = {leader.pid: (tag, leader) for tag, leader in leaders.items()}
    claimed: dict[str, list[ProcessEntry]] = {}
    stack: list[tuple[ProcessEntry, str | None]] = [(c, None) for c in children.get(me, ())]
    seen: set[int] = set()
    while stack:
        process, inherited = stack.pop()
        if process.pid in seen:  # a cycle cannot happen in one snapshot, but be safe
            continue
        seen.add(process.pid)
        owner = _owner(process, inherited, leaders, by_pid)
        if owner is not None and process.pid != leaders[owner].pid:
            claimed.setdefault(owner, []).append(process)
        stack.extend((child, owner) for child in children.get(process.pid, ()))
    for key in list(_tags):
        if key[0] not in tree or tree[key[0]].start != key[1]:
            del _tags[key]
    return claimed


def _owner(
    process: ProcessEntry,
    inherited: str | None,
    leaders: Mapping[str, Leader],
    by_pid: Mapping[int, tuple[str, Leader]],
) -> str | None:
    tag = _tag(process)
    if tag is not None and tag in leaders:
        return tag
    if inherited is not None:
        return inherited
    for group in (process.pgid, process.sid):
        found = by_pid.get(group)
        if found is not None:
            tag, leader = found
            if leader.not_before is None or process.start >= leader.not_before:
                return tag
    return None
