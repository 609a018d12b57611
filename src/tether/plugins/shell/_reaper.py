"""tether as the child subreaper of its commands, and reaping the processes it adopts.

Owns: `become_subreaper()`, called once when a subprocess service is created. On Linux it sets
`prctl(PR_SET_CHILD_SUBREAPER, 1)` (through `ctypes`, no dependency): a descendant whose parent
exits is then re-parented to this process instead of to init, so a command's process that left
its group (`setsid -f`, a double fork, `nohup setsid ... &`, a `set -m` job, `disown`) stays in
this process's tree, where `_descendants.py` finds it. Elsewhere, or if the call fails, it says
so once in the log (`tether.shell`, INFO): there, an escaped process whose parent has exited is
beyond reach.

The cost of being a subreaper: an adopted process that exits stays a zombie until this process
reaps it. `reap(entries)` reaps exactly the zombies it is given that are this process's children
and still the same process instance (pid and start time); it never calls `waitpid(-1)`, so the
children asyncio or `subprocess` wait for (their own pids) keep their exit status. Callers pass
only processes attributed to one of their commands (`_descendants.py`). A zombie that cannot be
attributed (an escaped process that exited before tether ever saw it) is left alone: it holds
only a pid until this process exits.

The flag is per process and not inherited by children. In a test run the test process itself
becomes the subreaper, which changes nothing for the children it waits for.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import sys
from collections.abc import Iterable
from typing import Final

from ._tree import ProcessEntry, entry

__all__ = ["become_subreaper", "is_subreaper", "reap"]

_log = logging.getLogger("tether.shell")

_PR_SET_CHILD_SUBREAPER: Final = 36
_state: bool | None = None


def become_subreaper() -> bool:
    """Make this process the child subreaper of its descendants (Linux); True when it is one.
    Idempotent; the first failure or a platform without it is logged once."""
    global _state
    if _state is None:
        _state = _set_subreaper()
        if not _state:
            _log.info(
                "no child subreaper on %s: a command's process that leaves its process group "
                "and outlives its parent cannot be found or stopped by tether",
                sys.platform,
            )
    return _state


def is_subreaper() -> bool:
    """`become_subreaper()` was called and succeeded."""
    return bool(_state)


def _set_subreaper() -> bool:
    if sys.platform != "linux":
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return False
    prctl.restype = ctypes.c_int
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return bool(prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def reap(entries: Iterable[ProcessEntry]) -> set[int]:
    """Reap each given zombie that is still this process's child and the same instance; returns
    the pids reaped. A live process, another's child, or a recycled pid is left alone."""
    me = os.getpid()
    reaped: set[int] = set()
    for seen in entries:
        now = entry(seen.pid)
        if now is None or not now.dead or now.ppid != me or now.start != seen.start:
            continue
        # A zombie child of ours keeps its pid until we reap it, so this waits for exactly it.
        with contextlib.suppress(ChildProcessError):
            os.waitpid(seen.pid, os.WNOHANG)
            reaped.add(seen.pid)
    return reaped
