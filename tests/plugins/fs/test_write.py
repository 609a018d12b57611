"""`write` replaces a file atomically (temp file + rename in the same directory), creating
parents; new files need no read, overwriting needs a read at the unchanged version (the
observation policy), with the spec's remediation texts; an aborted signal writes nothing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tether.core.signals import AbortController
from tether.kernel.events import Next
from tether.plugins.fs.errors import FsError
from tether.plugins.fs.local import LocalFileSystem
from tether.plugins.fs.seam import WRITE_INTENT, FsTarget, WriteIntent
from tether.tools import ToolFailure

from .conftest import Harness, field_of, mount, text_of


async def test_writing_into_a_new_directory_creates_it_and_the_file(fs: Harness) -> None:
    path = fs.root / "new" / "deeper" / "a.txt"
    result = await fs.ok("write", file_path="new/deeper/a.txt", content="hi\n")
    assert (
        text_of(result)
        == f"<path>{path}</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
    )
    assert path.read_text() == "hi\n"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    assert result.value == {
        "path": str(path),
        "operation": "create",
        "before": None,
        "after": "hi\n",
    }
    assert result.meta == {"diffs": []}


async def test_overwriting_an_unread_file_is_refused(fs: Harness) -> None:
    path = fs.root / "a.txt"
    path.write_text("old\n")
    failure = await fs.fail("write", file_path="a.txt", content="new\n")
    assert failure.error.message == (
        f'cannot overwrite existing "{path}" without reading it first — read the file, then retry'
    )
    assert failure.code == "FS_NOT_OBSERVED"
    assert path.read_text() == "old\n"


async def test_overwriting_after_a_read_updates_and_keeps_the_mode(fs: Harness) -> None:
    path = fs.root / "run.sh"
    path.write_text("echo 1\necho 2\n")
    path.chmod(0o751)
    await fs.ok("read", file_path="run.sh")
    result = await fs.ok("write", file_path="run.sh", content="echo 1\necho 3\n")
    assert (
        text_of(result)
        == f"<path>{path}</path>\n<type>file</type>\n<content>\nUpdated file\n</content>"
    )
    assert path.read_text() == "echo 1\necho 3\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert result.meta == {
        "diffs": [
            {"path": str(path), "old_text": "echo 1\necho 2\n", "new_text": "echo 1\necho 3\n"}
        ]
    }
    assert [p.name for p in fs.root.iterdir()] == ["run.sh"]  # no temp file left behind


async def test_overwriting_a_file_changed_on_disk_since_the_read_is_stale(fs: Harness) -> None:
    path = fs.root / "a.txt"
    path.write_text("v1\n")
    await fs.ok("read", file_path="a.txt")
    path.write_text("someone else's v2\n")
    failure = await fs.fail("write", file_path="a.txt", content="mine\n")
    assert failure.error.message == (
        f'cannot write "{path}": file changed since it was read — re-read the file, then retry'
    )
    assert failure.code == "FS_STALE_VERSION"
    assert path.read_text() == "someone else's v2\n"


async def test_overwriting_a_file_deleted_since_the_read_is_stale(fs: Harness) -> None:
    path = fs.root / "a.txt"
    path.write_text("v1\n")
    await fs.ok("read", file_path="a.txt")
    path.unlink()
    failure = await fs.fail("write", file_path="a.txt", content="mine\n")
    assert failure.error.message == (
        f'cannot write "{path}": file no longer exists — re-read the file, then retry'
    )


async def test_a_write_counts_as_an_observation_for_the_next_write(fs: Harness) -> None:
    await fs.ok("write", file_path="a.txt", content="1\n")
    second = await fs.ok("write", file_path="a.txt", content="2\n")
    assert field_of(second, "operation") == "update"
    assert (fs.root / "a.txt").read_text() == "2\n"


async def test_without_the_observation_policy_writes_are_unconditional(tmp_path: Path) -> None:
    harness = await mount(tmp_path, observation_policy=False)
    (tmp_path / "a.txt").write_text("old\n")
    await harness.ok("write", file_path="a.txt", content="new\n")
    assert (tmp_path / "a.txt").read_text() == "new\n"
    await harness.ctx.dispose()


async def test_a_pre_aborted_signal_writes_nothing(fs: Harness) -> None:
    controller = AbortController()
    controller.abort()
    result = await fs.call("write", signal=controller.signal, file_path="new/a.txt", content="x")
    assert isinstance(result, ToolFailure)
    assert result.code == "ABORTED_BEFORE_DISPATCH"
    assert list(fs.root.iterdir()) == []


async def test_a_signal_aborted_while_the_write_runs_leaves_no_file(fs: Harness) -> None:
    controller = AbortController()

    async def abort_now(target: FsTarget, actor: object, next: Next[WriteIntent]) -> WriteIntent:
        controller.abort()
        return await next()

    fs.ctx.on(WRITE_INTENT, abort_now, prepend=True)
    result = await fs.call("write", signal=controller.signal, file_path="new/a.txt", content="x")
    assert isinstance(result, ToolFailure)
    assert result.code == "ABORTED"
    assert list(fs.root.iterdir()) == []


async def test_the_seam_refuses_an_aborted_write_before_any_side_effect(tmp_path: Path) -> None:
    from tether.kernel import Context

    ctx = Context()
    await ctx.plugin(LocalFileSystem, {"root": str(tmp_path)})
    fs = ctx.fs
    controller = AbortController()
    target = await fs.resolve("dir/a.txt", signal=controller.signal)
    controller.abort("stop")
    with pytest.raises(FsError) as caught:
        await fs.write_text(target, "x", signal=controller.signal)
    assert (caught.value.code, caught.value.message) == ("FS_ABORTED", "write aborted")
    assert list(tmp_path.iterdir()) == []
    await ctx.dispose()


async def test_writing_over_a_directory_is_not_a_regular_file(fs: Harness) -> None:
    (fs.root / "d").mkdir()
    failure = await fs.fail("write", file_path="d", content="x")
    assert failure.code == "FS_NOT_REGULAR_FILE"
    assert failure.error.message == f'cannot write "{fs.root / "d"}": not a regular file'


async def test_writing_outside_the_workspace_is_refused_when_confined(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    harness = await mount(work)
    failure = await harness.fail("write", file_path="../escape.txt", content="x")
    assert failure.error.message == (
        f'cannot access "{tmp_path / "escape.txt"}": it is outside the workspace "{work}"'
    )
    assert failure.code == "FS_SANDBOX_DENIED"
    assert not (tmp_path / "escape.txt").exists()
    await harness.ctx.dispose()


async def test_writing_below_a_file_is_not_a_directory(fs: Harness) -> None:
    (fs.root / "plain").write_text("x")
    failure = await fs.fail("write", file_path="plain/a.txt", content="y")
    assert (
        failure.error.message
        == f'cannot write "{fs.root / "plain" / "a.txt"}": a parent is not a directory'
    )
    assert failure.code == "FS_NOT_DIRECTORY"
