"""Running a test's command as this user and as an unprivileged one.

CI runs as root, where bwrap needs no user namespace and a sandbox must hold against uid 0; a
user's machine runs unprivileged, where bwrap must create one. Tests that start a real `tether`
take a `user` (`USERS`): `current` runs the command as is; `nobody` (only when this process is
root) runs it under `setpriv --reuid 65534 --regid 65534 --clear-groups`, with every directory
it needs owned by nobody. When the suite itself is unprivileged, `current` is that case, and the
`nobody` variant is skipped as the same test again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["CURRENT", "NOBODY", "PYTHON_FOR_ALL", "USERS", "User", "private_directory"]


@dataclass(frozen=True)
class User:
    """Who runs a command: `uid`/`gid` None is this process's own user."""

    name: str
    uid: int | None = None
    gid: int | None = None

    def argv(self, argv: Sequence[str]) -> list[str]:
        """`argv` as this user runs it."""
        if self.uid is None:
            return list(argv)
        return [
            "setpriv",
            f"--reuid={self.uid}",
            f"--regid={self.gid}",
            "--clear-groups",
            *argv,
        ]

    def own(self, path: Path) -> None:
        """Make `path` (and everything under it) this user's."""
        if self.uid is None or self.gid is None:
            return
        for root, directories, files in os.walk(path):
            for name in (*directories, *files):
                os.lchown(os.path.join(root, name), self.uid, self.gid)
        os.lchown(path, self.uid, self.gid)


PYTHON_FOR_ALL = next(
    (p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.access(p, os.X_OK)),
    sys.executable,
)
"""A Python every user can run (the suite's own may live under root's 0700 home) for scripts a
command runs inside the sandbox."""

CURRENT = User("current")
NOBODY = User("nobody", 65534, 65534)


def _nobody_problem() -> str | None:
    """Why `nobody` cannot be exercised here, or None."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return "the suite already runs unprivileged: current-user is this case"
    probe = subprocess.run(
        NOBODY.argv([sys.executable, "-c", "import tether"]),
        capture_output=True,
        check=False,
        timeout=120,
    )
    if probe.returncode != 0:
        return (
            f"nobody cannot run this interpreter ({sys.executable}: it lives in a directory only "
            "root may read); the unprivileged case runs where the checkout and the interpreter "
            "are readable by every user"
        )
    return None


_NOBODY_PROBLEM = _nobody_problem()

USERS = [
    pytest.param(CURRENT, id="current-user"),
    pytest.param(
        NOBODY,
        id="nobody",
        marks=pytest.mark.skipif(_NOBODY_PROBLEM is not None, reason=_NOBODY_PROBLEM or ""),
    ),
]
"""Parametrize a test with `@pytest.mark.parametrize("user", USERS)`."""


@contextmanager
def private_directory(user: User) -> Iterator[Path]:
    """A fresh directory owned by `user`, removed afterwards: under `/var/tmp`, which every user
    can reach (pytest's `tmp_path` is private to root) and which, unlike `/tmp`, a sandboxed
    command sees (its /tmp is private)."""
    parent = "/var/tmp" if os.path.isdir("/var/tmp") else None
    path = Path(tempfile.mkdtemp(prefix="tether-user-test-", dir=parent))
    try:
        path.chmod(0o755)
        user.own(path)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
