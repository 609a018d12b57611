"""Filesystem capability: the `ctx.fs` seam, the read-before-write policy, `read`/`write`/`edit`.

Plugins: `tether.plugins.fs.plugin` (`fs`: all three below), `tether.plugins.fs.local`'s
`LocalFileSystem` (service `fs`), `tether.plugins.fs.observation` (`fs-observation-policy`),
`tether.plugins.fs.tools` (`tool-fs`). Modules:

    seam.py         vocabulary, events and the `FileSystem` provider protocol
    records.py      the seam's records (targets, stats, intents, observations, results)
    local.py        `LocalFileSystem`: resolution, confinement, reads, which sandbox applies
    writes.py       writes and edits inside the sandbox, beneath the writable root
    beneath.py      opening a directory beneath a root without following links
    text.py         version tokens, the binary sniff, strict UTF-8
    observation.py  per-owner observations answering the write/edit intent waterfalls
    tools.py        the tool bodies and remediation
    args.py         model-facing parameters and their validation texts
    window.py       the `read` line window
    render.py       result envelopes, footers, diff hunks
    errors.py       `FsError` and the `FS_*` codes
"""

from ...core.lazy import lazy_names
from .errors import FsError as FsError
from .local import LocalFileSystem as LocalFileSystem
from .local import LocalFsConfig as LocalFsConfig
from .observation import ObservationLog as ObservationLog
from .plugin import FsConfig as FsConfig
from .seam import EDIT_INTENT as EDIT_INTENT
from .seam import OBSERVED as OBSERVED
from .seam import WRITE_INTENT as WRITE_INTENT
from .seam import FileSystem as FileSystem
from .tools import ToolFsConfig as ToolFsConfig

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .records import Absent as Absent
    from .records import CreateIfAbsent as CreateIfAbsent
    from .records import EditGuard as EditGuard
    from .records import EditResult as EditResult
    from .records import FsStat as FsStat
    from .records import FsTarget as FsTarget
    from .records import Present as Present
    from .records import ReplaceIfVersion as ReplaceIfVersion
    from .records import WriteIntent as WriteIntent
    from .records import WriteResult as WriteResult

_RECORDS: frozenset[str] = frozenset(
    {
        "Absent",
        "CreateIfAbsent",
        "EditGuard",
        "EditResult",
        "FsStat",
        "FsTarget",
        "Present",
        "ReplaceIfVersion",
        "WriteIntent",
        "WriteResult",
    }
)
"""Names of `records.py`, imported at their first use: mounting the seam makes no record."""


__getattr__, __dir__ = lazy_names(globals(), dict.fromkeys(_RECORDS, ".records"))


__all__ = [
    "EDIT_INTENT",
    "OBSERVED",
    "WRITE_INTENT",
    "Absent",
    "CreateIfAbsent",
    "EditGuard",
    "EditResult",
    "FileSystem",
    "FsConfig",
    "FsError",
    "FsStat",
    "FsTarget",
    "LocalFileSystem",
    "LocalFsConfig",
    "ObservationLog",
    "Present",
    "ReplaceIfVersion",
    "ToolFsConfig",
    "WriteIntent",
    "WriteResult",
]
