"""Directories the user added (`--add-dir`, `permissions.additionalDirectories`, `/add-dir`):
the file tools reach them as they reach the workspace.

Contract: with the directory in `directories` and among the sandbox's writable roots, a file
there is read, written and edited (real files); a protected path inside it (`.git/…`,
`.claude/…`) is refused FS_SANDBOX_DENIED and left as it was; a write outside the workspace and
every added directory is still refused; a directory that is added but not a writable root of the
sandbox (a sandbox configured without it, `read-only`) is read and never written;
`add_directory` adds one later and refuses a path that is not a directory.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tether.plugins.fs.errors import FsError
from tether.plugins.fs.local import LocalFileSystem

from .conftest import Harness, mount, text_of


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    path = tmp_path / "shared"
    path.mkdir()
    (path / "note.txt").write_text("shared\n")
    return path


@pytest.fixture
async def fs(tmp_path: Path, shared: Path) -> AsyncIterator[Harness]:
    work = tmp_path / "work"
    work.mkdir()
    harness = await mount(
        work,
        directories=[str(shared)],
        sandbox={"mode": "workspace-write", "writable_roots": [str(shared)]},
    )
    yield harness
    await harness.ctx.dispose()


async def test_a_file_in_an_added_directory_is_read(fs: Harness, shared: Path) -> None:
    result = await fs.ok("read", file_path=str(shared / "note.txt"))

    assert "1: shared" in text_of(result)


async def test_a_new_file_in_an_added_directory_is_written(fs: Harness, shared: Path) -> None:
    await fs.ok("write", file_path=str(shared / "new.txt"), content="new\n")

    assert (shared / "new.txt").read_text() == "new\n"


async def test_a_file_in_an_added_directory_is_edited_after_a_read(
    fs: Harness, shared: Path
) -> None:
    await fs.ok("read", file_path=str(shared / "note.txt"))

    await fs.ok("edit", file_path=str(shared / "note.txt"), old_string="shared", new_string="x")

    assert (shared / "note.txt").read_text() == "x\n"


async def test_a_protected_path_inside_an_added_directory_is_refused(
    fs: Harness, shared: Path
) -> None:
    (shared / ".git").mkdir()
    (shared / ".git" / "config").write_text("[core]\n")
    target = shared / ".claude" / "settings.json"

    config = await fs.fail("write", file_path=str(shared / ".git" / "config"), content="x")
    settings = await fs.fail("write", file_path=str(target), content="{}")

    assert (config.code, settings.code) == ("FS_SANDBOX_DENIED", "FS_SANDBOX_DENIED")
    assert "is protected by the sandbox" in config.error.message
    assert (shared / ".git" / "config").read_text() == "[core]\n"
    assert not target.exists()


async def test_a_write_outside_the_workspace_and_the_added_directories_is_refused(
    fs: Harness, tmp_path: Path
) -> None:
    target = tmp_path / "elsewhere.txt"

    failure = await fs.fail("write", file_path=str(target), content="x\n")

    assert failure.code == "FS_SANDBOX_DENIED"
    assert not target.exists()


async def test_an_added_directory_the_sandbox_does_not_make_writable_is_only_read(
    tmp_path: Path, shared: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    harness = await mount(work, directories=[str(shared)], sandbox="read-only")
    try:
        read = await harness.ok("read", file_path=str(shared / "note.txt"))
        failure = await harness.fail("write", file_path=str(shared / "new.txt"), content="x")
    finally:
        await harness.ctx.dispose()

    assert "1: shared" in text_of(read)
    assert failure.code == "FS_SANDBOX_DENIED"
    assert not (shared / "new.txt").exists()


async def test_a_directory_added_later_is_written_once_the_sandbox_holds_it_too(
    tmp_path: Path, shared: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    harness = await mount(work)
    try:
        refused = await harness.fail("read", file_path=str(shared / "note.txt"))
        seam = harness.ctx.get("fs")
        assert isinstance(seam, LocalFileSystem)
        assert seam.add_directory("../shared") == str(shared.resolve())
        read = await harness.ok("read", file_path=str(shared / "note.txt"))
        unwritable = await harness.fail("write", file_path=str(shared / "a.txt"), content="x")
    finally:
        await harness.ctx.dispose()

    assert refused.code == "FS_SANDBOX_DENIED"
    assert "1: shared" in text_of(read)
    assert unwritable.code == "FS_SANDBOX_DENIED"  # no shell: the default sandbox lacks it
    assert not (shared / "a.txt").exists()


async def test_adding_a_path_that_is_not_a_directory_is_refused(tmp_path: Path) -> None:
    harness = await mount(tmp_path)
    try:
        seam = harness.ctx.get("fs")
        assert isinstance(seam, LocalFileSystem)
        with pytest.raises(FsError, match='"missing" is not a directory'):
            seam.add_directory("missing")
    finally:
        await harness.ctx.dispose()
