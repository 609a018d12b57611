"""Writes and edits beneath a writable root: what `LocalFileSystem.write_text`/`edit_text` run
in a worker thread.

Owns: the sandbox's refusal (FS_SANDBOX_DENIED carrying the escalation question, unless a person
allowed this one write: `escalated`), and the act itself, made *beneath* the writable root the
path was checked against (`tether.plugins.sandbox.boundary`): the target's directory is opened
from a descriptor of that root without following any link (`beneath.py`), and the stat, the
edit's read (its version is the `fstat` of the very descriptor read), the temp file (fsync, an
existing file's mode kept, new files 0666 less the umask) and the rename over the name all happen
relative to that directory descriptor — so a path swapped meanwhile (a directory exchanged for a
link to elsewhere) fails the write instead of redirecting it, and a failed write leaves no temp
file. The signal is read (never awaited) before each step that has an effect. Does not own the
policy (the service passes a `WriteCheck` thunk), locking per target (the service), resolution.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat as stat_mode
from collections.abc import Callable

from ...core.signals import AbortSignal
from ..sandbox.boundary import WriteCheck
from .beneath import DIRECTORY_FLAGS, open_directory, split_beneath
from .errors import (
    FS_AMBIGUOUS_EDIT,
    FS_EDIT_NOT_FOUND,
    FS_NOT_OBSERVED,
    FS_NOT_REGULAR_FILE,
    FS_SANDBOX_DENIED,
    FS_STALE_VERSION,
    FsError,
    check_signal,
    os_error,
)
from .seam import (
    CreateIfAbsent,
    EditGuard,
    EditResult,
    FsTarget,
    ReplaceIfVersion,
    WriteIntent,
    WriteResult,
)
from .text import BEFORE_TEXT_LIMIT, decode, is_binary, lf, version_of

__all__ = ["edit_beneath", "write_beneath"]


def _new_file_mode() -> int:
    """0666 less the process umask, as `open()` would create it (read without changing it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o644


class _Place:
    """Where one write or edit happens: a descriptor of the target's directory, reached beneath
    its writable root without following links (`beneath.py`), and the file's name in it. Every
    later step (stat, read, temp file, rename) is relative to that descriptor, so nothing can
    redirect it outside the root. A context manager closing the descriptor."""

    __slots__ = ("dir_fd", "display", "name", "verb")

    def __init__(self, check: WriteCheck, verb: str, display: str, *, create: bool) -> None:
        self.verb, self.display = verb, display
        try:
            parts = split_beneath(check.root, check.path)
        except ValueError:
            parts = []
        if not parts:
            raise FsError(f'cannot {verb} "{display}": not a regular file', FS_NOT_REGULAR_FILE)
        *parents, self.name = parts
        try:
            root_fd = os.open(check.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as error:
            raise os_error(error, verb, display) from None
        try:
            self.dir_fd = open_directory(root_fd, parents, create=create)
        except FileNotFoundError as error:
            if not create:
                raise _missing(verb, display) from None
            raise self._walk_error(error, parents, root_fd) from None
        except OSError as error:
            raise self._walk_error(error, parents, root_fd) from None
        finally:
            os.close(root_fd)

    def _walk_error(self, error: OSError, parents: list[str], root_fd: int) -> FsError:
        if error.errno == errno.ELOOP or (
            error.errno == errno.ENOTDIR and _swapped(root_fd, parents)
        ):
            return FsError(
                f'cannot {self.verb} "{self.display}": a directory on its path is a symbolic'
                " link (the file tools never write through one; it may have been swapped in"
                " meanwhile); nothing was written",
                FS_SANDBOX_DENIED,
                cause=error,
            )
        return os_error(error, self.verb, self.display)

    def __enter__(self) -> _Place:
        return self

    def __exit__(self, *_: object) -> None:
        os.close(self.dir_fd)

    def lstat(self) -> os.stat_result | None:
        """What is at the name now (a link is not followed), None when nothing is."""
        try:
            return os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise os_error(error, self.verb, self.display) from None

    def open_file(self) -> int:
        """The existing file, for reading, never through a link."""
        try:
            # O_NONBLOCK: a FIFO swapped in meanwhile never blocks (fstat then refuses it)
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
            return os.open(self.name, flags, dir_fd=self.dir_fd)
        except FileNotFoundError:
            raise _missing(self.verb, self.display) from None
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise _not_regular(self.verb, self.display) from None
            raise os_error(error, self.verb, self.display) from None

    def publish(self, data: bytes, *, mode: int, signal: AbortSignal) -> os.stat_result:
        """Write `data` to a new temp file in this directory, fsync, chmod, rename it over the
        name (in the same directory descriptor); the temp file is removed on any failure."""
        verb, display, dir_fd = self.verb, self.display, self.dir_fd
        temp = f".{self.name[:64]}.{secrets.token_hex(6)}.tether-tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            check_signal(signal, verb)
            fd = os.open(temp, flags, 0o600, dir_fd=dir_fd)
        except OSError as error:
            raise os_error(error, verb, display) from None
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
                os.fchmod(fd, mode)
                check_signal(signal, verb)  # the last moment the write can still be refused
                os.rename(temp, self.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                return os.fstat(fd)
            finally:
                os.close(fd)
        except BaseException as error:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
            if isinstance(error, OSError):
                raise os_error(error, verb, display) from None
            raise


def _missing(verb: str, display: str) -> FsError:
    why = "file no longer exists"
    return FsError(f'cannot {verb} "{display}": {why}', FS_STALE_VERSION)


def _not_regular(verb: str, display: str) -> FsError:
    return FsError(f'cannot {verb} "{display}": not a regular file', FS_NOT_REGULAR_FILE)


def _swapped(root_fd: int, parents: list[str]) -> bool:
    """Explaining an ENOTDIR of the walk: False when a component is a plain non-directory now
    (a file where a directory was asked for); True when one is a link, or none is in the way
    any more (the path changed between the failure and now)."""
    fd = os.dup(root_fd)
    try:
        for part in parents:
            try:
                info = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except OSError:
                return True
            if stat_mode.S_ISLNK(info.st_mode):
                return True
            if not stat_mode.S_ISDIR(info.st_mode):
                return False
            try:
                child = os.open(part, DIRECTORY_FLAGS, dir_fd=fd)
            except OSError:
                return True
            os.close(fd)
            fd = child
        return True
    finally:
        os.close(fd)


def _read_text_at(place: _Place, st: os.stat_result, new_size: int) -> str | None:
    """The prior LF-normalised text for the diff, or None (too big, binary, not UTF-8)."""
    if st.st_size >= BEFORE_TEXT_LIMIT or new_size >= BEFORE_TEXT_LIMIT:
        return None
    try:
        fd = place.open_file()
    except FsError:
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read()
        except OSError:
            return None
    if is_binary(data):
        return None
    try:
        return lf(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def _refuse_outside(check: WriteCheck, verb: str, display: str, escalated: bool) -> None:
    if check.refusal is not None and not escalated:
        raise FsError(
            f'cannot {verb} "{display}": {check.refusal}',
            FS_SANDBOX_DENIED,
            escalation=f'{verb} "{display}": {check.refusal}',
        )


def write_beneath(
    target: FsTarget,
    content: str,
    intent: WriteIntent,
    boundary: Callable[[], WriteCheck],
    escalated: bool,
    signal: AbortSignal,
) -> WriteResult:
    display = target.display_path
    check_signal(signal, "write")
    check = boundary()
    _refuse_outside(check, "write", display, escalated)
    with _Place(check, "write", display, create=True) as place:
        st = place.lstat()
        if st is not None and not stat_mode.S_ISREG(st.st_mode):
            raise _not_regular("write", display)
        if isinstance(intent, CreateIfAbsent) and st is not None:
            raise FsError(
                f'cannot overwrite existing "{display}" without reading it first', FS_NOT_OBSERVED
            )
        if isinstance(intent, ReplaceIfVersion):
            if st is None:
                raise FsError(f'cannot write "{display}": file no longer exists', FS_STALE_VERSION)
            if version_of(st) != intent.version:
                raise FsError(
                    f'cannot write "{display}": file changed since it was read', FS_STALE_VERSION
                )
        data = content.encode("utf-8")
        before = None if st is None else _read_text_at(place, st, len(data))
        mode = _new_file_mode() if st is None else stat_mode.S_IMODE(st.st_mode)
        written = place.publish(data, mode=mode, signal=signal)
    return WriteResult(
        operation="create" if st is None else "update",
        version=version_of(written),
        before=before,
        after=content,
    )


def edit_beneath(
    target: FsTarget,
    *,
    old_string: str,
    new_string: str,
    replace_all: bool,
    guard: EditGuard | None,
    boundary: Callable[[], WriteCheck],
    escalated: bool,
    signal: AbortSignal,
) -> EditResult:
    display = target.display_path
    check_signal(signal, "edit")
    check = boundary()
    _refuse_outside(check, "edit", display, escalated)
    gone = "file changed since it was read" if guard is not None else "file no longer exists"
    try:
        place = _Place(check, "edit", display, create=False)
    except FsError as error:
        if error.code != FS_STALE_VERSION:
            raise
        raise FsError(f'cannot edit "{display}": {gone}', FS_STALE_VERSION) from None
    with place:
        try:
            fd = place.open_file()
        except FsError as error:
            if error.code != FS_STALE_VERSION:
                raise
            raise FsError(f'cannot edit "{display}": {gone}', FS_STALE_VERSION) from None
        with os.fdopen(fd, "rb") as handle:
            st = os.fstat(handle.fileno())  # the version of exactly what is read
            if guard is not None and version_of(st) != guard.version:
                raise FsError(
                    f'cannot edit "{display}": file changed since it was read', FS_STALE_VERSION
                )
            if not stat_mode.S_ISREG(st.st_mode):
                raise _not_regular("edit", display)
            try:
                raw = decode(handle.read(), "edit", display)
            except OSError as error:
                raise os_error(error, "edit", display) from None
        old, new, text = lf(old_string), lf(new_string), lf(raw)
        if not old:
            raise FsError("old_string must be a non-empty string", FS_EDIT_NOT_FOUND)
        matches = text.count(old)
        if matches == 0:
            raise FsError(f'old_string was not found in "{display}"', FS_EDIT_NOT_FOUND)
        if matches > 1 and not replace_all:
            raise FsError(
                f'old_string matched {matches} times in "{display}"; provide a more specific'
                " old_string or set replace_all to true",
                FS_AMBIGUOUS_EDIT,
            )
        after = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        crlf = raw.count("\r\n")
        on_disk = after.replace("\n", "\r\n") if crlf > raw.count("\n") - crlf else after
        written = place.publish(
            on_disk.encode("utf-8"), mode=stat_mode.S_IMODE(st.st_mode), signal=signal
        )
    return EditResult(version=version_of(written), before=text, after=after)
