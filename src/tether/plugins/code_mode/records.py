"""The code runtime seam's records: a run's bindings and its result (see seam.py).

Owns: `ToolBindings` (the `tools` namespace of one run), `CodeRunResult` and `CodeRunError`.
Imported by the first run, not when the plugin is mounted (issue 36); `seam.py` names each of
them too. Does not own the budgets, the protocols or the failure kinds (seam.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...core.json import JsonValue
    from .seam import BindingCall, CodeRunErrorKind

__all__ = ["CodeRunError", "CodeRunResult", "ToolBindings"]


@dataclass(frozen=True, slots=True)
class CodeRunError:
    """Why a run did not complete: `kind` (spec §8.2) and a message naming what happened."""

    kind: CodeRunErrorKind
    message: str


@dataclass(frozen=True, slots=True)
class CodeRunResult:
    """What a run produced: printed `logs` (one entry per line), the returned `value` when the
    program returned one (`has_value`), or the `error` that ended it (logs are kept)."""

    logs: tuple[str, ...]
    value: JsonValue = None
    has_value: bool = False
    error: CodeRunError | None = None


@dataclass(frozen=True, slots=True)
class ToolBindings:
    """The `tools` namespace of one run: the callable `names` and how a call is answered."""

    names: tuple[str, ...]
    call: BindingCall
