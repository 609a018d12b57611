"""The `ctx.shell` seam: what callers ask a shell executor for, and what they get back.

Owns the vocabulary shared by every executor and its callers (the `bash` tool, hooks, grep/glob):
`ShellRequest` (what a caller asks; unset fields take the executor's defaults),
`ResolvedShellRequest` (every default and cap applied), `ShellRunResult` (a foreground run,
its streams `Collected`), `ShellProcess` (a background handle, its leader's `ExitStatus`) and the
`ShellExecutor` protocol. The records are defined in records.py and named here too, imported at
their first use (issue 36). Does not own how commands run (`local.py`) or how results are shown to
a model (`render.py`).

Every asynchronous method takes `signal` as a required keyword argument. `run` rejects only for
infrastructure failures (`ShellError`: unusable workdir, missing shell, aborted before spawn); a
nonzero exit, a timeout kill and an abort kill are results. `timed_out` and `aborted` are
mutually exclusive first-cause facts; a command that kills itself reports neither.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Final, Protocol

from ...core.lazy import lazy_names
from ...core.signals import AbortSignal

if TYPE_CHECKING:  # the records are records.py's, imported at their first use (issue 36)
    from .records import (
        Collected,
        ExitStatus,
        OutputDelta,
        ProcessStatus,
        ResolvedShellRequest,
        ShellRequest,
        ShellRunResult,
    )

__all__ = [
    "Collected",
    "ExitStatus",
    "OutputDelta",
    "ProcessStatus",
    "ResolvedShellRequest",
    "ShellExecutor",
    "ShellProcess",
    "ShellRequest",
    "ShellRunResult",
]

_RECORDS: Final = frozenset(
    {
        "Collected",
        "ExitStatus",
        "OutputDelta",
        "ProcessStatus",
        "ResolvedShellRequest",
        "ShellRequest",
        "ShellRunResult",
    }
)
"""The names records.py defines, which this module hands on at their first use."""


__getattr__, __dir__ = lazy_names(globals(), dict.fromkeys(_RECORDS, ".records"))


class ShellProcess(Protocol):
    """A background command. It belongs to its handle's owner once `start` returned."""

    @property
    def status(self) -> ProcessStatus: ...
    @property
    def exit_status(self) -> ExitStatus | None:
        """The leader's exit, once settled."""
        ...

    @property
    def done(self) -> Awaitable[ExitStatus]:
        """Settlement, for the owner's watcher; never raises (cancelling a wait on it does not
        cancel the process)."""
        ...

    def read_output(self) -> OutputDelta:
        """Consuming: consecutive reads never repeat output; still works after exit."""
        ...

    def kill(self) -> bool:
        """Terminate it: True once while running, False afterwards and for finished ones."""
        ...


class ShellExecutor(Protocol):
    """The `ctx.shell` service."""

    def resolve(self, request: ShellRequest) -> ResolvedShellRequest:
        """Apply defaults and caps; raises `ValueError` naming a bad field."""
        ...

    async def run(
        self, request: ShellRequest | ResolvedShellRequest, *, signal: AbortSignal
    ) -> ShellRunResult:
        """Run in the foreground, bounded by the request's timeout and by `signal`."""
        ...

    async def start(
        self, request: ShellRequest | ResolvedShellRequest, *, signal: AbortSignal
    ) -> ShellProcess:
        """Start in the background (no timeout). `signal` only cancels the start itself."""
        ...
