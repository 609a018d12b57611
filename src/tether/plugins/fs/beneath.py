"""Opening a file's directory *beneath* a root, without following any symbolic link.

Owns `open_directory(root, parts, create=...)`: a descriptor of the directory `root/parts[0]/...`
reached from a descriptor of `root`, never through a symlink and never above `root`, so that
whatever the model does to the paths meanwhile (a background command swapping a directory for a
link to elsewhere, in a loop), a file created, replaced or read through that descriptor is
inside `root`. Where the kernel has `openat2` (Linux 5.6) it resolves the whole path in one call
with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`; elsewhere (and to create
missing directories) it walks one component at a time, `openat(O_NOFOLLOW | O_DIRECTORY)` from
the previous descriptor. A component that is a link is refused (`ELOOP`), one that is not a
directory too (`ENOTDIR`). Does not own what is done in the directory (local.py) or whether it
may be (`tether.plugins.sandbox.boundary`).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
from collections.abc import Sequence
from typing import Any, Final

__all__ = ["DIRECTORY_FLAGS", "open_directory", "openat2_available", "split_beneath"]

DIRECTORY_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

_SYS_OPENAT2: Final = 437  # the same number on every architecture of the unified table
_RESOLVE_NO_MAGICLINKS: Final = 0x02
_RESOLVE_NO_SYMLINKS: Final = 0x04
_RESOLVE_BENEATH: Final = 0x08


class _OpenHow(ctypes.Structure):
    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    )


def _load_syscall() -> Any:
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "aarch64", "arm64"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.syscall
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_long
    return function


_syscall = _load_syscall()
_openat2_usable = _syscall is not None


def openat2_available() -> bool:
    """Whether `openat2` is used (it is dropped for the process at its first ENOSYS/EPERM)."""
    return _openat2_usable


def _openat2(dir_fd: int, path: str) -> int:
    """`openat2(dir_fd, path, O_DIRECTORY | O_NOFOLLOW, beneath, no symlinks)`; raises OSError
    (ENOSYS when the kernel, or a seccomp filter, does not have it)."""
    how = _OpenHow(
        DIRECTORY_FLAGS, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS
    )
    assert _syscall is not None
    fd = int(
        _syscall(
            ctypes.c_long(_SYS_OPENAT2),
            ctypes.c_int(dir_fd),
            ctypes.c_char_p(os.fsencode(path)),
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)
    return fd


def split_beneath(root: str, path: str) -> list[str]:
    """The components of the absolute `path` below the absolute `root` (`[]` for the root
    itself). Raises ValueError when `path` is not below `root` or a component is `.`/`..`."""
    relative = os.path.relpath(path, root)
    if relative == ".":
        return []
    parts = relative.split(os.sep)
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"{path!r} is not beneath {root!r}")
    return parts


def open_directory(root_fd: int, parts: Sequence[str], *, create: bool) -> int:
    """A new descriptor of the directory `parts` below the directory `root_fd` (a dup of it for
    no parts), reached without following links; missing directories are made (mode 0777 less
    the umask) when `create`. Raises OSError: ELOOP for a link on the way, ENOTDIR, ENOENT."""
    global _openat2_usable
    if parts and _openat2_usable:
        try:
            return _openat2(root_fd, "/".join(parts))
        except OSError as error:
            if error.errno in (errno.ENOSYS, errno.EPERM):
                _openat2_usable = False
            elif error.errno != errno.ENOENT or not create:
                raise
    return _walk(root_fd, parts, create=create)


def _walk(root_fd: int, parts: Sequence[str], *, create: bool) -> int:
    fd = os.dup(root_fd)
    try:
        for part in parts:
            try:
                child = os.open(part, DIRECTORY_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                child = os.open(part, DIRECTORY_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd
