from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tether.kernel import Context
from tether.plugins.jobs import plugin as jobs_plugin
from tether.plugins.sandbox import SandboxSettings
from tether.plugins.shell import LocalBashExecutor, ShellConfig, SubprocessService
from tether.plugins.shell import bash as bash_plugin
from tether.plugins.shell import plugin as shell_plugin
from tether.tools import ToolRuntime

from ._support import UNCONTAINED

GRACE_MS = 200


@pytest.fixture
def uncontained(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine as one without `bwrap` (`TETHER_BWRAP` empty), for this test and the
    processes it starts: services run the fallback and refuse sandboxed commands."""
    monkeypatch.setenv("TETHER_BWRAP", "")


@pytest.fixture
async def service() -> AsyncIterator[SubprocessService]:
    """The default service: contained when this machine can (it can, where the suite runs)."""
    service = SubprocessService()
    yield service
    await service.aclose()


@pytest.fixture
async def fallback_service() -> AsyncIterator[SubprocessService]:
    """A service as on a machine without namespaces: the subreaper, tags and looks."""
    service = SubprocessService(support=UNCONTAINED)
    yield service
    await service.aclose()


@pytest.fixture
async def executor(tmp_path: Path) -> AsyncIterator[LocalBashExecutor]:
    """Contained, sandboxed (`workspace-write`) with `tmp_path` as the workspace."""
    executor = LocalBashExecutor(ShellConfig(grace_ms=GRACE_MS, cwd=str(tmp_path)))
    yield executor
    await executor.aclose()


@pytest.fixture
async def fallback_executor(tmp_path: Path) -> AsyncIterator[LocalBashExecutor]:
    """Full access without containment: the fallback's guarantees, in `tmp_path`."""
    full_access = SandboxSettings(mode="danger-full-access")
    config = ShellConfig(grace_ms=GRACE_MS, cwd=str(tmp_path), sandbox=full_access)
    executor = LocalBashExecutor(config, subprocesses=SubprocessService(support=UNCONTAINED))
    yield executor
    await executor.aclose()


@pytest.fixture
async def ctx(tmp_path: Path) -> AsyncIterator[Context]:
    """Tools, shell (grace 200 ms, workspace `tmp_path`), jobs and bash, disposed after."""
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(shell_plugin, {"grace_ms": GRACE_MS, "cwd": str(tmp_path)})
    await ctx.plugin(jobs_plugin)
    await ctx.plugin(bash_plugin)
    yield ctx
    await ctx.dispose()
