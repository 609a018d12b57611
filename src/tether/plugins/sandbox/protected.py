"""The paths inside writable roots that stay read-only, and placeholders for the missing ones.

Owns `protected_paths(root)`: in each writable root (the workspace, the configured
`writable_roots`) these are ways to run code or change policy *later*, outside the sandbox, so a
sandboxed command may not write them:

    .git/hooks  .git/config     git runs hooks and config-named programs (`core.fsmonitor`,
                                 `core.pager`, filters) for the user. When `.git` is a file (a
                                 worktree or submodule), that file and the hooks and config of
                                 the repository it names are protected instead
    .claude/                     Claude Code settings: hooks, permission rules, MCP servers
    .mcp.json                    MCP servers tether and Claude Code start
    tether.yml                   tether's own plugins and sandbox settings

Protected as well when they exist (they matter where they are, and a placeholder for each in
every workspace would be clutter): `.gitmodules`, `.vscode/` and `.idea/` (editors run tasks and
configured tools from them), and the shell start-up files `.bashrc`, `.bash_profile`, `.zshrc`,
`.zprofile` and `.profile` (a workspace that is a home directory).

A missing one of the first list would be as good as writable (a command creates it), so it is
pinned by a *placeholder*: an empty directory (mode 1555: read-only, sticky) or an empty file (mode
444), created just before the command and bound read-only like the rest. Placeholders are readable,
so another tether (or Claude Code) booting in the same workspace meanwhile reads an empty directory
or file, not an error. Placeholders are removed when no sandboxed command runs in that root any
more: every sandboxed command holds a shared `flock` on each writable root's directory for its
whole life, and `remove_placeholders` removes them only under an exclusive lock it gets without
waiting — so never while any tether's command (whose mount a removal would detach) runs there. The
kernel drops a dead tether's locks; the next sandboxed command (or the next boot) removes what it
left. A placeholder is recognized by what it is (empty, with its mode), so only entries tether
could have made are ever removed. Does not own the mounts (`bwrap.py`).

Not protected (documented in docs/sandbox.md): a protected path that is itself a symlink keeps
its target read-only, but the link can be replaced; submodules' hooks under `.git/modules`.
"""

from __future__ import annotations

import contextlib
import enum
import fcntl
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

__all__ = [
    "PROTECTED_IF_PRESENT",
    "PROTECTED_NAMES",
    "Kind",
    "Protection",
    "RootLocks",
    "ensure_placeholders",
    "is_placeholder",
    "protected_paths",
    "remove_placeholders",
]


class Kind(enum.Enum):
    DIRECTORY = "directory"
    FILE = "file"


PROTECTED_NAMES: Final[tuple[tuple[str, Kind], ...]] = (
    (".git/hooks", Kind.DIRECTORY),
    (".git/config", Kind.FILE),
    (".claude", Kind.DIRECTORY),
    (".mcp.json", Kind.FILE),
    ("tether.yml", Kind.FILE),
)
"""Relative to each writable root, with what a placeholder for each would be."""

PROTECTED_IF_PRESENT: Final[tuple[str, ...]] = (
    ".gitmodules",
    ".vscode",
    ".idea",
    ".bashrc",
    ".bash_profile",
    ".zshrc",
    ".zprofile",
    ".profile",
)
"""Relative to each writable root: bound read-only when they exist, never pinned."""


@dataclass(frozen=True, slots=True)
class Protection:
    """A path to bind read-only; `missing` says what placeholder stands for it when it does not
    exist (None: it exists)."""

    path: str
    missing: Kind | None = None


def protected_paths(root: str) -> list[Protection]:
    """The protections of one writable root (an absolute, resolved directory), in mount order.
    A protected path that does not exist is named by its first missing component (`.git` for
    `.git/hooks` in a directory without `.git`), once; a placeholder on the way (a `.git` made
    by an earlier command) is protected itself."""
    found: dict[str, Protection] = {}
    git = os.path.join(root, ".git")
    for name, kind in PROTECTED_NAMES:
        if name.startswith(".git/") and os.path.isfile(git) and not is_placeholder(git):
            for path in _gitfile_protections(root, git):
                found.setdefault(path, Protection(path))
            continue
        protection = _walk(root, name.split("/"), kind)
        found.setdefault(protection.path, protection)
    for name in PROTECTED_IF_PRESENT:
        path = os.path.join(root, name)
        if os.path.lexists(path):
            found.setdefault(path, Protection(path))
    return list(found.values())


