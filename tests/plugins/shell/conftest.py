from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tether.kernel import Context
from tether.plugins.jobs import plugin as jobs_plugin
from tether.plugins.shell import LocalBashExecutor, ShellConfig, SubprocessService
from tether.plugins.shell import bash as bash_plugin
from tether.plugins.shell import plugin as shell_plugin
from tether.tools import ToolRuntime

GRACE_MS = 200


@pytest.fixture
async def service() -> AsyncIterator[SubprocessService]:
    service = SubprocessService()
    yield service
    await service.aclose()


@pytest.fixture
async def executor() -> AsyncIterator[LocalBashExecutor]:
    executor = LocalBashExecutor(ShellConfig(grace_ms=GRACE_MS))
    yield executor
    await executor.aclose()


@pytest.fixture
async def ctx() -> AsyncIterator[Context]:
    """Tools, shell (grace 200 ms), jobs and bash, disposed after the test."""
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(shell_plugin, {"grace_ms": GRACE_MS})
    await ctx.plugin(jobs_plugin)
    await ctx.plugin(bash_plugin)
    yield ctx
    await ctx.dispose()
