"""Fixtures for the search tools: a real tree in tmp_path; `ctx.tools` with the timeout policy,
the shell and `search-tools` mounted."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tether.core.signals import AbortController, AbortSignal
from tether.kernel import Context
from tether.plugins import timeout_policy
from tether.plugins.search import tools as search_tools
from tether.plugins.shell import plugin as shell_plugin
from tether.tools import (
    ToolExecutionInput,
    ToolExecutionResult,
    ToolFailure,
    ToolRuntime,
    ToolSuccess,
)


class Search:
    def __init__(self, ctx: Context, root: Path) -> None:
        self.ctx = ctx
        self.root = root

    async def call(
        self, name: str, *, signal: AbortSignal | None = None, **arguments: object
    ) -> ToolExecutionResult:
        return await self.run(name, arguments, signal)

    async def run(
        self, name: str, arguments: dict[str, object], signal: AbortSignal | None = None
    ) -> ToolExecutionResult:
        result: ToolExecutionResult = await self.ctx.tools.execute(
            ToolExecutionInput(
                call_id="c1",
                name=name,
                arguments=arguments,
                signal=AbortController().signal if signal is None else signal,
            )
        )
        return result

    async def text(self, name: str, **arguments: object) -> str:
        result = await self.run(name, arguments)
        assert isinstance(result, ToolSuccess), result
        (block,) = result.content
        text = block["text"]
        assert isinstance(text, str)
        return text

    async def fail(self, name: str, **arguments: object) -> ToolFailure:
        result = await self.run(name, arguments)
        assert isinstance(result, ToolFailure), result
        return result


async def mount(root: Path, **config: object) -> Search:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(timeout_policy)
    await ctx.plugin(shell_plugin, {"grace_ms": 200})
    await ctx.plugin(search_tools, {"root": str(root), **config})
    return Search(ctx, root)


def touch(path: Path, text: str, age_s: int = 0) -> Path:
    """Write `text` to `path` (parents created) with an mtime `age_s` seconds in the past."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    stamp = 1_700_000_000 - age_s
    os.utime(path, (stamp, stamp))
    return path


@pytest.fixture
async def search(tmp_path: Path) -> AsyncIterator[Search]:
    harness = await mount(tmp_path)
    yield harness
    await harness.ctx.dispose()
