"""Looking at processes a test started, never at anyone else's (other suites share the machine)."""

from __future__ import annotations

import os

import psutil

__all__ = ["group_gone", "group_members"]


def group_members(pgid: int) -> list[str]:
    """The processes still running in process group `pgid` (a group this test started), each as
    `pid status argv (parent ppid)`, so a failing assertion says what was left. Zombies have
    ended: a contained command's namespace init is reaped by whoever adopts it, after bwrap
    exits."""
    found = []
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) != pgid or process.status() == psutil.STATUS_ZOMBIE:
                continue
            found.append(f"{process.pid} {process.status()} {process.cmdline()} ({process.ppid()})")
        except (psutil.Error, ProcessLookupError):
            continue
    return found


def group_gone(pgid: int) -> bool:
    """Whether no process is left running in process group `pgid`."""
    return group_members(pgid) == []
