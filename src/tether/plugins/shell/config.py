"""The `shell` plugin's configuration (the local bash executor's defaults and caps).

Owns the fields, their defaults and the load-time checks, with the messages
`bash-local: <field> must be a positive finite number` and
`bash-local: <field> must be no greater than 2147483647` (for values that arm a timer).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, ClassVar, Final

from ...core.timeout import MAX_TIMER_DELAY_MS
from ...kernel.model_values import SLOW, ModelValue, exactly
from ..sandbox.policy import SandboxSettings

if TYPE_CHECKING:  # resolved where a mapping is validated (tether.kernel.config_models)
    from pydantic import AfterValidator, ValidationInfo

__all__ = ["ShellConfig"]

_TIMERS: Final = frozenset({"timeout_ms", "max_timeout_ms", "grace_ms"})


def _problem(name: str, value: float) -> str | None:
    """What is wrong with `value` for the field `name`, or None."""
    if not math.isfinite(value) or value <= 0:
        return f"bash-local: {name} must be a positive finite number"
    if name in _TIMERS and value > MAX_TIMER_DELAY_MS:
        return f"bash-local: {name} must be no greater than {MAX_TIMER_DELAY_MS}"
    return None


def _positive_finite(value: float, info: ValidationInfo) -> float:
    problem = _problem(info.field_name or "", value)
    if problem is not None:
        raise ValueError(problem)
    return value


def _fast_float(name: str) -> Callable[[object], object]:
    def check(value: object) -> object:
        if type(value) is int and abs(value) <= 1 << 53:
            value = float(value)  # as pydantic makes an int given for a float
        if type(value) is not float or _problem(name, value) is not None:
            return SLOW
        return value

    return check


def _fast_int(name: str) -> Callable[[object], object]:
    def check(value: object) -> object:
        if type(value) is not int or _problem(name, value) is not None:
            return SLOW
        return value

    return check


class ShellConfig(ModelValue):
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
    Every command is contained in any mode (docs/sandbox.md).

    Validated when made (a bad value raises pydantic's `ValidationError`), without importing
    pydantic when every value is plainly valid (`tether.kernel.model_values`)."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models
    __config_fast__: ClassVar = {
        "cwd": exactly(str, None),
        "timeout_ms": _fast_float("timeout_ms"),
        "max_timeout_ms": _fast_float("max_timeout_ms"),
        "max_output_bytes": _fast_int("max_output_bytes"),
        "max_spill_bytes": _fast_int("max_spill_bytes"),
        "grace_ms": _fast_float("grace_ms"),
        "orphan_ledger_dir": exactly(str, None),
        "keep_spill_files": exactly(bool),
        "spill_dir": exactly(str, None),
        "sandbox": SandboxSettings.fast_check,
    }

    cwd: str | None = None
    timeout_ms: Annotated[float, AfterValidator(_positive_finite)] = 120_000
    max_timeout_ms: Annotated[float, AfterValidator(_positive_finite)] = 600_000
    max_output_bytes: Annotated[int, AfterValidator(_positive_finite)] = 64_000
    max_spill_bytes: Annotated[int, AfterValidator(_positive_finite)] = 64 * 1024 * 1024
    grace_ms: Annotated[float, AfterValidator(_positive_finite)] = 3000
    orphan_ledger_dir: str | None = None
    keep_spill_files: bool = False
    spill_dir: str | None = None
    sandbox: SandboxSettings = SandboxSettings()
