"""Writes and edits happen beneath the writable root, through directory descriptors, never
through a link (issue 32 item 2): a directory swapped for a link after the path was resolved
fails the write (with `openat2` and with the per-component walk), a file swapped for a link
fails the edit, and neither touches anything outside; a link inside the workspace that the
resolution followed still works; with `confine: false` a path outside every writable root is
the sandbox's refusal, carrying the question to ask."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether.core.signals import AbortController
from tether.kernel import Context
from tether.plugins.fs import beneath
from tether.plugins.fs.errors import FsError
from tether.plugins.fs.local import LocalFileSystem
from tether.plugins.fs.seam import FsTarget

from .conftest import Harness, mount

SWAPPED = (
    "a directory on its path is a symbolic link (the file tools never write through one; it"
    " may have been swapped in meanwhile); nothing was written"
)


@pytest.fixture(params=["openat2", "walk"])
def mechanism(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "walk":
        monkeypatch.setattr(beneath, "_openat2_usable", False)
    return str(request.param)


async def local_fs(root: Path, **config: object) -> tuple[Context, LocalFileSystem]:
    ctx = Context()
    await ctx.plugin(LocalFileSystem, {"root": str(root), **config})
    fs = ctx.get("fs")
    assert isinstance(fs, LocalFileSystem)
    return ctx, fs


def temp_files(*roots: Path) -> list[Path]:
    return [p for root in roots for p in root.rglob("*") if p.name.endswith(".tether-tmp")]


async def test_a_directory_swapped_for_a_link_after_resolving_fails_the_write(
    tmp_path: Path, mechanism: str
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (workspace / "d").mkdir(parents=True)
    outside.mkdir()
    ctx, fs = await local_fs(workspace)
    signal = AbortController().signal
    target = await fs.resolve("d/a.txt", signal=signal)
    (workspace / "d").rename(workspace / "real")
    (workspace / "d").symlink_to(outside)

    with pytest.raises(FsError) as caught:
        await fs.write_text(target, "payload\n", signal=signal)

    assert (caught.value.code, caught.value.message) == (
        "FS_SANDBOX_DENIED",
        f'cannot write "{workspace / "d" / "a.txt"}": {SWAPPED}',
    )
    assert list(outside.iterdir()) == []
    assert temp_files(workspace, outside) == []
    await ctx.dispose()


async def test_a_file_swapped_for_a_link_after_resolving_is_not_edited(
    tmp_path: Path, mechanism: str
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text("keep\n")
    (workspace / "a.txt").write_text("keep\n")
    ctx, fs = await local_fs(workspace)
    signal = AbortController().signal
    target = await fs.resolve("a.txt", signal=signal)
    (workspace / "a.txt").unlink()
    (workspace / "a.txt").symlink_to(secret)

    with pytest.raises(FsError) as caught:
        await fs.edit_text(target, old_string="keep", new_string="gone", signal=signal)

    assert (caught.value.code, caught.value.message) == (
        "FS_NOT_REGULAR_FILE",
        f'cannot edit "{workspace / "a.txt"}": not a regular file',
    )
    assert secret.read_text() == "keep\n"
    await ctx.dispose()


async def test_a_link_inside_the_workspace_is_written_at_its_target(
    fs: Harness, mechanism: str
) -> None:
    (fs.root / "real").mkdir()
    (fs.root / "link").symlink_to("real")

    await fs.ok("write", file_path="link/a.txt", content="hi\n")

    assert (fs.root / "real" / "a.txt").read_text() == "hi\n"
    assert (fs.root / "link").is_symlink()


async def test_unconfined_a_write_outside_every_writable_root_is_the_sandboxs_refusal(
    tmp_path: Path,
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    ctx, fs = await local_fs(workspace, confine=False)
    signal = AbortController().signal
    target = await fs.resolve(str(outside / "a.txt"), signal=signal)

    with pytest.raises(FsError) as caught:
        await fs.write_text(target, "x\n", signal=signal)

    why = f"it is outside the sandbox's writable roots ({workspace})"
    assert (caught.value.code, caught.value.message, caught.value.escalation) == (
        "FS_SANDBOX_DENIED",
        f'cannot write "{outside / "a.txt"}": {why}',
        f'write "{outside / "a.txt"}": {why}',
    )
    assert list(outside.iterdir()) == []
    await ctx.dispose()


async def test_an_escalated_write_outside_is_made_beneath_the_filesystem_root(
    tmp_path: Path, mechanism: str
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    ctx, fs = await local_fs(workspace, confine=False)
    signal = AbortController().signal
    target = await fs.resolve(str(outside / "new" / "a.txt"), signal=signal)

    done = await fs.write_text(target, "x\n", escalated=True, signal=signal)

    assert done.operation == "create"
    assert (outside / "new" / "a.txt").read_text() == "x\n"
    await ctx.dispose()


async def test_the_fs_sandbox_config_wins_over_the_default(tmp_path: Path) -> None:
    harness = await mount(tmp_path, sandbox="read-only")

    failure = await harness.fail("write", file_path="a.txt", content="x\n")

    assert failure.code == "FS_SANDBOX_DENIED"
    assert not (tmp_path / "a.txt").exists()
    assert os.listdir(tmp_path) == []
    await harness.ctx.dispose()


STAT_SWAPPED = (
    "a symbolic link is on its path (the file tools never follow one once the path is"
    " resolved; it may have been swapped in meanwhile); nothing was done"
)


async def stat_refusal(fs: LocalFileSystem, target: FsTarget) -> tuple[str, str]:
    """The code and message of the FsError `fs.stat(target)` raises."""
    with pytest.raises(FsError) as caught:
        await fs.stat(target, signal=AbortController().signal)
    return caught.value.code, caught.value.message


async def test_a_directory_swapped_for_a_link_after_resolving_is_not_looked_at_outside(
    tmp_path: Path, mechanism: str
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (workspace / "d").mkdir(parents=True)
    (outside / "secret").mkdir(parents=True)
    ctx, fs = await local_fs(workspace)
    signal = AbortController().signal
    target = await fs.resolve("d/secret", signal=signal)
    (workspace / "d").rename(workspace / "real")
    (workspace / "d").symlink_to(outside)

    assert await stat_refusal(fs, target) == (
        "FS_SANDBOX_DENIED",
        f'cannot access "{workspace / "d" / "secret"}": {STAT_SWAPPED}',
    )
    await ctx.dispose()


async def test_a_file_swapped_for_a_link_after_resolving_is_not_looked_at_outside(
    tmp_path: Path, mechanism: str
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    (workspace / "secret").write_text("inside\n")
    (outside / "secret").mkdir(parents=True)
    ctx, fs = await local_fs(workspace)
    signal = AbortController().signal
    target = await fs.resolve("secret", signal=signal)
    (workspace / "secret").unlink()
    (workspace / "secret").symlink_to(outside / "secret")

    assert await stat_refusal(fs, target) == (
        "FS_SANDBOX_DENIED",
        f'cannot access "{workspace / "secret"}": {STAT_SWAPPED}',
    )
    await ctx.dispose()


async def test_a_path_below_a_regular_file_is_stat_as_nothing(
    tmp_path: Path, mechanism: str
) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    ctx, fs = await local_fs(tmp_path)
    signal = AbortController().signal

    assert await fs.stat(await fs.resolve("notes.txt/x", signal=signal), signal=signal) is None
    assert await fs.stat(await fs.resolve("gone/x", signal=signal), signal=signal) is None
    await ctx.dispose()
