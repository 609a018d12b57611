"""The local filesystem provider: the `fs` service (`ctx.fs`) over the process's own disk.

Owns: path resolution against the workspace root and its confinement, stat/version tokens,
strict UTF-8 reading (whole or streamed), atomic writes (temp file in the target's directory,
fsync, `os.replace`; parents created; an existing file's mode kept, new files 0666 less the
umask) and literal edits serialized per target. Blocking calls run in worker threads; the
signal is read (never awaited) there, before each step that has an effect. Does not own: who
may write what (observation.py) or how results read to the model (tools.py).
"""

from __future__ import annotations

import asyncio
import codecs
import functools
import os
import stat as stat_mode
import tempfile
import weakref
from collections.abc import AsyncGenerator
from typing import BinaryIO, ClassVar, Final

from pydantic import BaseModel, ConfigDict

from ...core.signals import AbortSignal
from ...kernel import Context, Service
from .errors import (
    FS_AMBIGUOUS_EDIT,
    FS_EDIT_NOT_FOUND,
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
    the `read` a spill notice suggests works)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    root: str | None = None
    confine: bool = True
    readable: tuple[str, ...] = ()


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


def _prior_text(path: str, st: os.stat_result, new_size: int) -> str | None:
    if st.st_size >= BEFORE_TEXT_LIMIT or new_size >= BEFORE_TEXT_LIMIT:
        return None
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if is_binary(data):
        return None
    try:
        return _lf(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None


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


def _publish(
    path: str, data: bytes, *, mode: int | None, signal: AbortSignal, verb: str, display: str
) -> os.stat_result:
    """Write `data` to a temp file next to `path`, fsync, chmod, then `os.replace` it."""
    directory, name = os.path.split(path)
    try:
        check_signal(signal, verb)
        os.makedirs(directory, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tether-tmp", dir=directory)
    except OSError as error:
        raise os_error(error, verb, display) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
        check_signal(signal, verb)  # the last moment the write can still be refused
        os.replace(temp, path)
        return os.stat(path)
    except BaseException as error:
        try:
            os.unlink(temp)
        except OSError:
            pass
        if isinstance(error, OSError):
            raise os_error(error, verb, display) from None
        raise


def _write(target: FsTarget, content: str, intent: WriteIntent, signal: AbortSignal) -> WriteResult:
    path, display = target.key, target.display_path
    check_signal(signal, "write")
    st = _stat_or_none(path, "write", display)
    if st is not None and not stat_mode.S_ISREG(st.st_mode):
        raise FsError(f'cannot write "{display}": not a regular file', FS_NOT_REGULAR_FILE)
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
    before = None if st is None else _prior_text(path, st, len(data))
    mode = _new_file_mode() if st is None else stat_mode.S_IMODE(st.st_mode)
    written = _publish(path, data, mode=mode, signal=signal, verb="write", display=display)
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
    signal: AbortSignal,
) -> EditResult:
    path, display = target.key, target.display_path
    check_signal(signal, "edit")
    st = _stat_or_none(path, "edit", display)
    if st is None:
        why = "file changed since it was read" if guard is not None else "file no longer exists"
        raise FsError(f'cannot edit "{display}": {why}', FS_STALE_VERSION)
    if guard is not None and version_of(st) != guard.version:
        raise FsError(f'cannot edit "{display}": file changed since it was read', FS_STALE_VERSION)
    if not stat_mode.S_ISREG(st.st_mode):
        raise FsError(f'cannot edit "{display}": not a regular file', FS_NOT_REGULAR_FILE)
    try:
        with open(path, "rb") as handle:
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
    mode = stat_mode.S_IMODE(st.st_mode)
    written = _publish(
        path, on_disk.encode("utf-8"), mode=mode, signal=signal, verb="edit", display=display
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
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

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
        key = os.path.realpath(joined)
        display = os.path.normpath(joined)
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
        signal: AbortSignal,
    ) -> WriteResult:
        """Create or replace atomically. Raises FsError: FS_NOT_OBSERVED (CreateIfAbsent over
        an existing file), FS_STALE_VERSION (ReplaceIfVersion gone or changed),
        FS_NOT_REGULAR_FILE, FS_PERMISSION_DENIED, FS_ABORTED (nothing written), ..."""
        check_signal(signal, "write")
        refuse_read_only(target.writable, target.display_path, "write")
        async with self._lock(target.key):
            return await asyncio.to_thread(_write, target, content, intent, signal)

    async def edit_text(
        self,
        target: FsTarget,
        *,
        old_string: str,
        new_string: str,
        replace_all: bool = False,
        guard: EditGuard | None = None,
        signal: AbortSignal,
    ) -> EditResult:
        """Replace literal text; CRLF files keep CRLF. Raises FsError: FS_STALE_VERSION (guard
        mismatch or file gone), FS_NOT_TEXT, FS_EDIT_NOT_FOUND, FS_AMBIGUOUS_EDIT, FS_ABORTED."""
        check_signal(signal, "edit")
        refuse_read_only(target.writable, target.display_path, "edit")
        async with self._lock(target.key):
            return await asyncio.to_thread(
                functools.partial(
                    _edit,
                    target,
                    old_string=old_string,
                    new_string=new_string,
                    replace_all=replace_all,
                    guard=guard,
                    signal=signal,
                )
            )
