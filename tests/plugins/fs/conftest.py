"""Fixtures for the filesystem tools: a real workspace in tmp_path, mounted through the kernel."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tether.core.json import JsonValue
from tether.core.signals import AbortController, AbortSignal
from tether.kernel import Context
from tether.plugins.fs import plugin as fs_plugin
from tether.tools import (
    ToolExecutionInput,
    ToolExecutionResult,
    ToolFailure,
    ToolRuntime,
    ToolSuccess,
)


class Harness:
    """A root context with `tools` and the `fs` plugin mounted over `root`."""

    def __init__(self, ctx: Context, root: Path) -> None:
        self.ctx = ctx
        self.root = root
        self._calls = 0

    async def call(
        self, name: str, *, signal: AbortSignal | None = None, **arguments: object
    ) -> ToolExecutionResult:
        return await self.run(name, arguments, signal)

    async def run(
        self, name: str, arguments: dict[str, object], signal: AbortSignal | None = None
    ) -> ToolExecutionResult:
        self._calls += 1
        result: ToolExecutionResult = await self.ctx.tools.execute(
            ToolExecutionInput(
                call_id=f"c{self._calls}",
                name=name,
                arguments=arguments,
                signal=AbortController().signal if signal is None else signal,
            )
        )
        return result

    async def ok(self, name: str, **arguments: object) -> ToolSuccess:
        result = await self.run(name, arguments)
        assert isinstance(result, ToolSuccess), result
        return result

    async def fail(self, name: str, **arguments: object) -> ToolFailure:
        result = await self.run(name, arguments)
        assert isinstance(result, ToolFailure), result
        return result


def field_of(result: ToolSuccess, key: str) -> JsonValue:
    value = result.value
    assert isinstance(value, dict)
    return value[key]


def text_of(result: ToolExecutionResult) -> str:
    (block,) = result.content
    text = block["text"]
    assert isinstance(text, str)
    return text


async def mount(root: Path, **config: object) -> Harness:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(fs_plugin, {"root": str(root), **config})
    return Harness(ctx, root)


@pytest.fixture
async def fs(tmp_path: Path) -> AsyncIterator[Harness]:
    harness = await mount(tmp_path)
    yield harness
    await harness.ctx.dispose()
