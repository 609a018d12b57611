"""Where spilled results go: the `SpillStore` seam and its local backend, `LocalSpillStore`.

Owns: saving one full text for one owner under one key and answering where it is (`Spilled`:
the locator and how to read it back). Does not own deciding what to spill or the preview
(`policy.py`).

Local backend. The owner is an agent whose session log has a file path (`agent.session.path`);
texts go to `<session directory>/spill/<key>.txt` (the key with anything but letters, digits,
`.`, `_` and `-` replaced by `_`; `-2`, `-3`, ... when taken), 0600 in a 0700 directory,
written whole and fsynced (with its directory) before the locator is returned — a durable log
line never names a file that a crash could lose. The files live and go with their session.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

__all__ = ["LOCAL_HINT", "LocalSpillStore", "NoSpillOwner", "SpillStore", "Spilled"]

LOCAL_HINT: Final = "Use read with offset/limit, or grep this path to search within it."


@functools.cache
def _unsafe() -> re.Pattern[str]:
    return re.compile(r"[^A-Za-z0-9._-]")


_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


class NoSpillOwner(LookupError):
    """The call has no owner the store can keep a file for (no agent, or no session file)."""


@dataclass(frozen=True, slots=True)
class Spilled:
    """Where a saved text is: `locator` (a path for the local backend) and `retrieval_hint`."""

    locator: str
    retrieval_hint: str


class SpillStore(Protocol):
    """`save(owner, key, text)`: keep `text` for `owner` and say where. Raises `NoSpillOwner`
    when there is no owner to keep it for, `OSError` when it cannot be stored."""

    def save(self, owner: object | None, key: str, text: str) -> Spilled: ...


def _session_dir(owner: object | None) -> Path:
    session = getattr(owner, "session", None) if owner is not None else None
    path = getattr(session, "path", None)
    if not isinstance(path, Path):
        raise NoSpillOwner("the call has no agent with a session file to keep the full text beside")
    return path.parent


class LocalSpillStore:
    """Spill files beside the owner's session log (see the module note)."""

    def save(self, owner: object | None, key: str, text: str) -> Spilled:
        folder = _session_dir(owner) / "spill"
        folder.mkdir(mode=0o700, exist_ok=True)
        data = text.encode("utf-8", "surrogatepass")
        stem = _unsafe().sub("_", key) or "result"
        n = 1
        while True:
            path = folder / (f"{stem}.txt" if n == 1 else f"{stem}-{n}.txt")
            try:
                fd = os.open(path, _FLAGS, 0o600)
            except FileExistsError:
                n += 1
                continue
            break
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise
        os.close(fd)
        _fsync_dir(folder)
        return Spilled(str(path), LOCAL_HINT)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
