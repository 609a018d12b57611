"""Readable directories outside a confined workspace (`readable`; the agent boot lists
`$TETHER_HOME/sessions`, where the spill policy keeps big results and tells the model to `read`
them).

Contract: a file whose real location is under a readable directory may be read with an
absolute path although it is outside the workspace; writing or editing it is FS_SANDBOX_DENIED
(`cannot <verb> "<path>": it is outside the workspace and may only be read`) and leaves it as it
was — also after a read; a symlink in a readable directory that leads elsewhere outside, and a
sibling directory whose name merely starts the same, stay refused.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from .conftest import Harness, mount, text_of


@pytest.fixture
def spilled(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "sessions" / "s1" / "spill" / "c1.txt"
    path.parent.mkdir(parents=True)
    path.write_text("one\ntwo\nthree\n")
    return path


@pytest.fixture
async def fs(tmp_path: Path) -> AsyncIterator[Harness]:
    work = tmp_path / "work"
    work.mkdir()
    harness = await mount(work, readable=[str(tmp_path / "home" / "sessions")])
    yield harness
    await harness.ctx.dispose()


async def test_a_file_under_a_readable_directory_is_read(fs: Harness, spilled: Path) -> None:
    result = await fs.ok("read", file_path=str(spilled), offset=2, limit=1)

    assert "2: two\n" in text_of(result)
    assert "1: one" not in text_of(result)


async def test_writing_it_is_refused_and_leaves_it_as_it_was(fs: Harness, spilled: Path) -> None:
    await fs.ok("read", file_path=str(spilled))

    failure = await fs.fail("write", file_path=str(spilled), content="gone\n")

    assert failure.code == "FS_SANDBOX_DENIED"
    assert failure.error.message == (
        f'cannot write "{spilled}": it is outside the workspace and may only be read'
    )
    assert spilled.read_text() == "one\ntwo\nthree\n"


async def test_editing_it_is_refused_and_leaves_it_as_it_was(fs: Harness, spilled: Path) -> None:
    await fs.ok("read", file_path=str(spilled))

    failure = await fs.fail("edit", file_path=str(spilled), old_string="two", new_string="2")

    assert failure.code == "FS_SANDBOX_DENIED"
    assert failure.error.message == (
        f'cannot edit "{spilled}": it is outside the workspace and may only be read'
    )
    assert spilled.read_text() == "one\ntwo\nthree\n"


async def test_a_new_file_there_is_not_created(fs: Harness, spilled: Path) -> None:
    target = spilled.parent / "new.txt"

    failure = await fs.fail("write", file_path=str(target), content="x\n")

    assert failure.code == "FS_SANDBOX_DENIED"
    assert not target.exists()


async def test_a_symlink_there_that_leads_elsewhere_outside_is_refused(
    fs: Harness, spilled: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s\n")
    link = spilled.parent / "link.txt"
    link.symlink_to(secret)

    failure = await fs.fail("read", file_path=str(link))

    assert failure.code == "FS_SANDBOX_DENIED"
    assert failure.error.message == (
        f'cannot access "{link}": it is outside the workspace "{fs.root}"'
    )


async def test_a_sibling_whose_name_starts_the_same_is_refused(fs: Harness, tmp_path: Path) -> None:
    other = tmp_path / "home" / "sessions-other" / "c1.txt"
    other.parent.mkdir(parents=True)
    other.write_text("x\n")

    failure = await fs.fail("read", file_path=str(other))

    assert failure.code == "FS_SANDBOX_DENIED"
