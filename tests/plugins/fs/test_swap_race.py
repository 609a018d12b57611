"""The `write` swap race (issue 32 item 2), as this user and as an unprivileged one: a real
background process exchanges a workspace directory with a link to a directory outside
(`renameat2(RENAME_EXCHANGE)` in a loop) while 1,000 `write` calls go to files in that directory.
Every write either lands inside the workspace or fails with one of the clear errors below; none
lands outside, and no temp file is left anywhere. Run with `openat2` and with the per-component
walk it falls back to."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ...users import PYTHON_FOR_ALL, USERS, User, private_directory

pytestmark = pytest.mark.timeout(300)

SCRIPT = Path(__file__).with_name("_swap_race.py")
WRITES = 1000

CLEAR_ERRORS = {
    'FS_SANDBOX_DENIED: cannot access "{d}/f<i>": it is outside the workspace "{ws}"',
    'FS_SANDBOX_DENIED: cannot write "{d}/f<i>": a directory on its path is a symbolic link'
    " (the file tools never write through one; it may have been swapped in meanwhile);"
    " nothing was written",
    'FS_IO_ERROR: cannot access "{d}/f<i>": its path changed while it was resolved'
    " (Invalid argument); nothing was done",
}


def _race(user: User, root: Path, mechanism: str, operation: str) -> dict[str, Any]:
    """Run `_swap_race.py` as `user` in `root/ws` against `root/outside`; its summary."""
    (root / "ws").mkdir()
    (root / "outside").mkdir()
    user.own(root)
    argv = [sys.executable, str(SCRIPT), str(root / "ws"), str(root / "outside"), str(WRITES)]
    run = subprocess.run(
        user.argv([*argv, mechanism, PYTHON_FOR_ALL, operation]),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    summary: dict[str, Any] = json.loads(run.stdout)
    return summary


@pytest.mark.parametrize("mechanism", ["openat2", "walk"])
@pytest.mark.parametrize("user", USERS)
def test_a_directory_swapped_for_a_link_outside_gets_no_write_outside(
    user: User, mechanism: str
) -> None:
    with private_directory(user) as root:
        workspace, outside = root / "ws", root / "outside"
        summary = _race(user, root, mechanism, "write")

        assert os.listdir(outside) == []
        assert [path for path in root.rglob("*") if path.name.endswith(".tether-tmp")] == []
        failures: dict[str, int] = summary["failures"]
        assert summary["succeeded"] + sum(failures.values()) == WRITES
        known = {text.format(d=workspace / "d", ws=workspace) for text in CLEAR_ERRORS}
        assert set(failures) <= known
        (real,) = [path for path in (workspace / "d", workspace / "s") if not path.is_symlink()]
        landed = sorted(real.iterdir())
        assert len(landed) == summary["succeeded"]
        for path in landed:
            assert path.read_text() == f"payload {path.name.removeprefix('f')}\n"
        assert summary["swaps"] > 0
        if mechanism == "walk":
            assert summary["openat2"] is False


READ_ERRORS = {
    'FS_SANDBOX_DENIED: cannot access "{d}/secret": it is outside the workspace "{ws}"',
    'FS_SANDBOX_DENIED: cannot read "{d}/secret": a symbolic link is on its path (the file'
    " tools never read through one once the path is resolved; it may have been swapped in"
    " meanwhile); nothing was read",
    'FS_SANDBOX_DENIED: cannot access "{d}/secret": a symbolic link is on its path (the file'
    " tools never follow one once the path is resolved; it may have been swapped in"
    " meanwhile); nothing was done",
    'FS_IO_ERROR: cannot access "{d}/secret": its path changed while it was resolved'
    " (Invalid argument); nothing was done",
}


@pytest.mark.parametrize("mechanism", ["openat2", "walk"])
@pytest.mark.parametrize("user", USERS)
def test_a_directory_swapped_for_a_link_outside_gets_no_read_of_a_file_outside(
    user: User, mechanism: str
) -> None:
    with private_directory(user) as root:
        workspace = root / "ws"
        summary = _race(user, root, mechanism, "read")

        assert summary["leaked"] == 0
        failures: dict[str, int] = summary["failures"]
        assert summary["succeeded"] + sum(failures.values()) == WRITES
        known = {text.format(d=workspace / "d", ws=workspace) for text in READ_ERRORS}
        assert set(failures) <= known, failures
        assert summary["swaps"] > 0


@pytest.mark.parametrize("mechanism", ["openat2", "walk"])
@pytest.mark.parametrize("user", USERS)
def test_a_directory_swapped_for_a_link_outside_tells_nothing_of_the_file_outside(
    user: User, mechanism: str
) -> None:
    """Outside, `secret` is a directory: a read refused as "not a regular file" (or "not
    found") would have looked at it. Every read either shows the inside text or fails with one
    of the clear errors."""
    with private_directory(user) as root:
        workspace = root / "ws"
        summary = _race(user, root, mechanism, "stat")

        failures: dict[str, int] = summary["failures"]
        assert summary["succeeded"] + sum(failures.values()) == WRITES
        known = {text.format(d=workspace / "d", ws=workspace) for text in READ_ERRORS}
        assert set(failures) <= known, failures
        assert summary["swaps"] > 0
