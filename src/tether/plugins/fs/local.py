"""The local filesystem provider: the `fs` service (`ctx.fs`) over the process's own disk.

Owns: path resolution against the workspace root and its confinement, stat/version tokens,
strict UTF-8 reading (whole or streamed; opened beneath the directory the path was confined to,
reads.py), and which sandbox policy writes and edits obey: the
config's `sandbox` when given, else the `shell` service's (the sandbox `bash` runs in, so both
obey one policy), else `workspace-write` over the root. Writes and edits are serialized per
target and run in worker threads (writes.py: the sandbox's refusal, and the act made beneath
the writable root through directory descriptors); the signal is read (never awaited) there,
before each step that has an effect. Does not own: who may write what beyond the sandbox
(observation.py), how results read to the model or the question to the user (tools.py).
"""

from __future__ import annotations

import asyncio
import codecs
import functools
import os
import stat as stat_mode
import weakref
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, BinaryIO, ClassVar, Final

from ...core.signals import AbortSignal
from ...kernel import Context, Service
from ...kernel.model_values import ModelValue, exactly, optional, string_tuple
from ..sandbox.policy import SandboxPolicy, SandboxSettings
from .errors import (
    FS_IO_ERROR,
    FS_NOT_FOUND,
    FS_NOT_TEXT,
    FS_SANDBOX_DENIED,
    FsError,
    check_signal,
    os_error,
    refuse_read_only,
)

if TYPE_CHECKING:
    # What the operations use (the records, reads beneath a root, the text checks, the writes,
    # the sandbox's boundary) is imported by the first operation, not when the seam is mounted
    # (issue 36).
    from ..sandbox.boundary import WriteCheck
    from .records import EditGuard, EditResult, FsStat, FsTarget, WriteIntent, WriteResult
    from .seam import FileType
    from .text import is_binary, version_of

__all__ = ["LocalFileSystem", "LocalFsConfig", "is_binary", "version_of"]


def __getattr__(name: str) -> object:
    """`is_binary` and `version_of`, from text.py, for code that imports them from here."""
    if name in ("is_binary", "version_of"):
        from . import text

        value: object = getattr(text, name)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_CHUNK: Final = 1024 * 1024


