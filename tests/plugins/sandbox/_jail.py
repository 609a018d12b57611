"""Running one real sandboxed command with `confine()` and bwrap, as a test's user
(`tests/users.py`), in a fresh workspace, home and outside directory of that user's."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...users import User, private_directory

RUNNER = """
import os, subprocess, sys
from tether.plugins.sandbox import SandboxPolicy, confine, kernel_support
workspace, command = sys.argv[1], sys.argv[2]
roots = tuple(root for root in sys.argv[3:] if root)
jail = confine(["bash", "-c", command], policy=SandboxPolicy(writable_roots=roots),
               workspace=workspace, workdir=workspace, support=kernel_support())
try:
    done = subprocess.run(jail.argv, pass_fds=jail.pass_fds, env={**os.environ, **jail.env},
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
finally:
    jail.spawned()
    jail.release()
sys.stdout.write(done.stdout)
sys.exit(done.returncode)
"""


@dataclass
class Box:
    """A user's workspace (`ws`, or their home when `workspace_is_home`), home and a directory
    of theirs outside the workspace."""

    user: User
    root: Path
    workspace_is_home: bool = False

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def workspace(self) -> Path:
        return self.home if self.workspace_is_home else self.root / "ws"

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    def env(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(self.home),
            "TETHER_HOME": str(self.home / ".tether"),
            "LANG": "C.UTF-8",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
        }

    def argv(self, command: str, writable_roots: Sequence[Path] = ()) -> list[str]:
        roots = [str(root) for root in writable_roots]
        return self.user.argv([sys.executable, "-c", RUNNER, str(self.workspace), command, *roots])

    def run(
        self, command: str, writable_roots: Sequence[Path] = ()
    ) -> subprocess.CompletedProcess[str]:
        """`command` sandboxed in the workspace (`writable_roots` writable besides it); stdout
        holds its stdout and stderr."""
        return subprocess.run(
            self.argv(command, writable_roots),
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )

    def start(self, command: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.argv(command),
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def host(self, *argv: str) -> subprocess.CompletedProcess[str]:
        """`argv` on the host, as the user, in the workspace (the user's next `git status`)."""
        return subprocess.run(
            self.user.argv(argv),
            cwd=self.workspace,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def own(self) -> None:
        self.user.own(self.root)


def boxes(user: User) -> Iterator[Box]:
    """A fresh `Box` of `user`'s (the `box` fixture of conftest.py)."""
    with private_directory(user) as root:
        for name in ("ws", "home", "outside"):
            (root / name).mkdir()
        user.own(root)
        yield Box(user, root)


def payload(box: Box) -> tuple[str, Path]:
    """A command that leaves a marker outside the workspace when it runs, and that marker."""
    marker = box.outside / "payload-ran"
    return f"touch {marker}", marker


def lines(text: str) -> Sequence[str]:
    return [line for line in text.splitlines() if line]
