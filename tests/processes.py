"""Looking at processes a test started, never at anyone else's (other suites share the machine)."""

from __future__ import annotations

import os

import psutil

__all__ = ["group_gone"]


def group_gone(pgid: int) -> bool:
    """Whether no process is left running in process group `pgid` (a group this test started).
    Zombies are gone: a contained command's namespace init is reaped by whoever adopts it, after
    bwrap exits."""
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == pgid and process.status() != psutil.STATUS_ZOMBIE:
                return False
        except (psutil.Error, ProcessLookupError):
            continue
    return True