def _walk(root: str, parts: list[str], kind: Kind) -> Protection:
    path = root
    for index, part in enumerate(parts):
        path = os.path.join(path, part)
        if not os.path.lexists(path):
            return Protection(path, kind if index == len(parts) - 1 else Kind.DIRECTORY)
        if is_placeholder(path):
            return Protection(path)
    return Protection(path)


def _gitfile_protections(root: str, gitfile: str) -> list[str]:
    """`.git` is a file (`gitdir: <dir>`): the file itself, and the hooks and config of the
    repository it names (its common directory's, for a worktree) that exist."""
    paths = [gitfile]
    try:
        with open(gitfile, encoding="utf-8") as file:
            first = file.readline().strip()
    except (OSError, UnicodeDecodeError):
        return paths
    if not first.startswith("gitdir:"):
        return paths
    gitdir = os.path.realpath(os.path.join(root, first.removeprefix("gitdir:").strip()))
    directories = [gitdir]
    with contextlib.suppress(OSError, UnicodeDecodeError):
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as file:
            common = file.readline().strip()
        if common:
            directories.append(os.path.realpath(os.path.join(gitdir, common)))
    for directory in directories:
        for name in ("hooks", "config"):
            path = os.path.join(directory, name)
            if os.path.lexists(path):
                paths.append(path)
    return paths


_DIRECTORY_MODE: Final = 0o1555
_FILE_MODE: Final = 0o444


def is_placeholder(path: str) -> bool:
    """A placeholder: an empty file with mode 444, or a directory with mode 1555 (whose
    emptiness `rmdir` checks when it is removed)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISREG(info.st_mode):
        return mode == _FILE_MODE and info.st_size == 0
    return stat.S_ISDIR(info.st_mode) and mode == _DIRECTORY_MODE


def ensure_placeholders(protections: Iterable[Protection]) -> list[Protection]:
    """Create the placeholder of each missing protection (never replacing anything);
    the protections that can be bound now: existing paths and placeholders made here or already
    there. One that cannot be made (the root is not writable for this user either) is left out:
    a command could not create it."""
    ready: list[Protection] = []
    for protection in protections:
        kind = protection.missing
        if kind is not None:
            try:
                if kind is Kind.DIRECTORY:
                    os.mkdir(protection.path, 0o700)
                    os.chmod(protection.path, _DIRECTORY_MODE)
                else:
                    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC
                    os.close(os.open(protection.path, flags, 0o600))
                    os.chmod(protection.path, _FILE_MODE)
            except FileExistsError:
                pass
            except OSError:
                continue
        ready.append(protection)
    return ready


def remove_placeholders(root: str) -> list[str]:
    """Remove the placeholders in `root` if no sandboxed command runs there (an exclusive lock
    on it is free now); the paths removed."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return []  # a command (of any tether) still runs there: it keeps them
        removed: list[str] = []
        for name in _CANDIDATES:  # deepest first: `.git/hooks` before `.git`
            path = os.path.join(root, name)
            if not is_placeholder(path):
                continue
            with contextlib.suppress(OSError):  # ENOTEMPTY: not ours after all
                if os.path.isdir(path):
                    os.rmdir(path)
                else:
                    os.unlink(path)
                removed.append(path)
        return removed
    finally:
        os.close(fd)  # drops the lock


_CANDIDATES: Final = sorted(
    {
        "/".join(name.split("/")[: depth + 1])
        for name, _ in PROTECTED_NAMES
        for depth in range(name.count("/") + 1)
    },
    key=lambda name: (-name.count("/"), name),
)
"""Every path a placeholder may have (a protected path or a missing parent of one)."""


class RootLocks:
    """Shared locks on writable roots, held while one sandboxed command runs (see the module
    note). `release()` drops them and removes the placeholders no command needs any more."""

    __slots__ = ("_held",)

    def __init__(self, roots: Iterable[str]) -> None:
        self._held: list[tuple[str, int]] = []
        for root in roots:
            try:
                fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_SH)
            except OSError:
                os.close(fd)
                continue
            self._held.append((root, fd))

    def release(self) -> None:
        held, self._held = self._held, []
        for _, fd in held:
            os.close(fd)
        for root, _ in held:
            remove_placeholders(root)
