from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tether.agent.session import SessionLog, SessionStore
from tether.kernel import Context
from tether.plugins.fs import plugin as fs_plugin
from tether.plugins.shell import bash as bash_plugin
from tether.plugins.shell import plugin as shell_plugin
from tether.tools import ToolRuntime

from ._support import FakeAgent


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh `~` so that the user's own ~/.claude/settings.json is never read."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
async def ctx(project: Path) -> AsyncIterator[Context]:
    """tools, shell (grace 200 ms), bash (foreground only) and fs rooted at the project."""
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(shell_plugin, {"grace_ms": 200, "cwd": str(project)})
    await ctx.plugin(bash_plugin, {"enable_run_in_background": False})
    await ctx.plugin(fs_plugin, {"root": str(project)})
    yield ctx
    await ctx.dispose()


@pytest.fixture
def session(tmp_path: Path, project: Path) -> Iterator[SessionLog]:
    """A real session log with turn 1 open."""
    log = SessionStore(tmp_path / "sessions").create(cwd=project)
    log.turn_start(1)
    yield log
    log.close()


@pytest.fixture
def agent(session: SessionLog) -> FakeAgent:
    return FakeAgent(session)
