"""The host's warm-up moment: when background work that nothing needs yet may start.

Owns `WARM_UP_EVENT` (`kernel/warm-up`, emitted synchronously with no arguments). The host emits
it when it waits on something slow that leaves the CPU free: the agent loop, when its first model
response starts to arrive. Plugins listen to start work that would otherwise compete with the
boot for the interpreter lock and a core before the first request goes out — the shell's kernel
probe and its start-up sweep cost that request 20-40 ms on two cores (issue 36, bench/README).
A listener is idempotent (the event comes again, from every agent loop), and nothing depends on
the event having come: whoever needs the work's result starts it if it has not started, and
waits for it. Does not own any such work.
"""

from __future__ import annotations

from typing import Final

from .events import declare_event

__all__ = ["WARM_UP_EVENT"]

WARM_UP_EVENT: Final = declare_event("kernel/warm-up")
"""sync `() -> None`: background work may start now (see the module note)."""
