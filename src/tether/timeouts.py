"""tether.timeouts: the pure timeout helpers (CONTRACT §2) — deadlines, idle watchdogs, and
reading which timeout aborted a signal.

A public path of its own for names that are importable from `tether` but not in its `__all__`.
Owns nothing: the implementation is `tether.core.timeout`.
"""

from .core.timeout import (
    MAX_TIMER_DELAY_MS,
    Deadline,
    IdleWatchdog,
    TimeoutReason,
    clamp_timeout,
    deadline,
    idle_watchdog,
    timeout_of,
)

__all__ = [
    "MAX_TIMER_DELAY_MS",
    "Deadline",
    "IdleWatchdog",
    "TimeoutReason",
    "clamp_timeout",
    "deadline",
    "idle_watchdog",
    "timeout_of",
]
