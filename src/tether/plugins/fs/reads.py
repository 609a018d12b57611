"""Opening a file for reading *beneath* the directory its path was confined to.

Owns `open_for_read(top, target)`: a descriptor of the regular file `target.key`, opened from a
descriptor of `top` (the workspace root, or the readable directory the path was found under)
without following any symbolic link (`beneath.py`), so a directory on the path swapped for a
link to elsewhere between resolution and the open (a background command exchanging the two in a
loop) fails the read instead of reading outside. The file itself is opened `O_NOFOLLOW |
O_NONBLOCK` and must be a regular file by the `fstat` of that very descriptor: a FIFO or device
never blocks the read. `top=None` (an unconfined provider) opens the resolved path as given.
Does not own where a path may be read (local.py's confinement) or decoding (text.py).
"""

from __future__ import annotations

import errno
import os
import stat as stat_mode
from typing import Final

from .beneath import DIRECTORY_FLAGS, open_directory, split_beneath
from .errors import FS_NOT_REGULAR_FILE, FS_SANDBOX_DENIED, FsError, os_error
from .seam import FsTarget

__all__ = ["open_for_read"]

_FILE_FLAGS: Final = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


def _swapped(display: str, error: OSError) -> FsError:
    return FsError(
        f'cannot read "{display}": a symbolic link is on its path (the file tools never read'
        " through one once the path is resolved; it may have been swapped in meanwhile);"
        " nothing was read",
        FS_SANDBOX_DENIED,
        cause=error,
    )


def _open_beneath(top: str, target: FsTarget) -> int:
    display = target.display_path
    try:
        parts = split_beneath(top, target.key)
    except ValueError:
        parts = []
    if not parts:
        raise FsError(f'cannot read "{display}": not a regular file', FS_NOT_REGULAR_FILE)
    *parents, name = parts
    try:
        top_fd = os.open(top, DIRECTORY_FLAGS)
    except OSError as error:
        raise os_error(error, "read", display) from None
    try:
        dir_fd = open_directory(top_fd, parents, create=False)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EXDEV):
            raise _swapped(display, error) from None
        raise os_error(error, "read", display) from None
    finally:
        os.close(top_fd)
    try:
        return os.open(name, _FILE_FLAGS | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _swapped(display, error) from None
        raise os_error(error, "read", display) from None
    finally:
        os.close(dir_fd)


def open_for_read(top: str | None, target: FsTarget) -> int:
    """A blocking descriptor of the regular file at `target`, reached beneath `top` (see the
    module note). Raises FsError: FS_NOT_FOUND, FS_NOT_REGULAR_FILE, FS_SANDBOX_DENIED (a link
    on the path), FS_PERMISSION_DENIED, ..."""
    if top is None:
        try:
            fd = os.open(target.key, _FILE_FLAGS)
        except OSError as error:
            raise os_error(error, "read", target.display_path) from None
    else:
        fd = _open_beneath(top, target)
    try:
        mode = os.fstat(fd).st_mode
        if not stat_mode.S_ISREG(mode):
            display = target.display_path
            raise FsError(f'cannot read "{display}": not a regular file', FS_NOT_REGULAR_FILE)
        os.set_blocking(fd, True)
    except OSError as error:
        os.close(fd)
        raise os_error(error, "read", target.display_path) from None
    except BaseException:
        os.close(fd)
        raise
    return fd
