"""Placeholders: the empty directories that pin missing protected paths while a command runs.

Owns `ensure_placeholders(root, protections)`, `remove_placeholders(root)` and `RootLocks`.

A missing protected path (`Protection.missing`, `protected.py`) is pinned by an empty directory
with mode `PLACEHOLDER_MODE` (1700), made just before the command and bound read-only like the
rest. Why a directory, also where a file would be: git never lists an empty directory, so a
placeholder never shows in `git status` — the user's, during and after any end, or the
command's (an agent's `git add -A` cannot commit one) — and, writable by the owner of the
directory it is in (root's tether gives it to that owner), one a killed tether left never makes
`git init` fail. A reader of the file meanwhile (another tether's boot reads
`tether.yml`) finds a directory where the file would be: tether reads an empty directory there
as no file (`kernel/config.py`; `.mcp.json` is read only when it is a file).

Made without following a symlink: relative to a descriptor of the root, one component at a time
with `O_NOFOLLOW`, the last with `mkdirat` — a symlink planted on the way (`.config ->
/elsewhere`) refuses the command (`PlaceholderRefused`, one line) instead of creating anything
outside the root; an existing entry where the placeholder would go is left as it is (and bound
read-only as it is).

Removed when no sandboxed command runs in that root any more: every sandboxed command holds a
shared `flock` on each writable root's directory for its whole life, and `remove_placeholders`
removes them only under an exclusive lock it gets without waiting — so never while any tether's
command (whose mount a removal would detach) runs there. The kernel drops a dead tether's locks;
the next sandboxed command (or the next shell's start) removes what it left. Only empty
directories with the placeholder's mode are removed (`rmdir`: never anything with content), at
the paths the protected set names now, and the placeholders of earlier tether versions (an empty
1555 directory or 444 file at `.git`, `.git/hooks`, `.git/config`, `.claude`, `.mcp.json`,
`tether.yml`). Does not own the protected set (`protected.py`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterable
from typing import Final

from .protected import PLACEHOLDER_MODE, Protection, is_placeholder, protected_paths, within

__all__ = ["PlaceholderRefused", "RootLocks", "ensure_placeholders", "remove_placeholders"]

_DIRECTORY: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LEGACY: Final = (".git/hooks", ".git/config", ".git", ".claude", ".mcp.json", "tether.yml")


class PlaceholderRefused(OSError):
    """A placeholder's parent is not a directory of the root (a symlink on the way)."""


def ensure_placeholders(root: str, protections: Iterable[Protection]) -> list[Protection]:
    """Make the placeholder of each missing protection inside `root` (see the module note); the
    protections that can be bound now. One that cannot be made because the root is not writable
    for this user either is left out (a command could not create it). Raises
    `PlaceholderRefused` when a symlink or a non-directory stands on the way."""
    ready: list[Protection] = []
    for protection in protections:
        if protection.missing is None:
            ready.append(protection)
            continue
        if not within(protection.path, root) or protection.path == root:
            continue
        try:
            _make(root, os.path.relpath(protection.path, root))
        except PlaceholderRefused:
            raise
        except OSError:
            continue
        ready.append(protection)
    return ready


def _make(root: str, relative: str) -> None:
    parent, name = _open_parent(root, relative)
    try:
        try:
            os.mkdir(name, 0o700, dir_fd=parent)
        except FileExistsError:
            return  # made meanwhile (another command's placeholder, or the user's): bound as is
        try:
            fd = os.open(name, _DIRECTORY, dir_fd=parent)
        except OSError as error:  # swapped for a symlink since the mkdir: refuse
            raise PlaceholderRefused(
                error.errno or errno.ELOOP,
                f"sandbox: the placeholder {os.path.join(root, relative)} was replaced while "
                "it was made; run the command again",
            ) from error
        try:
            os.fchmod(fd, PLACEHOLDER_MODE)
            if os.geteuid() == 0:  # the directory's owner can `git init` over a leftover
                owner = os.fstat(parent)
                os.fchown(fd, owner.st_uid, owner.st_gid)
        finally:
            os.close(fd)
    finally:
        os.close(parent)


def _open_parent(root: str, relative: str) -> tuple[int, str]:
    """A descriptor of the directory that holds `root/relative`, reached without following any
    symlink, and the last component's name."""
    *parts, name = relative.split("/")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            try:
                child = os.open(part, _DIRECTORY, dir_fd=fd)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise PlaceholderRefused(
                        error.errno,
                        f"sandbox: {os.path.join(root, relative)} is protected and missing, and "
                        f"{part!r} on its way is a symlink or not a directory; tether does not "
                        "create a placeholder through it — remove or replace it",
                    ) from error
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd, name


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
        for relative in _LEGACY:
            if _remove(root, relative, legacy=True):
                removed.append(os.path.join(root, relative))
        for protection in protected_paths(root):
            path = protection.path
            if (
                within(path, root)
                and path != root
                and is_placeholder(path)
                and _remove(root, os.path.relpath(path, root), legacy=False)
            ):
                removed.append(path)
        return removed
    finally:
        os.close(fd)  # drops the lock


def _remove(root: str, relative: str, *, legacy: bool) -> bool:
    try:
        parent, name = _open_parent(root, relative)
    except OSError:
        return False
    try:
        info = os.lstat(name, dir_fd=parent)
        mode = stat.S_IMODE(info.st_mode)
        if stat.S_ISDIR(info.st_mode) and mode == (0o1555 if legacy else PLACEHOLDER_MODE):
            os.rmdir(name, dir_fd=parent)  # ENOTEMPTY: not a placeholder after all
            return True
        if legacy and stat.S_ISREG(info.st_mode) and mode == 0o444 and info.st_size == 0:
            os.unlink(name, dir_fd=parent)
            return True
        return False
    except OSError:
        return False
    finally:
        os.close(parent)


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
            with contextlib.suppress(OSError):
                remove_placeholders(root)
