"""The filesystem seam `ctx.fs`: its vocabulary and the protocol a provider implements.

Owns: what tools rely on (spec §6.1) — `FsTarget` (identity + the path shown to the model),
`FsStat` with its opaque `version`, the write intents and the edit guard, the operation results,
the three events the observation policy hangs on, and `FileSystem`, the provider protocol. The
records themselves are defined in records.py and named here too, imported at their first use.
Does not own: any I/O (local.py), observation bookkeeping (observation.py), the tools (tools.py).

Every async method takes a required keyword-only `signal`. There are no timeouts on file I/O:
a local read or write has no remote peer to wait for, and a stuck disk is not something a timer
can fix; cancellation is the caller's signal, checked before every side effect.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, Final, Literal, Protocol, TypeAlias

from ...core.lazy import lazy_names
from ...core.signals import AbortSignal
from ...kernel.events import EventKey, Next

if TYPE_CHECKING:  # the records are records.py's, imported at their first use (issue 36)
    from .records import (
        Absent,
        CreateIfAbsent,
        EditGuard,
        EditResult,
        FsStat,
        FsTarget,
        Observation,
        Present,
        ReplaceIfVersion,
        WriteIntent,
        WriteResult,
    )

__all__ = [
    "EDIT_INTENT",
    "OBSERVED",
    "WRITE_INTENT",
    "Absent",
    "CreateIfAbsent",
    "EditGuard",
    "EditResult",
    "FileSystem",
    "FileType",
    "FsStat",
    "FsTarget",
    "Observation",
    "Present",
    "ReplaceIfVersion",
    "WriteIntent",
    "WriteResult",
]

FileType: TypeAlias = Literal["file", "directory", "other"]

_RECORDS: Final = frozenset(
    {
        "Absent",
        "CreateIfAbsent",
        "EditGuard",
        "EditResult",
        "FsStat",
        "FsTarget",
        "Observation",
        "Present",
        "ReplaceIfVersion",
        "WriteIntent",
        "WriteResult",
    }
)
"""The names records.py defines, which this module hands on at their first use."""


__getattr__, __dir__ = lazy_names(globals(), dict.fromkeys(_RECORDS, ".records"))


WRITE_INTENT: EventKey[Callable[[FsTarget, object, Next[WriteIntent]], Awaitable[WriteIntent]]] = (
    EventKey("fs/write-intent")
)
"""Waterfall `(target, actor, next) -> WriteIntent`, base None. `actor` is the calling agent."""

EDIT_INTENT: EventKey[
    Callable[[FsTarget, object, Next[EditGuard | None]], Awaitable[EditGuard | None]]
] = EventKey("fs/edit-intent")
"""Waterfall `(target, actor, next) -> EditGuard | None`, base None; may raise an FsError."""

OBSERVED: EventKey[Callable[[FsTarget, Observation, object], None]] = EventKey("fs/observed")
"""Emit `(target, observation, actor)`; listeners are synchronous recorders."""


class FileSystem(Protocol):
    """The `ctx.fs` provider protocol. Every method raises `FsError` (see errors.py) and checks
    `signal` before each side effect (`FS_ABORTED`, `<verb> aborted`)."""

    async def resolve(self, path: str, *, cwd: str | None = None, signal: AbortSignal) -> FsTarget:
        """Resolve `path` against `cwd` (else the workspace root). Blank ⇒ FS_NOT_FOUND;
        outside a confined workspace ⇒ FS_SANDBOX_DENIED."""
        ...

    async def stat(self, target: FsTarget, *, signal: AbortSignal) -> FsStat | None:
        """What is at `target` (symlinks followed), None when nothing is."""
        ...

    async def read_text(self, target: FsTarget, *, signal: AbortSignal) -> str:
        """The whole file as UTF-8 text (FS_NOT_TEXT for binary or invalid UTF-8)."""
        ...

    def stream_text(self, target: FsTarget, *, signal: AbortSignal) -> AsyncGenerator[str, None]:
        """The file as UTF-8 text chunks, the signal checked between chunks. Close it
        (`contextlib.aclosing`) when stopping early."""
        ...

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        *,
        intent: WriteIntent = None,
        escalated: bool = False,
        signal: AbortSignal,
    ) -> WriteResult:
        """Atomically create or replace the file under `intent`, creating parents; inside the
        sandbox's writable roots and never a protected path unless `escalated` (a person allowed
        this one write outside it); FS_SANDBOX_DENIED with `.escalation` set otherwise."""
        ...

    async def edit_text(
        self,
        target: FsTarget,
        *,
        old_string: str,
        new_string: str,
        replace_all: bool = False,
        guard: EditGuard | None = None,
        escalated: bool = False,
        signal: AbortSignal,
    ) -> EditResult:
        """Replace literal text (exactly one match unless `replace_all`), serialized per target;
        the sandbox applies as for `write_text`."""
        ...
