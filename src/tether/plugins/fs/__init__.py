"""Filesystem capability: the `ctx.fs` seam, the read-before-write policy, `read`/`write`/`edit`.

Plugins: `tether.plugins.fs.plugin` (`fs`: all three below), `tether.plugins.fs.local`'s
`LocalFileSystem` (service `fs`), `tether.plugins.fs.observation` (`fs-observation-policy`),
`tether.plugins.fs.tools` (`tool-fs`). Modules:

    seam.py         vocabulary, events and the `FileSystem` provider protocol
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

from .errors import FsError as FsError
from .local import LocalFileSystem as LocalFileSystem
from .local import LocalFsConfig as LocalFsConfig
from .observation import ObservationLog as ObservationLog
from .plugin import FsConfig as FsConfig
from .seam import EDIT_INTENT as EDIT_INTENT
from .seam import OBSERVED as OBSERVED
from .seam import WRITE_INTENT as WRITE_INTENT
from .seam import Absent as Absent
from .seam import CreateIfAbsent as CreateIfAbsent
from .seam import EditGuard as EditGuard
from .seam import EditResult as EditResult
from .seam import FileSystem as FileSystem
from .seam import FsStat as FsStat
from .seam import FsTarget as FsTarget
from .seam import Present as Present
from .seam import ReplaceIfVersion as ReplaceIfVersion
from .seam import WriteIntent as WriteIntent
from .seam import WriteResult as WriteResult
from .tools import ToolFsConfig as ToolFsConfig

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
