"""The writer lock of a session directory, and the small file facts around it.

Owns `WriterLock` (an exclusive `flock` on `<session dir>/writer.lock` that records the holder's
pid, retaken when a sweep replaced the file), `same_file` and `fsync_dir`. Does not own what the
lock protects (`log.py`, `store.py`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from .events import SessionError

__all__ = ["WriterLock", "fsync_dir", "same_file"]


class WriterLock:
    """An exclusive `flock` on `<session dir>/writer.lock`, which also records the holder's pid."""

    __slots__ = ("_fd", "path")

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, path: Path, session_id: str) -> WriterLock:
        """Take the lock. Raises SessionError(`SESSION_LOCKED`) naming the holder's pid.

        A sweep may remove the lock file (and its directory) of a session that was never
        published; a lock taken on a file that is no longer at `path` is retaken.
        """
        while True:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_pid(fd)
                os.close(fd)
                who = f"pid {holder}" if holder else "another process"
                raise SessionError(
                    f'session "{session_id}" is already open for writing by {who}; close that'
                    f" tether (or wait for it to finish) before writing to it (lock: {path})",
                    "SESSION_LOCKED",
                ) from None
            except BaseException:
                os.close(fd)
                raise
            if same_file(fd, path):
                break
            os.close(fd)  # swept between our open and our flock: take the new one
        with contextlib.suppress(OSError):  # the pid is a courtesy; a full disk must not stop us
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(path, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Release the lock (idempotent). The lock file stays; its content is stale."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def same_file(fd: int, path: Path) -> bool:
    """Whether `path` still names the file open on `fd`."""
    try:
        there = os.stat(path)
    except FileNotFoundError:
        return False
    here = os.fstat(fd)
    return (there.st_dev, there.st_ino) == (here.st_dev, here.st_ino)


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
