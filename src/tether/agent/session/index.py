"""The listing index: what `SessionStore.list_sessions` and `sweep` remember between runs.

Owns `<root>/.sessions-index.json`, a cache with one entry per session directory: the published
log's identity (inode, size, mtime) with its summary (id, creation time, cwd, title, origin), and
the directory's mtime when a sweep last found it clean (a published log, no temp file). With it,
listing 10,000 sessions costs two `stat`s per session instead of reading every file, and a
sweep looks only into directories that changed.

Correct by construction, never trusted blindly: an entry is used only when the file or the
directory still has exactly the identity it was recorded with — an append changes the size and
the mtime, a salvage the size, a re-created file the inode, a temp file the directory's mtime —
and an identity whose mtime is within `RACY_NS` of when it was recorded is never stored (file
timestamps are coarse: a change in the same tick could keep the mtime). So a session written
while it is listed is re-read on the next listing. A missing, unreadable or foreign index is
rebuilt; writing it is best effort (temp file + rename, no fsync: it is only a cache); two
processes saving at once leave one of two valid indexes.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["INDEX_NAME", "RACY_NS", "CachedSummary", "FileIdentity", "ListingIndex"]

INDEX_NAME: Final = ".sessions-index.json"
RACY_NS: Final = 2_000_000_000
"""An mtime this close to the moment it was seen is not cached (timestamps are coarse)."""

_VERSION: Final = 2

FileIdentity = tuple[int, int, int]
"""(inode, size, mtime in ns) of a session's log."""


@dataclass(frozen=True, slots=True)
class CachedSummary:
    """A log's summary as recorded for its identity."""

    identity: FileIdentity
    id: str
    created_at: int
    cwd: str | None
    title: str | None
    origin: str | None = None


class ListingIndex:
    """The index of one sessions root, loaded once; `save()` writes it back if it changed."""

    def __init__(self, root: Path) -> None:
        self._path = root / INDEX_NAME
        self._summaries: dict[str, CachedSummary] = {}
        self._clean: dict[str, int] = {}  # directory name -> mtime ns when found clean
        self._seen: set[str] = set()
        self._changed = False
        self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self._path.read_bytes())
            if not isinstance(data, dict) or data.get("version") != _VERSION:
                raise ValueError("another version")
            for name, entry in data["sessions"].items():
                log = entry.get("log")
                if log is not None:
                    ino, size, mtime = log
                    cwd, title = entry.get("cwd"), entry.get("title")
                    origin = entry.get("origin")
                    self._summaries[name] = CachedSummary(
                        (int(ino), int(size), int(mtime)),
                        str(entry["id"]),
                        int(entry["created_at"]),
                        None if cwd is None else str(cwd),
                        None if title is None else str(title),
                        None if origin is None else str(origin),
                    )
                clean = entry.get("clean")
                if clean is not None:
                    self._clean[name] = int(clean)
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            self._summaries.clear()
            self._clean.clear()
            self._changed = True  # rebuilt from scratch: worth saving

    # -- summaries ------------------------------------------------------------------------------

    def summary(self, name: str, identity: FileIdentity) -> CachedSummary | None:
        """The summary recorded for this directory's log, if the log still is what it was."""
        self._seen.add(name)
        cached = self._summaries.get(name)
        return cached if cached is not None and cached.identity == identity else None

    def remember(self, name: str, summary: CachedSummary) -> None:
        self._seen.add(name)
        if _racy(summary.identity[2]):
            if self._summaries.pop(name, None) is not None:
                self._changed = True
            return
        if self._summaries.get(name) != summary:
            self._summaries[name] = summary
            self._changed = True

    # -- sweeping -------------------------------------------------------------------------------

    def known_clean(self, name: str, directory_mtime_ns: int) -> bool:
        """Whether a sweep found this directory clean and it has not changed since."""
        self._seen.add(name)
        return self._clean.get(name) == directory_mtime_ns

    def mark_clean(self, name: str, directory_mtime_ns: int) -> None:
        self._seen.add(name)
        if _racy(directory_mtime_ns):
            return
        if self._clean.get(name) != directory_mtime_ns:
            self._clean[name] = directory_mtime_ns
            self._changed = True

    def forget_clean(self, name: str) -> None:
        if self._clean.pop(name, None) is not None:
            self._changed = True

    # -- persistence ----------------------------------------------------------------------------

    def save(self, *, prune: bool) -> None:
        """Write the index if it changed (best effort). `prune`: drop the directories this run
        did not see (it looked at every directory of the root)."""
        if prune:
            for table in (self._summaries, self._clean):
                for name in [n for n in table if n not in self._seen]:
                    del table[name]
                    self._changed = True
        if not self._changed:
            return
        sessions: dict[str, dict[str, object]] = {}
        for name, cached in self._summaries.items():
            sessions[name] = {
                "log": list(cached.identity),
                "id": cached.id,
                "created_at": cached.created_at,
                "cwd": cached.cwd,
                "title": cached.title,
                "origin": cached.origin,
            }
        for name, clean in self._clean.items():
            sessions.setdefault(name, {})["clean"] = clean
        payload = json.dumps({"version": _VERSION, "sessions": sessions}, ensure_ascii=False)
        temp = self._path.with_name(f"{INDEX_NAME}.{os.getpid()}.tmp")
        try:
            temp.write_text(payload, encoding="utf-8", errors="surrogatepass")
            os.replace(temp, self._path)
        except OSError:
            with contextlib.suppress(OSError):
                temp.unlink()
            return
        self._changed = False


def _racy(mtime_ns: int) -> bool:
    return time.time_ns() - mtime_ns < RACY_NS
