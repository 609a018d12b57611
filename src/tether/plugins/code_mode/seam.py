"""The code runtime seam, `ctx.code_runtime` (spec §8.2): what running one program means.

Owns: the request/result vocabulary (`ToolBindings`, `CodeRunResult`, `CodeRunError` and its
kinds), `CodeBudgets` (the runtime's own limits — plugin config, never model-facing),
`BindingRejected` (how a binding call fails inside the program) and the `CodeRuntime` protocol.
The three records are defined in records.py and named here too, imported at their first use.
Does not own a sandbox (`tether.plugins.code_mode.sandbox` implements one over Monty) nor tool
dispatch (`tether.plugins.code_mode.bridge` supplies the bindings).

Contract of `run()`: it *returns* a `CodeRunResult` for every program outcome — success, the
program raising, a budget running out, the signal aborting, the sandbox dying — and raises only
for caller misuse (a bad binding name). When it returns, the sandbox worker is gone and no
binding call it started is still being answered by the runtime (the binding owner settles what
it dispatched; see the bridge).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, Protocol

from ...core.json import JsonValue
from ...core.lazy import lazy_names
from ...core.signals import AbortSignal

if TYPE_CHECKING:  # the records are records.py's, imported at their first use (issue 36)
    from .records import CodeRunError, CodeRunResult, ToolBindings

__all__ = [
    "CODE_RUN_FAILED",
    "BindingRejected",
    "CodeBudgets",
    "CodeRunError",
    "CodeRunErrorKind",
    "CodeRunResult",
    "CodeRuntime",
    "ToolBindings",
]

CODE_RUN_FAILED: Final = "CODE_RUN_FAILED"

CodeRunErrorKind = Literal[
    "exception", "timeout", "abort", "worker-exit", "invalid-output", "output-limit"
]

_RECORDS: Final = frozenset({"CodeRunError", "CodeRunResult", "ToolBindings"})
"""The names records.py defines, which this module hands on at their first use."""


__getattr__, __dir__ = lazy_names(globals(), dict.fromkeys(_RECORDS, ".records"))


class BindingRejected(Exception):
    """A binding call failed: the program sees `ToolCallError` carrying `message`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BindingCall(Protocol):
    """`call(name, raw_args, alone=...)`: resolves with the tool's canonical JSON value or raises
    `BindingRejected`. The runtime awaits it; it never cancels it. `alone` says the program
    awaits this call at once and nothing else in the sandbox can run until it settles (so no
    other call can arrive meanwhile)."""

    def __call__(
        self, name: str, raw_args: object, *, alone: bool = False
    ) -> Awaitable[JsonValue]: ...


def _positive(value: float, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{what} must be a number; got {type(value).__name__}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what} must be a positive finite number; got {value!r}")


@dataclass(frozen=True, slots=True)
class CodeBudgets:
    """Per-run limits (spec §8.2 reference budgets, Python equivalents).

    - `compute_ms`: sandbox busy time, excluding time suspended waiting for tools or sleeping;
    - `max_wall_ms`: a deadline on the whole run;
    - `max_calls`: tool calls one run may dispatch;
    - `max_memory_mb`: the sandbox heap;
    - `max_output_bytes`: printed output plus the returned value (compact JSON, UTF-8).
    """

    compute_ms: float = 60_000
    max_wall_ms: float = 600_000
    max_calls: int = 100
    max_memory_mb: float = 256
    max_output_bytes: int = 1_048_576

    def __post_init__(self) -> None:
        _positive(self.compute_ms, "compute_ms")
        _positive(self.max_wall_ms, "max_wall_ms")
        _positive(self.max_memory_mb, "max_memory_mb")
        for name in ("max_calls", "max_output_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}")
        if self.max_wall_ms > 2_147_483_647:
            raise ValueError(f"max_wall_ms must be at most 2147483647; got {self.max_wall_ms!r}")


class CodeRuntime(Protocol):
    """`ctx.code_runtime`: runs one program against one set of bindings."""

    @property
    def language(self) -> Literal["python"]: ...

    @property
    def isolation(self) -> Literal["worker-thread", "process", "container"]: ...

    async def run(
        self, *, program: str, bindings: ToolBindings, signal: AbortSignal
    ) -> CodeRunResult:
        """Run `program` (the body of an async function) to an outcome; see the module note."""
        ...
