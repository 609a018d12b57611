"""Filesystem errors: one coded `FsError` and the translation of OS errors at the seam.

Owns: the `FS_*` codes (spec §6.1), `FsError`, `os_error()` (an `OSError` -> the matching coded
error with the cause chained) and `aborted()` (the `FS_ABORTED` error of a cancelled operation).
Does not own: the model-facing remediation suffixes (tools.py adds them for write/edit only).

    HarnessError
     └── FsError          .code in FS_CODES; .name == "FsError"

The tools turn the seam's FS_ABORTED into `tether.tools.ToolCallAborted` (`ABORTED`), so a
cancelled fs call reads like any other cancelled call.
"""

from __future__ import annotations

import errno
from typing import Final

from ...core.errors import HarnessError
from ...core.signals import AbortSignal, as_exception

__all__ = [
    "FS_ABORTED",
    "FS_AMBIGUOUS_EDIT",
    "FS_CODES",
    "FS_EDIT_NOT_FOUND",
    "FS_IO_ERROR",
    "FS_NOT_DIRECTORY",
    "FS_NOT_FOUND",
    "FS_NOT_OBSERVED",
    "FS_NOT_REGULAR_FILE",
    "FS_NOT_TEXT",
    "FS_PERMISSION_DENIED",
    "FS_SANDBOX_DENIED",
    "FS_STALE_VERSION",
    "FS_TOO_LARGE",
    "FsError",
    "check_signal",
    "os_error",
    "refuse_read_only",
]

FS_NOT_FOUND: Final = "FS_NOT_FOUND"
FS_NOT_DIRECTORY: Final = "FS_NOT_DIRECTORY"
FS_NOT_TEXT: Final = "FS_NOT_TEXT"
FS_NOT_REGULAR_FILE: Final = "FS_NOT_REGULAR_FILE"
FS_TOO_LARGE: Final = "FS_TOO_LARGE"
FS_PERMISSION_DENIED: Final = "FS_PERMISSION_DENIED"
FS_SANDBOX_DENIED: Final = "FS_SANDBOX_DENIED"
FS_IO_ERROR: Final = "FS_IO_ERROR"
FS_STALE_VERSION: Final = "FS_STALE_VERSION"
FS_NOT_OBSERVED: Final = "FS_NOT_OBSERVED"
FS_AMBIGUOUS_EDIT: Final = "FS_AMBIGUOUS_EDIT"
FS_EDIT_NOT_FOUND: Final = "FS_EDIT_NOT_FOUND"
FS_ABORTED: Final = "FS_ABORTED"

FS_CODES: Final = frozenset(
    {
        FS_NOT_FOUND,
        FS_NOT_DIRECTORY,
        FS_NOT_TEXT,
        FS_NOT_REGULAR_FILE,
        FS_TOO_LARGE,
        FS_PERMISSION_DENIED,
        FS_SANDBOX_DENIED,
        FS_IO_ERROR,
        FS_STALE_VERSION,
        FS_NOT_OBSERVED,
        FS_AMBIGUOUS_EDIT,
        FS_EDIT_NOT_FOUND,
        FS_ABORTED,
    }
)


class FsError(HarnessError):
    """A filesystem failure with one of the `FS_*` codes, e.g.
    `FsError('cannot read "/w/a.txt": not found', FS_NOT_FOUND)`. `escalation`: set on an
    FS_SANDBOX_DENIED the sandbox's policy made (a protected path, outside the writable roots,
    read-only mode): what to ask a person who may let this one write through."""

    def __init__(
        self,
        message: str,
        code: str,
        *,
        cause: BaseException | None = None,
        escalation: str | None = None,
    ) -> None:
        super().__init__(message, code, cause=cause)
        self.escalation = escalation


def check_signal(signal: AbortSignal, verb: str) -> None:
    """Raise `FsError("<verb> aborted", FS_ABORTED)` (cause: the abort reason) if aborted.

    Safe to call from a worker thread: it only reads `signal.aborted`/`signal.reason`.
    """
    if signal.aborted:
        raise FsError(f"{verb} aborted", FS_ABORTED, cause=as_exception(signal.reason))


_BY_ERRNO: Final = {
    errno.ENOENT: (FS_NOT_FOUND, "not found"),
    errno.ENOTDIR: (FS_NOT_DIRECTORY, "a parent is not a directory"),
    errno.EEXIST: (FS_NOT_DIRECTORY, "a parent is not a directory"),  # makedirs over a file
    errno.EISDIR: (FS_NOT_REGULAR_FILE, "not a regular file"),
    errno.EACCES: (FS_PERMISSION_DENIED, "permission denied"),
    errno.EPERM: (FS_PERMISSION_DENIED, "permission denied"),
    errno.EROFS: (FS_PERMISSION_DENIED, "read-only file system"),
    errno.EFBIG: (FS_TOO_LARGE, "file too large"),
    errno.ELOOP: (
        FS_SANDBOX_DENIED,
        "a symbolic link is on its path (the file tools never write"
        " through one; it may have been swapped in meanwhile)",
    ),
    errno.EINVAL: (FS_IO_ERROR, "invalid argument (the path changed while it was written?)"),
    errno.ENAMETOOLONG: (FS_IO_ERROR, "file name too long"),
    errno.ENOSPC: (FS_IO_ERROR, "no space left on device"),
}


def os_error(error: OSError, verb: str, display_path: str) -> FsError:
    """`cannot <verb> "<path>": <what>` with the code matching `error.errno` (else FS_IO_ERROR)."""
    code, what = _BY_ERRNO.get(error.errno or 0, (FS_IO_ERROR, error.strerror or str(error)))
    return FsError(f'cannot {verb} "{display_path}": {what}', code, cause=error)


def refuse_read_only(writable: bool, display_path: str, verb: str) -> None:
    """FS_SANDBOX_DENIED for a path outside the workspace that may only be read."""
    if not writable:
        raise FsError(
            f'cannot {verb} "{display_path}": it is outside the workspace and may only be read',
            FS_SANDBOX_DENIED,
        )
