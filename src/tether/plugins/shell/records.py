"""The shell seam's records: what callers ask a shell executor for and what they get back.

Owns: `ShellRequest`, `ResolvedShellRequest`, `ShellRunResult` with its streams `Collected`,
`ExitStatus`, `ProcessStatus` and `OutputDelta` — the values seam.py's protocols take and
return. Imported at the first command (or hook, or search), not at boot (issue 36: the shell and
bash mounts need the protocols, not these); `tether.plugins.shell.seam` names each of them too.
Does not own the protocols (seam.py) or running anything (local.py).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..sandbox.policy import SandboxMode, SandboxPolicy

__all__ = [
    "Collected",
    "ExitStatus",
    "OutputDelta",
    "ProcessStatus",
    "ResolvedShellRequest",
    "ShellRequest",
    "ShellRunResult",
]


def _no_env() -> Mapping[str, str | None]:
    return MappingProxyType({})


@dataclass(frozen=True, kw_only=True, slots=True)
class ShellRequest:
    """A command to run with `bash -c`. `timeout_ms` (foreground only), `workdir` (relative paths
    are resolved against the executor's cwd) and `stdout_max_bytes` default to the executor's
    config; `stdin` is written then closed (None: /dev/null); `env` overlays the child's scrubbed
    environment (`None` removes a variable); `sandbox` is the command's sandbox (a policy or a
    mode; None: the executor's). Every command is contained, whatever its sandbox."""

    command: str
    workdir: str | None = None
    timeout_ms: float | None = None
    stdout_max_bytes: int | None = None
    stdin: str | bytes | None = None
    env: Mapping[str, str | None] = field(default_factory=_no_env)
    sandbox: SandboxPolicy | SandboxMode | str | None = None


@dataclass(frozen=True, slots=True)
class Collected:
    """A stream's final state: `text` is the tail when `truncated`; the spill has all of it."""

    text: str
    truncated: bool
    spill_path: str | None = None


@dataclass(frozen=True, slots=True)
class ExitStatus:
    """How the leader ended: an exit code, or (`exit_code is None`) the signal that killed it.
    Both None only when the status could not be read (another waiter reaped the leader)."""

    exit_code: int | None
    signal_name: str | None


@dataclass(frozen=True, kw_only=True, slots=True)
class ResolvedShellRequest:
    """A request with every default and cap applied (`ShellExecutor.resolve`)."""

    command: str
    workdir: str
    timeout_ms: float
    stdout_max_bytes: int
    stdin: bytes | None
    env: Mapping[str, str | None]
    sandbox: SandboxPolicy
    workspace: str
    """What a `workspace-write` sandbox keeps writable (the executor's cwd)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ShellRunResult:
    """A finished foreground run. `exit_code is None` means the leader died by `signal_name`.

    Invariant: not (`timed_out` and `aborted`); both are False when the command ended on its
    own, however it ended.
    """

    exit_code: int | None
    signal_name: str | None
    timed_out: bool
    aborted: bool
    timeout_ms: float
    """The effective timeout."""
    stdout: Collected
    stderr: Collected
    bound_hit: str | None = None
    """The sandbox bound the kernel says the command ran into, by its config key
    (`max_processes`, where a cgroup counts its processes); None otherwise."""


class ProcessStatus(enum.Enum):
    """A background process: `running` until it settles (or is killed), then terminal."""

    RUNNING = "running"
    COMPLETED = "completed"
    KILLED = "killed"


@dataclass(frozen=True, slots=True)
class OutputDelta:
    """Output since the previous read: stdout, then `[stderr]` and stderr when there is any.
    `lossy`: some of it slid out of memory before it was read (the spill files have it)."""

    delta: str
    lossy: bool
    stdout_spill_path: str | None = None
    stderr_spill_path: str | None = None
