"""A directory that really runs out of space, for the fault-injection tests.

`SmallDisk.open(path)` mounts a tmpfs of `size` bytes at `path` (root may mount one: the suite
runs as root here). `fill(leave)` writes a filler file so that only `leave` bytes stay free, and
`free()` removes it. Files on it are real files; `ENOSPC` comes from the kernel.

When mounting is refused (not root, no `CAP_SYS_ADMIN`), the disk falls back to a *seam*: the
session log's one write function (`tether.agent.session.log._write_all`) raises
`OSError(ENOSPC)` once the bytes written through it would exceed the budget `fill(leave)` set —
in this process (`arm(monkeypatch)`) and in `tether` subprocesses (`env()` puts a
`sitecustomize` on their `PYTHONPATH`). `mode` says which one a test ran under; nothing is
skipped; `TETHER_TEST_DISK=seam` forces the seam (to exercise the fallback). The seam reaches
only the session log, so tests about other writers (the orphan ledger) patch their own write
under it.
"""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path
from typing import Literal

import pytest

__all__ = ["SmallDisk"]

_FILLER = ".filler"
_BUDGET_ENV = "TETHER_TEST_WRITE_BUDGET"
_SITECUSTOMIZE = f'''
import errno, os
_budget = os.environ.get("{_BUDGET_ENV}")
if _budget is not None:
    from tether.agent.session import log as _log
    _left = [int(_budget)]
    _real = _log._write_all
    def _write_all(fd, data):
        if len(data) > _left[0]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        _left[0] -= len(data)
        _real(fd, data)
    _log._write_all = _write_all
'''


class SmallDisk:
    """A small filesystem at `path` (see the module)."""

    def __init__(self, path: Path, mode: Literal["tmpfs", "seam"]) -> None:
        self.path = path
        self.mode: Literal["tmpfs", "seam"] = mode
        self.budget: int | None = None  # seam mode: bytes the session log may still write
        self._site = path.parent / f"{path.name}-site"

    @classmethod
    def open(cls, path: Path, *, size: int = 64 * 1024) -> SmallDisk:
        path.mkdir(parents=True, exist_ok=True)
        if os.environ.get("TETHER_TEST_DISK") == "seam":
            return cls(path, "seam")
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
            capture_output=True,
            check=False,
        )
        return cls(path, "tmpfs" if mounted.returncode == 0 else "seam")

    def available(self) -> int:
        stats = os.statvfs(self.path)
        return stats.f_bavail * stats.f_frsize

    def fill(self, leave: int) -> None:
        """Leave only `leave` bytes free."""
        if self.mode == "seam":
            self.budget = leave
            return
        filler = self.path / _FILLER
        filler.write_bytes(b"")
        chunk = b"\0" * 4096
        with filler.open("ab") as file:
            while self.available() > leave:
                want = min(len(chunk), self.available() - leave)
                file.write(chunk[:want])
                file.flush()
        assert self.available() <= leave

    def free(self) -> None:
        """Make room again."""
        self.budget = None
        (self.path / _FILLER).unlink(missing_ok=True)

    def arm(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Seam mode: make this process's session-log writes honour the budget."""
        if self.mode != "seam":
            return
        from tether.agent.session import log

        real = log._write_all

        def write_all(fd: int, data: bytes) -> None:
            if self.budget is not None:
                if len(data) > self.budget:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                self.budget -= len(data)
            real(fd, data)

        monkeypatch.setattr(log, "_write_all", write_all)

    def env(self) -> dict[str, str]:
        """Extra environment for a `tether` subprocess (seam mode: the budget and the seam)."""
        if self.mode != "seam" or self.budget is None:
            return {}
        self._site.mkdir(exist_ok=True)
        (self._site / "sitecustomize.py").write_text(_SITECUSTOMIZE)
        path = os.pathsep.join(p for p in (str(self._site), os.environ.get("PYTHONPATH")) if p)
        return {"PYTHONPATH": path, _BUDGET_ENV: str(self.budget)}

    def close(self) -> None:
        if self.mode == "tmpfs":
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True, check=False)
