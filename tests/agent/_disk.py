"""A directory that really runs out of space, for the fault-injection tests.

`SmallDisk.open(path)` mounts a tmpfs of `size` bytes at `path` (root may mount one: the suite
runs as root here). `fill(leave)` writes a filler file so that only `leave` bytes stay free, and
`free()` removes it. Files on it are real files; `ENOSPC` comes from the kernel.

When mounting is refused (not root, no `CAP_SYS_ADMIN`), the disk falls back to a *seam*: the
session log's one write function (`tether.agent.session.log._write_all`) raises
`OSError(ENOSPC)` once the bytes written through it would exceed the budget `fill(leave)` set,
or while the filler file exists — in this process (`arm(monkeypatch)`) and in `tether`
subprocesses (`env()` puts a `sitecustomize` on their `PYTHONPATH`). `mode` says which one a test
ran under; nothing is skipped; `TETHER_TEST_DISK=seam` forces the seam (to exercise the
fallback). The seam reaches only the session log, so tests about other writers (the orphan
ledger) patch their own write under it.

`fill_command()` is a bash command that fills the disk when it runs — from inside a tool call,
so the disk becomes full at one exact point of a turn (after the call's `tool/call` record,
before its result), whatever the sizes of the records before it: on a tmpfs it writes the
filler until the kernel refuses; with the seam it creates the (empty) filler, which makes every
later session-log write fail.
"""

from __future__ import annotations

import errno
import os
import shlex
import subprocess
from pathlib import Path
from typing import Literal

import pytest

__all__ = ["SmallDisk"]

_FILLER = ".filler"
_BUDGET_ENV = "TETHER_TEST_WRITE_BUDGET"
_FULL_ENV = "TETHER_TEST_FULL_WHILE"
_SITECUSTOMIZE = f'''
import errno, os
_budget = os.environ.get("{_BUDGET_ENV}")
_full = os.environ.get("{_FULL_ENV}")
if _budget is not None or _full is not None:
    from tether.agent.session import log as _log
    _left = [None if _budget is None else int(_budget)]
    _real = _log._write_all
    def _write_all(fd, data):
        if _full is not None and os.path.exists(_full):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if _left[0] is not None:
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

    def fill_command(self) -> str:
        """A bash command that fills the disk when it runs (see the module)."""
        filler = shlex.quote(str(self.path / _FILLER))
        if self.mode == "seam":
            return f"touch {filler}"
        return f"cat /dev/zero > {filler} 2>/dev/null; true"

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
            if (self.path / _FILLER).exists():
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            if self.budget is not None:
                if len(data) > self.budget:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                self.budget -= len(data)
            real(fd, data)

        monkeypatch.setattr(log, "_write_all", write_all)

    def env(self) -> dict[str, str]:
        """Extra environment for a `tether` subprocess (seam mode: the seam, the filler it
        watches and the budget, if one is set)."""
        if self.mode != "seam":
            return {}
        self._site.mkdir(exist_ok=True)
        (self._site / "sitecustomize.py").write_text(_SITECUSTOMIZE)
        path = os.pathsep.join(p for p in (str(self._site), os.environ.get("PYTHONPATH")) if p)
        env = {"PYTHONPATH": path, _FULL_ENV: str(self.path / _FILLER)}
        if self.budget is not None:
            env[_BUDGET_ENV] = str(self.budget)
        return env

    def close(self) -> None:
        if self.mode == "tmpfs":
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True, check=False)
