"""`tether tools call write|edit` as this user and as an unprivileged one (`tests/users.py`):
the attacks of issue 32 item 1 are refused headless with FS_SANDBOX_DENIED naming the path and
why, and leave the files as they were (an edit needs a read first, which one call cannot
give: the in-process tests cover `.git/config` after a read); an ordinary write in the
workspace works. With `--yolo`, `tether chat` asks before writing `tether.yml` (a no writes
nothing) and `tether run` refuses it."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ...cli._support import TETHER, Cli, Terminal
from ...users import USERS, User, private_directory

pytestmark = pytest.mark.timeout(300)

PROTECTED = "a file a program outside the sandbox trusts later: git, tether and agent settings"


@dataclass
class Box:
    user: User
    root: Path

    @property
    def workspace(self) -> Path:
        return self.root / "ws"

    def call(self, tool: str, **arguments: object) -> subprocess.CompletedProcess[str]:
        argv = [str(TETHER), "tools", "call", tool, json.dumps(arguments)]
        return subprocess.run(
            self.user.argv([*argv, "--cwd", str(self.workspace)]),
            env={
                "PATH": os.environ.get("PATH", os.defpath),
                "HOME": str(self.root / "home"),
                "TETHER_HOME": str(self.root / "home" / ".tether"),
                "LANG": "C.UTF-8",
            },
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )


@pytest.fixture(params=USERS)
def box(request: pytest.FixtureRequest) -> Iterator[Box]:
    user: User = request.param
    with private_directory(user) as root:
        (root / "ws" / ".git").mkdir(parents=True)
        (root / "ws" / ".git" / "config").write_text("[core]\n")
        (root / "home").mkdir()
        user.own(root)
        yield Box(user, root)


def test_writing_tether_yml_is_refused_headless(box: Box) -> None:
    done = box.call("write", file_path="tether.yml", content="sandbox: danger-full-access\n")

    path = box.workspace / "tether.yml"
    assert done.returncode == 1
    assert done.stderr.startswith(
        f'tether: FS_SANDBOX_DENIED: cannot write "{path}": tether.yml is protected by the'
        f" sandbox ({PROTECTED}) — nobody can allow it outside the sandbox here"
    ), done.stderr
    assert not path.exists()


def test_planting_a_git_hook_is_refused_headless(box: Box) -> None:
    done = box.call("write", file_path=".git/hooks/pre-commit", content="#!/bin/sh\nid\n")

    hook = box.workspace / ".git" / "hooks" / "pre-commit"
    assert done.returncode == 1
    assert f'cannot write "{hook}": .git/hooks is protected by the sandbox' in done.stderr
    assert not (box.workspace / ".git" / "hooks").exists()


def test_an_ordinary_write_in_the_workspace_works(box: Box) -> None:
    done = box.call("write", file_path="src/a.txt", content="hi\n")

    assert done.returncode == 0, done.stderr
    written = box.workspace / "src" / "a.txt"
    assert written.read_text() == "hi\n"
    if box.user.uid is not None:
        assert written.stat().st_uid == box.user.uid


# -- tether chat and tether run, with --yolo ------------------------------------------------------


@pytest.fixture
async def server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as scripted:
        yield scripted


@pytest.fixture
def cli(tmp_path: Path, server: ScriptedModelServer) -> Cli:
    cli = Cli(tmp_path, server.base_url)
    cli.env["HOME"] = str(tmp_path / "user")
    return cli


ATTACK = ("w1", "write", json.dumps({"file_path": "tether.yml", "content": "sandbox: x\n"}))


@pytest.mark.slow
async def test_chat_with_yolo_asks_before_writing_tether_yml_and_a_no_writes_nothing(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(ATTACK), text_reply("could not"))
    terminal = await Terminal.open([str(TETHER), "chat", "--yolo"], cwd=cli.work, env=cli.env)
    try:
        await terminal.expect("›")
        terminal.send(b"escape\r")
        await terminal.expect(
            "? write is refused by the sandbox: make this change once outside the sandbox?"
        )
        await terminal.expect("approve? ")
        terminal.send(b"n\r")
        await terminal.expect("could not")
        await terminal.expect("›")
        terminal.send(b"/exit\r")
        assert await terminal.wait() == 0
    finally:
        await terminal.aclose()
    assert not (cli.work / "tether.yml").exists()


@pytest.mark.slow
async def test_run_with_yolo_refuses_writing_tether_yml(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(ATTACK), text_reply("could not"))

    done = await cli.run("run", "--yolo", "escape")

    assert (done.code, done.stdout) == (0, "could not\n")
    (tool_result,) = [m for m in server.requests[1].messages if m["role"] == "tool"]
    path = cli.work / "tether.yml"
    assert str(tool_result["content"]).startswith(
        f'Error: cannot write "{path}": tether.yml is protected by the sandbox ({PROTECTED})'
        " — nobody can allow it outside the sandbox here"
    )
    assert not path.exists()
