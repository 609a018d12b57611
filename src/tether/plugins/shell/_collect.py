"""Output collection for one stream of one process: a byte-exact in-memory tail plus a spill file.

Owns: the tail (at most `max_bytes` of the most recent bytes, exact), the spill file (created on
the first overflow in the service's private directory, mode 0600, opened exclusively; it holds
the complete stream, including what came before the overflow, up to `spill_max_bytes`, after
which it is deleted and no path is advertised), consuming reads by byte offset (`read_from`),
and decoding (UTF-8 with replacement, so output that is not UTF-8 never raises); a stream's final
state is the seam's `Collected`. Does not own pipes or processes (`_process.py`).

Decoding rules: a tail that starts inside a multi-byte character drops those leading
continuation bytes; a read of a still-open stream holds back an incomplete trailing character
until its remaining bytes arrive (offsets stay whole-stream byte offsets). Output exactly at the
cap is not truncated and has no spill file.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass
from typing import BinaryIO, Final

from ._ledger import SPILL_PREFIX, owner_name
from .records import Collected

__all__ = ["CaptureLimits", "Collected", "StreamCollector", "StreamRead", "decode"]

_SPILL_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True, slots=True)
class CaptureLimits:
    """How much of a stream to keep: the tail in memory, and the whole stream in a spill file
    (`spill_max_bytes=None`: no spill file)."""

    max_bytes: int
    spill_max_bytes: int | None = None


@dataclass(frozen=True, slots=True)
class StreamRead:
    """One consuming read: text since the offset, where to read next, and whether bytes between
    the offset and the retained tail were lost from memory (`lossy`)."""

    text: str
    next_offset: int
    lossy: bool
    spill_path: str | None


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _sequence_length(lead: int) -> int:
    """The length of the UTF-8 sequence a lead byte starts (1 for ASCII or an invalid lead)."""
    if lead >> 5 == 0b110:
        return 2
    if lead >> 4 == 0b1110:
        return 3
    if lead >> 3 == 0b11110:
        return 4
    return 1


def _incomplete_suffix(data: bytes | bytearray) -> int:
    """How many trailing bytes form the start of a UTF-8 character whose rest has not arrived."""
    end = len(data)
    for back in range(1, min(4, end) + 1):
        byte = data[end - back]
        if _is_continuation(byte):
            continue
        need = _sequence_length(byte)
        return back if need > back else 0
    return 0


def decode(data: bytes | bytearray, *, trim_leading: bool = False) -> str:
    """UTF-8 with replacement; `trim_leading` drops continuation bytes of a character cut off at
    the start (at most three)."""
    start = 0
    if trim_leading:
        while start < min(3, len(data)) and _is_continuation(data[start]):
            start += 1
    return bytes(data[start:]).decode("utf-8", errors="replace")


class StreamCollector:
    """Collects one stream. `feed` as bytes arrive, `seal` once at settlement."""

    __slots__ = (
        "_buf",
        "_dir",
        "_label",
        "_limits",
        "_sealed",
        "_spill",
        "_spill_path",
        "_spilled",
        "total",
    )

    def __init__(self, limits: CaptureLimits, *, spill_dir: SpillDirectory, label: str) -> None:
        self._limits = limits
        self._dir = spill_dir
        self._label = label
        self._buf = bytearray()
        self.total = 0
        """Bytes seen so far (the next whole-stream offset)."""
        self._spill: BinaryIO | None = None
        self._spill_path: str | None = None
        self._spilled = 0
        self._sealed = False

    @property
    def truncated(self) -> bool:
        """Some bytes were dropped from the in-memory tail."""
        return self.total > self._limits.max_bytes

    @property
    def spill_path(self) -> str | None:
        """The spill file, once sealed and complete (None while writing or when given up)."""
        return self._spill_path if self._sealed else None

    def feed(self, data: bytes) -> None:
        """Append `data` to the stream (ignored after `seal`)."""
        if self._sealed or not data:
            return
        limit = self._limits.max_bytes
        overflowed = self.total > limit
        self.total += len(data)
        if self.total > limit:
            if not overflowed:
                self._spill_write(bytes(self._buf))  # the spill holds the complete stream
            self._spill_write(data)
        if len(data) >= limit:
            self._buf = bytearray(data[-limit:])
            return
        buf = self._buf
        buf += data
        excess = len(buf) - limit
        if excess > 0:
            del buf[:excess]

    def _spill_write(self, data: bytes) -> None:
        spill_max = self._limits.spill_max_bytes
        if spill_max is None or not data:
            return
        if self._spill is None:
            if self._spilled:  # given up earlier
                return
            opened = self._dir.open(self._label)
            if opened is None:
                self._spilled = -1
                return
            self._spill, self._spill_path = opened
        if self._spilled + len(data) > spill_max:
            self._abandon_spill()
            return
        try:
            self._spill.write(data)
        except OSError:
            self._abandon_spill()
            return
        self._spilled += len(data)

    def _abandon_spill(self) -> None:
        spill, path = self._spill, self._spill_path
        self._spill, self._spill_path, self._spilled = None, None, -1
        if spill is not None:
            with contextlib.suppress(OSError):
                spill.close()
        if path is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)

    def seal(self) -> None:
        """Close the spill file; a failed close withholds its path. Idempotent."""
        if self._sealed:
            return
        self._sealed = True
        spill = self._spill
        self._spill = None
        if spill is not None:
            try:
                spill.close()
            except OSError:
                self._spill_path = None

    def result(self) -> Collected:
        """The stream as it ends: its tail, whether it was truncated, and the spill path."""
        return Collected(
            decode(self._buf, trim_leading=self.truncated), self.truncated, self.spill_path
        )

    def read_from(self, offset: int) -> StreamRead:
        """Text from byte `offset` on. If `offset` is before the retained tail the whole tail is
        returned and `lossy` is set. An open stream's incomplete last character is held back."""
        start = self.total - len(self._buf)
        lossy = offset < start
        begin = 0 if lossy else min(offset, self.total) - start
        chunk = self._buf[begin:]
        held = 0 if self._sealed else _incomplete_suffix(chunk)
        if held:
            chunk = chunk[: len(chunk) - held]
        return StreamRead(
            decode(chunk, trim_leading=lossy), self.total - held, lossy, self._spill_path
        )


