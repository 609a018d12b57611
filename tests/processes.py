"""Looking at processes a test started, never at anyone else's (other suites share the machine)."""

from __future__ import annotations

import os

__all__ = ["group_gone"]


def group_gone(pgid: int) -> bool:
    """Whether no process is left in process group `pgid` (a group this test started)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False
