"""Opening a file for reading *beneath* the directory its path was confined to.

Owns `open_for_read(top, target)`: a descriptor of the regular file `target.key`, opened from a
descriptor of `top` (the workspace root, or the readable directory the path was found under)
without following any symbolic link (`beneath.py`), so a directory on the path swapped for a
link to elsewhere between resolution and the open (a background command exchanging the two in a
loop) fails the read instead of reading outside. The file itself is opened `O_NOFOLLOW |
O_NONBLOCK` and must be a regular file by the `fstat` of that very descriptor: a FIFO or device
never blocks the read. `stat_beneath(top, target)` looks at the file the same way (its
directory reached beneath `top`, the name itself not followed), so what a tool reports of a path
— that it exists, its type, its size — is never learned from a file outside. `top=None` (an
unconfined provider) opens or stats the resolved path as given. Does not own where a path may be
read (local.py's confinement) or decoding (text.py).
"""

from __future__ import annotations

import errno
import os
import stat as stat_mode
from typing import Final

from .beneath import DIRECTORY_FLAGS, open_directory, split_beneath
from .errors import FS_NOT_REGULAR_FILE, FS_SANDBOX_DENIED, FsError, os_error
from .seam import FsTarget

__all__ = ["open_for_read", "stat_beneath"]

_FILE_FLAGS: Final = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


def _swapped(display: str, error: OSError) -> FsError:
    return FsError(
        f'cannot read "{display}": a symbolic link is on its path (the file tools never read'
        " through one once the path is resolved; it may have been swapped in meanwhile);"
        " nothing was read",
        FS_SANDBOX_DENIED,
        cause=error,
    )


def _stat_swapped(display: str, error: OSError | None) -> FsError:
    return FsError(
        f'cannot access "{display}": a symbolic link is on its path (the file tools never'
        " follow one once the path is resolved; it may have been swapped in meanwhile);"
        " nothing was done",
        FS_SANDBOX_DENIED,
        cause=error,
    )


def _parts_below(top: str, target: FsTarget) -> list[str]:
    """The components of `target.key` below `top`; [] for `top` itself (or a key not below it:
    `local.py` confined it there)."""
    try:
        return split_beneath(top, target.key)
    except ValueError:
        return []


def _open_parent(top: str, parents: list[str], display: str, verb: str) -> int:
    """A descriptor of `top/parents...` reached beneath `top` without following a link."""
    try:
        top_fd = os.open(top, DIRECTORY_FLAGS)
    except OSError as error:
        raise os_error(error, verb, display) from None
    try:
        return open_directory(top_fd, parents, create=False)
    finally:
        os.close(top_fd)


def _file_on_path(top: str, parents: list[str]) -> bool:
    """Whether a component of `top/parents...` is neither a directory nor a link (so the
    ENOTDIR that opening it gave says nothing exists below it); False when a link is found or
    the path is whole again (it changed meanwhile: a swap)."""
    try:
        fd = os.open(top, DIRECTORY_FLAGS)
    except OSError:
        return False
    try:
        for part in parents:
            info = os.stat(part, dir_fd=fd, follow_symlinks=False)
            if not stat_mode.S_ISDIR(info.st_mode):
                return not stat_mode.S_ISLNK(info.st_mode)
            child = os.open(part, DIRECTORY_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


def stat_beneath(top: str | None, target: FsTarget) -> os.stat_result | None:
    """The `lstat` of `target.key` reached beneath `top` (see the module note); None when
    nothing exists there. Raises FsError: FS_SANDBOX_DENIED (a link on the path, or the name
    itself a link: swapped in after resolution), FS_PERMISSION_DENIED, ..."""
    display = target.display_path
    if top is None:
        try:
            return os.stat(target.key)
        except (FileNotFoundError, NotADirectoryError):  # nothing can exist below a file either
            return None
        except OSError as error:
            raise os_error(error, "stat", display) from None
    parts = _parts_below(top, target)
    if not parts:  # the root (or a directory the path was confined to) itself
        try:
            return os.stat(top)
        except OSError as error:
            raise os_error(error, "stat", display) from None
    *parents, name = parts
    try:
        dir_fd = _open_parent(top, parents, display, "stat")
    except OSError as error:
        if error.errno == errno.ENOENT or (
            error.errno == errno.ENOTDIR and _file_on_path(top, parents)
        ):
            return None  # nothing there, or nothing can be: a file is on its path
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EXDEV):
            raise _stat_swapped(display, error) from None
        raise os_error(error, "stat", display) from None
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise os_error(error, "stat", display) from None
    finally:
        os.close(dir_fd)
    if stat_mode.S_ISLNK(info.st_mode):
        raise _stat_swapped(display, None)
    return info


def _open_beneath(top: str, target: FsTarget) -> int:
    display = target.display_path
    parts = _parts_below(top, target)
    if not parts:
        raise FsError(f'cannot read "{display}": not a regular file', FS_NOT_REGULAR_FILE)
    *parents, name = parts
    try:
        dir_fd = _open_parent(top, parents, display, "read")
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EXDEV):
            raise _swapped(display, error) from None
        raise os_error(error, "read", display) from None
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
