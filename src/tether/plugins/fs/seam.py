"""The filesystem seam `ctx.fs`: its vocabulary and the protocol a provider implements.

Owns: what tools rely on (spec §6.1) — `FsTarget` (identity + the path shown to the model),
`FsStat` with its opaque `version`, the write intents and the edit guard, the operation results,
the three events the observation policy hangs on, and `FileSystem`, the provider protocol.
Does not own: any I/O (local.py), observation bookkeeping (observation.py), the tools (tools.py).

Every async method takes a required keyword-only `signal`. There are no timeouts on file I/O:
a local read or write has no remote peer to wait for, and a stuck disk is not something a timer
can fix; cancellation is the caller's signal, checked before every side effect.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias

from ...core.signals import AbortSignal
from ...kernel.events import EventKey, Next

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


@dataclass(frozen=True, slots=True)
class FsTarget:
    """A resolved path. `key` is the opaque identity (local: the realpath); `display_path` is the
    absolute, unresolved path the model sees in results and errors; `writable` is False for a
    path outside a confined workspace that may only be read (the provider's readable
    directories: where tether keeps spilled outputs), and writes and edits refuse it."""

    key: str
    display_path: str
    writable: bool = True


@dataclass(frozen=True, slots=True)
class FsStat:
    """What exists at a target. `version` changes whenever the content may have (local:
    device:inode:size:mtime_ns:ctime_ns); compare versions only for equality."""

    version: str
    type: FileType
    size: int | None


@dataclass(frozen=True, slots=True)
class CreateIfAbsent:
    """Write intent: create the file; refuse (`FS_NOT_OBSERVED`) if one already exists."""


@dataclass(frozen=True, slots=True)
class ReplaceIfVersion:
    """Write intent: replace the file only while it is still at `version` (`FS_STALE_VERSION`)."""

    version: str


WriteIntent: TypeAlias = CreateIfAbsent | ReplaceIfVersion | None
"""None: create or overwrite unconditionally."""


@dataclass(frozen=True, slots=True)
class EditGuard:
    """Edit only while the file is still at `version`; checked before matching."""

    version: str


@dataclass(frozen=True, slots=True)
class Present:
    """An observation: the target existed at `version`."""

    version: str


@dataclass(frozen=True, slots=True)
class Absent:
    """An observation: nothing existed at the target."""


Observation: TypeAlias = Present | Absent


@dataclass(frozen=True, slots=True)
class WriteResult:
    """`before`: the prior LF-normalised text, or None (new file, not UTF-8 text, or either side
    10 MiB or more). `after`: the text written."""

    operation: Literal["create", "update"]
    version: str
    before: str | None
    after: str


@dataclass(frozen=True, slots=True)
class EditResult:
    """`before`/`after`: the whole file, LF-normalised, around the replacement."""

    version: str
    before: str
    after: str


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
