"""The filesystem seam's records: the values `ctx.fs` takes and returns, and the observations.

Owns: `FsTarget`, `FsStat`, the write intents (`CreateIfAbsent`, `ReplaceIfVersion`), the edit
guard, the observations (`Present`, `Absent`) and the operation results — what seam.py's protocol
and events carry. Imported at the first file operation, not at boot (issue 36: a boot mounts the
seam and makes none of these); `tether.plugins.fs.seam` names each of them too. Does not own the
events or the protocol (seam.py), or any I/O (local.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

if TYPE_CHECKING:
    from .seam import FileType

__all__ = [
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
]


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
