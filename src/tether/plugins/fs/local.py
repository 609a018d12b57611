"""The local filesystem provider: the `fs` service (`ctx.fs`) over the process's own disk.

Owns: path resolution against the workspace root and its confinement, stat/version tokens,
strict UTF-8 reading (whole or streamed), and writes and edits inside the sandbox. A write or
edit is first checked against the sandbox policy (`tether.plugins.sandbox.boundary`: the
writable roots and the protected paths, in every mode; a refusal is FS_SANDBOX_DENIED carrying
the question to put to the user, whose one-time yes the caller passes as `escalated`), then made
*beneath* the writable root it was checked against: the directory is opened from a descriptor of
that root without following any link (`beneath.py`), and the stat, the read of an edit, the temp
file (fsync, an existing file's mode kept, new files 0666 less the umask) and the rename over
the name all happen relative to that directory descriptor — so a path swapped meanwhile (a
directory exchanged for a link to elsewhere) fails the write instead of redirecting it, and a
failed write leaves no temp file. Edits are serialized per target. Blocking calls run in worker
threads; the signal is read (never awaited) there, before each step that has an effect. Does
not own: who may write what beyond the sandbox (observation.py), how results read to the model
or the question to the user (tools.py).

The policy is the config's `sandbox` when given, else the `shell` service's (the sandbox `bash`
runs in, so both tools obey one policy), else `workspace-write` over the root.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import errno
import functools
import os
import secrets
import stat as stat_mode
import weakref
from collections.abc import AsyncGenerator, Callable
from typing import BinaryIO, ClassVar, Final

from pydantic import BaseModel, ConfigDict

from ...core.signals import AbortSignal
from ...kernel import Context, Service
from ..sandbox.boundary import WriteCheck, check_write
from ..sandbox.policy import SandboxPolicy, SandboxSettings
from .beneath import DIRECTORY_FLAGS, open_directory, split_beneath
from .errors import (
    FS_AMBIGUOUS_EDIT,
    FS_EDIT_NOT_FOUND,
    FS_IO_ERROR,
    FS_NOT_FOUND,
    FS_NOT_OBSERVED,
    FS_NOT_REGULAR_FILE,
    FS_NOT_TEXT,
    FS_SANDBOX_DENIED,
    FS_STALE_VERSION,
    FsError,
    check_signal,
    os_error,
    refuse_read_only,
)
from .seam import (
    CreateIfAbsent,
    EditGuard,
    EditResult,
    FileType,
    FsStat,
    FsTarget,
    ReplaceIfVersion,
    WriteIntent,
    WriteResult,
)

__all__ = ["LocalFileSystem", "LocalFsConfig", "is_binary", "version_of"]

SNIFF_BYTES: Final = 8192
BEFORE_TEXT_LIMIT: Final = 10 * 1024 * 1024
_CHUNK: Final = 1024 * 1024


class LocalFsConfig(BaseModel):
    """`root`: the workspace (default: the process cwd at mount); `confine`: refuse any path
    whose real location is outside it, except that files under a `readable` directory may be
    read (never written or edited: the agent boot lists where tether keeps spilled outputs, so
    the `read` a spill notice suggests works); `sandbox`: the policy writes obey (default: the
    `shell` service's, else `workspace-write` over `root`; see the module note)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    root: str | None = None
    confine: bool = True
    readable: tuple[str, ...] = ()
    sandbox: SandboxSettings | None = None


def version_of(st: os.stat_result) -> str:
    """The opaque version token: device:inode:size:mtime_ns:ctime_ns."""
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def _file_type(st: os.stat_result) -> FileType:
    if stat_mode.S_ISREG(st.st_mode):
        return "file"
    if stat_mode.S_ISDIR(st.st_mode):
        return "directory"
    return "other"


def is_binary(head: bytes) -> bool:
    """A NUL byte in the first 8192 bytes marks a file as binary."""
    return b"\x00" in head[:SNIFF_BYTES]


def _decode(data: bytes, verb: str, display: str) -> str:
    if is_binary(data):
        raise FsError(f'cannot {verb} "{display}": binary file', FS_NOT_TEXT)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FsError(
            f'cannot {verb} "{display}": invalid UTF-8 text', FS_NOT_TEXT, cause=error
        ) from None


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def _stat_or_none(path: str, verb: str, display: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # nothing can exist below a file either
        return None
    except OSError as error:
        raise os_error(error, verb, display) from None


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
        if error.errno == errno.ELOOP or _has_link(root_fd, parents):
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


def _has_link(root_fd: int, parents: list[str]) -> bool:
    """Whether a component of `parents` is a symbolic link now (to explain an ENOTDIR)."""
    fd = os.dup(root_fd)
    try:
        for part in parents:
            try:
                info = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except OSError:
                return False
            if stat_mode.S_ISLNK(info.st_mode):
                return True
            try:
                child = os.open(part, DIRECTORY_FLAGS, dir_fd=fd)
            except OSError:
                return False
            os.close(fd)
            fd = child
        return False
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
        return _lf(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def _refuse_outside(check: WriteCheck, verb: str, display: str, escalated: bool) -> None:
    if check.refusal is not None and not escalated:
        raise FsError(
            f'cannot {verb} "{display}": {check.refusal}',
            FS_SANDBOX_DENIED,
            escalation=f'{verb} "{display}": {check.refusal}',
        )


def _write(
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


def _edit(
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
                raw = _decode(handle.read(), "edit", display)
            except OSError as error:
                raise os_error(error, "edit", display) from None
        old, new, text = _lf(old_string), _lf(new_string), _lf(raw)
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


def _read_all(target: FsTarget, signal: AbortSignal) -> str:
    check_signal(signal, "read")
    try:
        with open(target.key, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise os_error(error, "read", target.display_path) from None
    return _decode(data, "read", target.display_path)


class LocalFileSystem(Service):
    """`ctx.fs` for the local disk. Mount: `await ctx.plugin(LocalFileSystem, {"root": ...})`."""

    name: ClassVar[str] = "fs"
    Config: ClassVar[type[BaseModel]] = LocalFsConfig

    def __init__(self, ctx: Context, config: object = None) -> None:
        super().__init__(ctx, config)
        settings = config if isinstance(config, LocalFsConfig) else LocalFsConfig()
        root = os.path.abspath(os.path.expanduser(settings.root or os.getcwd()))
        self.root: Final = root
        self.confine: Final = settings.confine
        self._real_root = os.path.realpath(root)
        self._readable: Final = tuple(
            os.path.realpath(os.path.expanduser(path)) for path in settings.readable
        )
        self._sandbox: Final = None if settings.sandbox is None else settings.sandbox.policy(root)
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def sandbox(self) -> tuple[SandboxPolicy, str]:
        """The policy writes obey now and its workspace (see the module note)."""
        if self._sandbox is not None:
            return self._sandbox, self.root
        shell = self.ctx.get("shell")
        resolve = getattr(shell, "resolve", None)
        if callable(resolve):
            from ..shell.seam import ShellRequest

            try:
                resolved = resolve(ShellRequest(command=""))
                policy, workspace = resolved.sandbox, resolved.workspace
            except Exception:
                policy = workspace = None
            if isinstance(policy, SandboxPolicy) and isinstance(workspace, str):
                return policy, workspace
        return SandboxPolicy(), self.root

    def check_write(self, target: FsTarget) -> WriteCheck:
        """May the model write `target` under the sandbox (`tether.plugins.sandbox.boundary`)?"""
        policy, workspace = self.sandbox()
        return check_write(policy, workspace, target.key)

    def _lock(self, key: str) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    def within_root(self, real_path: str) -> bool:
        """Whether a real (symlink-free) path is the workspace root or inside it."""
        return os.path.commonpath([self._real_root, real_path]) == self._real_root

    def _only_readable(self, real_path: str) -> bool:
        return any(os.path.commonpath([top, real_path]) == top for top in self._readable)

    def locate(self, path: str, cwd: str | None = None) -> FsTarget:
        """The synchronous core of `resolve` (no signal: it has no effect to refuse)."""
        if not path.strip():
            raise FsError("file_path must be a non-empty string", FS_NOT_FOUND)
        base = self.root if cwd is None else os.path.join(self.root, os.path.expanduser(cwd))
        joined = os.path.join(base, os.path.expanduser(path))
        display = os.path.normpath(joined)
        try:
            key = os.path.realpath(joined)
        except OSError as error:  # EINVAL: a link swapped for a directory while it was read
            raise FsError(
                f'cannot access "{display}": its path changed while it was resolved'
                f" ({error.strerror or error}); nothing was done",
                FS_IO_ERROR,
                cause=error,
            ) from None
        if self.confine and not self.within_root(key):
            if self._only_readable(key):
                return FsTarget(key=key, display_path=display, writable=False)
            raise FsError(
                f'cannot access "{display}": it is outside the workspace "{self.root}"',
                FS_SANDBOX_DENIED,
            )
        return FsTarget(key=key, display_path=display)

    async def resolve(self, path: str, *, cwd: str | None = None, signal: AbortSignal) -> FsTarget:
        """Resolve against `cwd` (relative ones against the root), else the workspace root.

        Raises FsError: FS_NOT_FOUND `file_path must be a non-empty string` for a blank path,
        FS_SANDBOX_DENIED when confined and the real path is outside the workspace, FS_ABORTED.
        """
        check_signal(signal, "resolve")
        return self.locate(path, cwd)

    async def stat(self, target: FsTarget, *, signal: AbortSignal) -> FsStat | None:
        """None when nothing exists at `target`. Raises FsError (FS_PERMISSION_DENIED, ...)."""
        check_signal(signal, "stat")
        st = await asyncio.to_thread(_stat_or_none, target.key, "stat", target.display_path)
        if st is None:
            return None
        return FsStat(version=version_of(st), type=_file_type(st), size=st.st_size)

    async def read_text(self, target: FsTarget, *, signal: AbortSignal) -> str:
        """The whole file. Raises FsError: FS_NOT_TEXT (`cannot read "<p>": binary file` /
        `... invalid UTF-8 text`), FS_NOT_FOUND, FS_PERMISSION_DENIED, FS_ABORTED, ..."""
        return await asyncio.to_thread(_read_all, target, signal)

    async def stream_text(
        self, target: FsTarget, *, signal: AbortSignal
    ) -> AsyncGenerator[str, None]:
        """1 MiB chunks decoded incrementally; the signal is checked before each chunk."""
        display = target.display_path
        check_signal(signal, "read")
        try:
            handle: BinaryIO = await asyncio.to_thread(open, target.key, "rb")
        except OSError as error:
            raise os_error(error, "read", display) from None
        try:
            decoder = codecs.getincrementaldecoder("utf-8")("strict")
            first = True
            while True:
                check_signal(signal, "read")
                try:
                    data = await asyncio.to_thread(handle.read, _CHUNK)
                except OSError as error:
                    raise os_error(error, "read", display) from None
                if first and is_binary(data):
                    raise FsError(f'cannot read "{display}": binary file', FS_NOT_TEXT)
                first = False
                try:
                    text = decoder.decode(data, final=not data)
                except UnicodeDecodeError as error:
                    raise FsError(
                        f'cannot read "{display}": invalid UTF-8 text', FS_NOT_TEXT, cause=error
                    ) from None
                if text:
                    yield text
                if not data:
                    return
        finally:
            handle.close()

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        *,
        intent: WriteIntent = None,
        escalated: bool = False,
        signal: AbortSignal,
    ) -> WriteResult:
        """Create or replace atomically, inside the sandbox unless `escalated` (a person allowed
        this one write outside it). Raises FsError: FS_SANDBOX_DENIED (the sandbox refuses it:
        `.escalation` is the question; or a link was swapped onto its path), FS_NOT_OBSERVED
        (CreateIfAbsent over an existing file), FS_STALE_VERSION (ReplaceIfVersion gone or
        changed), FS_NOT_REGULAR_FILE, FS_PERMISSION_DENIED, FS_ABORTED (nothing written), ..."""
        check_signal(signal, "write")
        refuse_read_only(target.writable, target.display_path, "write")
        async with self._lock(target.key):
            check = functools.partial(check_write, *self.sandbox(), target.key)
            return await asyncio.to_thread(
                _write, target, content, intent, check, escalated, signal
            )

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
        """Replace literal text; CRLF files keep CRLF; inside the sandbox unless `escalated`.
        Raises FsError: FS_SANDBOX_DENIED (as `write_text`), FS_STALE_VERSION (guard mismatch or
        file gone), FS_NOT_TEXT, FS_EDIT_NOT_FOUND, FS_AMBIGUOUS_EDIT, FS_ABORTED."""
        check_signal(signal, "edit")
        refuse_read_only(target.writable, target.display_path, "edit")
        async with self._lock(target.key):
            check = functools.partial(check_write, *self.sandbox(), target.key)
            return await asyncio.to_thread(
                functools.partial(
                    _edit,
                    target,
                    old_string=old_string,
                    new_string=new_string,
                    replace_all=replace_all,
                    guard=guard,
                    boundary=check,
                    escalated=escalated,
                    signal=signal,
                )
            )