class LocalFsConfig(ModelValue):
    """`root`: the workspace (default: the process cwd at mount); `confine`: refuse any path
    whose real location is outside it, except under a `directories` entry (directories the user
    added, `--add-dir`: as the workspace, read and written — a write still needs the sandbox's
    consent, so the sandbox's writable roots must hold them too, as `tether.agent.boot` makes
    them) and that files under a `readable` directory may be read (never written or edited:
    the agent boot lists where tether keeps spilled outputs, so the `read` a spill notice
    suggests works); `sandbox`: the policy writes obey (default: the `shell` service's, else
    `workspace-write` over `root`; see the module note). Validated when made, without
    pydantic when every value is plainly valid (`tether.kernel.model_values`)."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models
    __config_fast__: ClassVar = {
        "root": exactly(str, None),
        "confine": exactly(bool),
        "directories": string_tuple,
        "readable": string_tuple,
        "sandbox": optional(SandboxSettings.fast_check),
    }

    root: str | None = None
    confine: bool = True
    directories: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()
    sandbox: SandboxSettings | None = None


def _file_type(st: os.stat_result) -> FileType:
    if stat_mode.S_ISREG(st.st_mode):
        return "file"
    if stat_mode.S_ISDIR(st.st_mode):
        return "directory"
    return "other"


def _read_all(top: str | None, target: FsTarget, signal: AbortSignal) -> str:
    from .reads import open_for_read  # at the first read (issue 36)
    from .text import decode

    check_signal(signal, "read")
    try:
        with os.fdopen(open_for_read(top, target), "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise os_error(error, "read", target.display_path) from None
    return decode(data, "read", target.display_path)


def _open_handle(top: str | None, target: FsTarget) -> BinaryIO:
    from .reads import open_for_read  # at the first streamed read (issue 36)

    return os.fdopen(open_for_read(top, target), "rb")


class LocalFileSystem(Service):
    """`ctx.fs` for the local disk. Mount: `await ctx.plugin(LocalFileSystem, {"root": ...})`."""

    name: ClassVar[str] = "fs"
    Config: ClassVar[type[LocalFsConfig]] = LocalFsConfig

    def __init__(self, ctx: Context, config: object = None) -> None:
        super().__init__(ctx, config)
        settings = config if isinstance(config, LocalFsConfig) else LocalFsConfig()
        root = os.path.abspath(os.path.expanduser(settings.root or os.getcwd()))
        self.root: Final = root
        self.confine: Final = settings.confine
        self._real_root = os.path.realpath(root)
        self._readable = tuple(
            os.path.realpath(os.path.expanduser(path)) for path in settings.readable
        )
        self._directories = tuple(
            os.path.realpath(os.path.join(root, os.path.expanduser(path)))
            for path in settings.directories
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
        from ..sandbox.boundary import check_write  # at the first check (issue 36)

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

    @property
    def readable(self) -> tuple[str, ...]:
        """The directories outside the workspace whose files may be read (real paths)."""
        return self._readable

    @property
    def directories(self) -> tuple[str, ...]:
        """The directories the user added, reached as the workspace is (real paths)."""
        return self._directories

    def add_directory(self, directory: str) -> str:
        """Let the model reach files under `directory` as it reaches the workspace's, from now
        on (`/add-dir`): read them, and write them where the sandbox's writable roots allow
        (the caller adds the root there: `LocalShell.add_writable_root`). Returns the real
        path. Raises FsError when it is not a directory."""
        real = os.path.realpath(os.path.join(self.root, os.path.expanduser(directory)))
        if not os.path.isdir(real):
            raise FsError(f'"{directory}" is not a directory', FS_NOT_FOUND)
        if real not in self._directories:
            self._directories = (*self._directories, real)
        return real

    def _within_any(self, tops: tuple[str, ...], real_path: str) -> bool:
        return any(os.path.commonpath([top, real_path]) == top for top in tops)

    def _read_top(self, target: FsTarget) -> str | None:
        """The directory `target` was confined to (the root, else the added or readable
        directory it is under), which reads open it beneath (reads.py); None when not
        confined."""
        if not self.confine:
            return None
        for top in (self._real_root, *self._directories, *self._readable):
            if os.path.commonpath([top, target.key]) == top:
                return top
        raise FsError(
            f'cannot access "{target.display_path}": it is outside the workspace "{self.root}"',
            FS_SANDBOX_DENIED,
        )

    def locate(self, path: str, cwd: str | None = None) -> FsTarget:
        """The synchronous core of `resolve` (no signal: it has no effect to refuse)."""
        from .records import FsTarget  # at the first path resolved (issue 36)

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
            if self._within_any(self._directories, key):  # writes: the sandbox decides
                return FsTarget(key=key, display_path=display)
            if self._within_any(self._readable, key):
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
        from .reads import stat_beneath  # at the first stat (issue 36), as the two below
        from .records import FsStat
        from .text import version_of

        check_signal(signal, "stat")
        st = await asyncio.to_thread(stat_beneath, self._read_top(target), target)
        if st is None:
            return None
        return FsStat(version=version_of(st), type=_file_type(st), size=st.st_size)

    async def read_text(self, target: FsTarget, *, signal: AbortSignal) -> str:
        """The whole file. Raises FsError: FS_NOT_TEXT (`cannot read "<p>": binary file` /
        `... invalid UTF-8 text`), FS_NOT_FOUND, FS_PERMISSION_DENIED, FS_ABORTED, ..."""
        return await asyncio.to_thread(_read_all, self._read_top(target), target, signal)

    async def stream_text(
        self, target: FsTarget, *, signal: AbortSignal
    ) -> AsyncGenerator[str, None]:
        """1 MiB chunks decoded incrementally; the signal is checked before each chunk."""
        from .text import is_binary  # at the first streamed read (issue 36)

        display = target.display_path
        check_signal(signal, "read")
        top = self._read_top(target)
        try:
            handle = await asyncio.to_thread(_open_handle, top, target)
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
        from ..sandbox.boundary import check_write  # at the first write (issue 36)
        from .writes import write_beneath

        check_signal(signal, "write")
        refuse_read_only(target.writable, target.display_path, "write")
        async with self._lock(target.key):
            check = functools.partial(check_write, *self.sandbox(), target.key)
            return await asyncio.to_thread(
                write_beneath, target, content, intent, check, escalated, signal
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
        from ..sandbox.boundary import check_write  # at the first edit (issue 36)
        from .writes import edit_beneath

        check_signal(signal, "edit")
        refuse_read_only(target.writable, target.display_path, "edit")
        async with self._lock(target.key):
            check = functools.partial(check_write, *self.sandbox(), target.key)
            return await asyncio.to_thread(
                functools.partial(
                    edit_beneath,
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
