"""Backend choice and cancellation: `auto` falls back to Python without `rg` on PATH; a grep
that outlives its declared `timeout_ms` ends as `TOOL_TIMEOUT` (the timeout policy's verdict)
with its `rg` process gone; a caller abort ends as `ABORTED`, also with `rg` gone; the Python
walker stops between files once the signal has aborted."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import psutil
import pytest

from tether.core.signals import AbortController
from tether.kernel import Context
from tether.plugins.search import fallback
from tether.plugins.search import tools as search_tools
from tether.plugins.search.patterns import GlobFilter
from tether.plugins.search.query import GrepQuery
from tether.plugins.shell import plugin as shell_plugin
from tether.tools import ToolFailure, ToolRuntime

from .conftest import mount, touch


def rg_children() -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.name() == "rg" and child.status() != psutil.STATUS_ZOMBIE:
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


async def until_rg_runs() -> None:
    for _ in range(500):
        if rg_children():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("rg never started")


async def test_a_grep_past_its_timeout_is_tool_timeout_and_rg_is_gone(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")  # rg blocks opening a FIFO nobody writes: it never finishes
    harness = await mount(tmp_path, backend="rg", timeout_ms=300)
    call = asyncio.create_task(harness.call("grep", pattern="x", path="pipe"))
    await until_rg_runs()
    result = await call
    assert isinstance(result, ToolFailure)
    assert result.code == "TOOL_TIMEOUT"
    assert result.error.message == "tool call timed out after 300ms"
    assert rg_children() == []
    await harness.ctx.dispose()


async def test_a_caller_abort_mid_search_is_aborted_and_rg_is_gone(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    harness = await mount(tmp_path, backend="rg")
    controller = AbortController()
    call = asyncio.create_task(
        harness.call("grep", signal=controller.signal, pattern="x", path="pipe")
    )
    await until_rg_runs()
    controller.abort()
    result = await call
    assert isinstance(result, ToolFailure)
    assert result.code == "ABORTED"
    assert rg_children() == []
    await harness.ctx.dispose()


async def test_auto_uses_python_when_rg_is_not_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    work = tmp_path / "w"
    hit = touch(work / "a.txt", "needle\n")
    harness = await mount(work, backend="auto")
    assert await harness.text("grep", pattern="needle") == f"Found 1 file\n{hit}"
    await harness.ctx.dispose()


async def test_the_rg_backend_without_rg_on_path_fails_to_mount(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(shell_plugin)
    with pytest.raises(ValueError, match='search-tools: backend "rg" needs ripgrep'):
        await ctx.plugin(search_tools, {"backend": "rg"})
    await ctx.dispose()


def test_the_python_walker_stops_between_files_once_the_signal_aborts(tmp_path: Path) -> None:
    for n in range(5):
        touch(tmp_path / f"f{n}.txt", "needle\n")
    controller = AbortController()
    seen: list[str] = []

    class AbortAfterTwo(GlobFilter):
        def admits(self, relative: str) -> bool:
            seen.append(relative)
            if len(seen) == 2:
                controller.abort()
            return True

    walk = fallback.walk_files(str(tmp_path), [AbortAfterTwo([])], controller.signal)
    assert Path(next(walk)).name == "f0.txt"
    assert Path(next(walk)).name == "f1.txt"
    with pytest.raises(fallback.SearchStopped):
        next(walk)
    assert seen == ["f0.txt", "f1.txt"]


async def test_a_python_grep_over_a_large_tree_past_its_timeout_is_tool_timeout(
    tmp_path: Path,
) -> None:
    for d in range(40):
        folder = tmp_path / f"d{d}"
        folder.mkdir()
        for n in range(50):
            (folder / f"f{n}.txt").write_text("hay\n" * 20)
    harness = await mount(tmp_path, backend="python", timeout_ms=1)
    result = await harness.call("grep", pattern="needle")
    assert isinstance(result, ToolFailure)
    assert result.code == "TOOL_TIMEOUT"
    assert result.error.message == "tool call timed out after 1ms"
    await harness.ctx.dispose()


def test_the_python_grep_reads_nothing_once_aborted(tmp_path: Path) -> None:
    touch(tmp_path / "a.txt", "needle\n")
    controller = AbortController()
    controller.abort()
    with pytest.raises(fallback.SearchStopped):
        fallback.grep_tree(GrepQuery(pattern="needle", root=str(tmp_path)), controller.signal)