class SpillDirectory:
    """A private (0700) directory created on first use; files in it are 0600 and exclusive.
    `keep`: `remove()` leaves the directory and its files for whoever was shown their paths.
    `parent`: where the directory (`tether-shell-<owner>-<random>`, the owner as the orphan
    ledger names it) is made, created 0700 if missing; default the system's temporary
    directory."""

    __slots__ = ("_counter", "_keep", "_parent", "_path")

    def __init__(self, *, keep: bool = False, parent: str | None = None) -> None:
        self._path: str | None = None
        self._counter = 0
        self._keep = keep
        self._parent = parent

    @property
    def path(self) -> str | None:
        """The directory, once created."""
        return self._path

    def open(self, label: str) -> tuple[BinaryIO, str] | None:
        """A new exclusive spill file `tether-subprocess-<pid>-<n>-<hex>-<label>.log`, or None
        when it cannot be created (the output is then only kept as a tail)."""
        try:
            if self._path is None:
                import tempfile

                if self._parent is not None:
                    os.makedirs(self._parent, mode=0o700, exist_ok=True)
                prefix = f"{SPILL_PREFIX}{owner_name()}-"
                self._path = tempfile.mkdtemp(prefix=prefix, dir=self._parent)  # mode 0700
            self._counter += 1
            unique = f"{os.getpid()}-{self._counter}-{secrets.token_hex(6)}"
            name = f"tether-subprocess-{unique}-{label}.log"
            path = os.path.join(self._path, name)
            fd = os.open(path, _SPILL_FLAGS, 0o600)
        except OSError:
            return None
        return os.fdopen(fd, "wb"), path

    def remove(self) -> None:
        """Delete the directory and every spill file in it (unless kept); the next file opens a
        new directory."""
        path, self._path = self._path, None
        if path is not None and not self._keep:
            import shutil

            shutil.rmtree(path, ignore_errors=True)
