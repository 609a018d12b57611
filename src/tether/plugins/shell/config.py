"""The `shell` plugin's configuration (the local bash executor's defaults and caps).

Owns the fields, their defaults and the load-time checks, with the messages
`bash-local: <field> must be a positive finite number` and
`bash-local: <field> must be no greater than 2147483647` (for values that arm a timer).
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from ...core.timeout import MAX_TIMER_DELAY_MS
from ..sandbox.policy import SandboxSettings

__all__ = ["ShellConfig"]


class ShellConfig(BaseModel):
    """`cwd`: default workdir (the process's cwd when unset); `timeout_ms`: default foreground
    timeout; `max_timeout_ms`: cap for per-call timeouts; `max_output_bytes`: per-stream tail kept
    in memory; `max_spill_bytes`: per-stream cap of the full-output spill file; `grace_ms`:
    SIGTERM→SIGKILL grace, and how long pipes may drain after the leader exits;
    `orphan_ledger_dir`: where to record live process groups so that the next tether stops the
    ones a killed tether left behind (the CLI sets `$TETHER_HOME/run`; unset: no ledger);
    `keep_spill_files`: leave full-output spill files in place when the shell closes, for a
    reader who outlives it (`tether tools call` prints their paths, then exits; they are in the
    system's temporary directory, which it cleans; default: deleted at close); `spill_dir`: where
    the private spill directory (`tether-shell-<pid>-*`) is made instead of the system's
    temporary directory — the agent boot sets `$TETHER_HOME/run/spill`, which the file tools may
    read, so the `read` of a truncated command's full output works; directories a dead tether
    left there are removed when the next shell mounts; `sandbox`: the sandbox of a request
    that does not name its own (default `workspace-write` with the workspace `cwd`; a mode name
    or `{mode, writable_roots, network_access}`, `tether.plugins.sandbox.SandboxSettings`).
    Every command is contained in any mode (docs/sandbox.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cwd: str | None = None
    timeout_ms: float = 120_000
    max_timeout_ms: float = 600_000
    max_output_bytes: int = 64_000
    max_spill_bytes: int = 64 * 1024 * 1024
    grace_ms: float = 3000
    orphan_ledger_dir: str | None = None
    keep_spill_files: bool = False
    spill_dir: str | None = None
    sandbox: SandboxSettings = SandboxSettings()

    @field_validator(
        "timeout_ms", "max_timeout_ms", "max_output_bytes", "max_spill_bytes", "grace_ms"
    )
    @classmethod
    def _positive_finite(cls, value: float, info: ValidationInfo) -> float:
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"bash-local: {info.field_name} must be a positive finite number")
        timer = info.field_name in ("timeout_ms", "max_timeout_ms", "grace_ms")
        if timer and value > MAX_TIMER_DELAY_MS:
            raise ValueError(
                f"bash-local: {info.field_name} must be no greater than {MAX_TIMER_DELAY_MS}"
            )
        return value
