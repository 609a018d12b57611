"""What a spawned process group is asked to run and what it reports.

Owns `SpawnSpec` (the command, its limits, environment overlay, stdin, grace, sandbox), the
process's `Phase`, `signal_name` (how `ExitStatus.signal_name` names a signal) and `new_tag` (a
command's `TETHER_PROCESS_TAG`); the leader's `ExitStatus` is the seam's (`seam.py`, re-exported
here). Plain data: does not own spawning, settlement or termination (`_process.py`).
`_process.py` re-exports these names (their former home).
"""

from __future__ import annotations

import enum
import os
import signal as signals
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from ..sandbox.policy import FULL_ACCESS, SandboxPolicy
from ._collect import CaptureLimits
from .records import ExitStatus

__all__ = ["ExitStatus", "Phase", "SpawnSpec", "new_tag", "signal_name"]


class Phase(enum.Enum):
    """Where a process is: the leader running, the leader gone but pipes draining, settled."""

    RUNNING = "running"
    DRAINING = "draining"
    SETTLED = "settled"


def new_tag() -> str:
    """A fresh, unique value for a command's `TETHER_PROCESS_TAG`."""
    return os.urandom(8).hex()


def signal_name(number: int) -> str:
    """`SIGTERM` for 15; `SIG<n>` for a number with no name."""
    try:
        return signals.Signals(number).name
    except ValueError:
        return f"SIG{number}"


@dataclass(frozen=True, kw_only=True, slots=True)
class SpawnSpec:
    """What to run. `argv` is never shell-interpreted; `env` entries overlay the scrubbed parent
    environment (`None` removes a variable); `stdin` is written then closed (None: /dev/null)."""

    argv: Sequence[str]
    cwd: str
    stdout: CaptureLimits
    stderr: CaptureLimits
    env: Mapping[str, str | None] = field(default_factory=lambda: MappingProxyType({}))
    stdin: bytes | None = None
    grace_ms: float = 3000
    ends_with_leader: bool = False
    """When the leader exits, stop every process the command left running before settling."""
    sandbox: SandboxPolicy = FULL_ACCESS
    """Full access is containment only; a sandboxed mode is enforced by the subprocess service."""
    workspace: str | None = None
    """The workspace a `workspace-write` sandbox keeps writable (default: `cwd`)."""
