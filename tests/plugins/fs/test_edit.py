"""`edit` replaces literal text in a file the caller has read at its current version: exactly
one match unless `replace_all`, CRLF files stay CRLF, and every refusal carries the spec's text
(not observed, stale, not found, ambiguous) with the model-facing remediation where one helps."""

from __future__ import annotations

from pathlib import Path

from .conftest import Harness, mount, text_of


async def test_edit_without_a_prior_read_is_refused(fs: Harness) -> None:
    path = fs.root / "a.txt"
    path.write_text("alpha\n")
    failure = await fs.fail("edit", file_path="a.txt", old_string="alpha", new_string="beta")
    assert (
        failure.error.message == f'edit requires reading "{path}" first — read the file, then retry'
    )
    assert failure.code == "FS_NOT_OBSERVED"
    assert path.read_text() == "alpha\n"


async def test_edit_after_a_read_replaces_the_one_match(fs: Harness) -> None:
    path = fs.root / "a.txt"
    path.write_text("alpha\nbeta\ngamma\n")
    await fs.ok("read", file_path="a.txt")
    result = await fs.ok("edit", file_path="a.txt", old_string="beta", new_string="BETA")
    assert text_of(result) == f"The file {path} has been updated successfully."
    assert path.read_text() == "alpha\nBETA\ngamma\n"
    assert result.value == {
        "path": str(path),
        "before": "alpha\nbeta\ngamma\n",
        "after": "alpha\nBETA\ngamma\n",
    }
    assert result.meta == {
        "diffs": [
            {
                "path": str(path),
                "old_text": "alpha\nbeta\ngamma\n",
                "new_text": "alpha\nBETA\ngamma\n",
            }
        ]
    }


async def test_a_non_unique_match_is_ambiguous(fs: Harness) -> None:
    path = fs.root / "a.txt"
    path.write_text("x = 1\nx = 1\n")
    await fs.ok("read", file_path="a.txt")
    failure = await fs.fail("edit", file_path="a.txt", old_string="x = 1", new_string="x = 2")
    assert failure.error.message == (
        f'old_string matched 2 times in "{path}"; provide a more specific old_string or set'
        " replace_all to true"
    )
    assert failure.code == "FS_AMBIGUOUS_EDIT"
    assert path.read_text() == "x = 1\nx = 1\n"


async def test_replace_all_replaces_every_match(fs: Harness) -> None:
    path = fs.root / "a.txt"
    path.write_text("x = 1\nx = 1\n")
    await fs.ok("read", file_path="a.txt")
    result = await fs.ok(
        "edit", file_path="a.txt", old_string="x = 1", new_string="x = 2", replace_all=True
    )
    assert (
        text_of(result)
        == f"The file {path} has been updated. All occurrences were successfully replaced."
    )
    assert path.read_text() == "x = 2\nx = 2\n"


async def test_a_missing_old_string_is_not_found(fs: Harness) -> None:
    path = fs.root / "a.txt"
    path.write_text("alpha\n")
    await fs.ok("read", file_path="a.txt")
    failure = await fs.fail("edit", file_path="a.txt", old_string="omega", new_string="x")
    assert failure.error.message == f'old_string was not found in "{path}"'
    assert failure.code == "FS_EDIT_NOT_FOUND"


async def test_edit_after_the_file_changed_on_disk_is_stale(fs: Harness) -> None:
    path = fs.root / "a.txt"
    path.write_text("alpha\n")
    await fs.ok("read", file_path="a.txt")
    path.write_text("alpha and more\n")
    failure = await fs.fail("edit", file_path="a.txt", old_string="alpha", new_string="beta")
    assert failure.error.message == (
        f'cannot edit "{path}": file changed since it was read — re-read the file, then retry'
    )
    assert failure.code == "FS_STALE_VERSION"
    assert path.read_text() == "alpha and more\n"


async def test_editing_a_file_read_as_missing_is_not_found(fs: Harness) -> None:
    await fs.fail("read", file_path="ghost.txt")
    failure = await fs.fail("edit", file_path="ghost.txt", old_string="a", new_string="b")
    assert failure.error.message == f'cannot edit "{fs.root / "ghost.txt"}": not found'
    assert failure.code == "FS_NOT_FOUND"


async def test_a_windowed_read_authorises_an_edit(fs: Harness) -> None:
    path = fs.root / "a.txt"
    path.write_text("".join(f"{n}\n" for n in range(100)))
    await fs.ok("read", file_path="a.txt", offset=50, limit=1)
    await fs.ok("edit", file_path="a.txt", old_string="\n7\n", new_string="\nseven\n")
    assert "\nseven\n" in path.read_text()


async def test_write_then_edit_needs_no_read_in_between(fs: Harness) -> None:
    await fs.ok("write", file_path="a.txt", content="one\n")
    await fs.ok("edit", file_path="a.txt", old_string="one", new_string="two")
    await fs.ok("edit", file_path="a.txt", old_string="two", new_string="three")
    assert (fs.root / "a.txt").read_text() == "three\n"


async def test_crlf_files_match_lf_strings_and_stay_crlf(fs: Harness) -> None:
    path = fs.root / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await fs.ok("read", file_path="win.txt")
    await fs.ok("edit", file_path="win.txt", old_string="one\ntwo", new_string="1\n2")
    assert path.read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_editing_a_binary_file_is_not_text(tmp_path: Path) -> None:
    harness = await mount(tmp_path, observation_policy=False)  # binary files cannot be read
    path = tmp_path / "b.bin"
    path.write_bytes(b"\x00\x01abc")
    failure = await harness.fail("edit", file_path="b.bin", old_string="abc", new_string="d")
    assert failure.error.message == f'cannot edit "{path}": binary file'
    assert failure.code == "FS_NOT_TEXT"
    await harness.ctx.dispose()


async def test_equal_or_empty_strings_are_invalid_arguments(fs: Harness) -> None:
    same = await fs.fail("edit", file_path="a.txt", old_string="x", new_string="x")
    assert (
        same.error.message == "invalid arguments: new_string: old_string and new_string must differ"
    )
    empty = await fs.fail("edit", file_path="a.txt", old_string="", new_string="x")
    assert (
        empty.error.message
        == "invalid arguments: old_string: old_string must be a non-empty string"
    )


async def test_edit_keeps_the_file_mode(tmp_path: Path) -> None:
    harness = await mount(tmp_path)
    path = tmp_path / "s.sh"
    path.write_text("echo a\n")
    path.chmod(0o700)
    await harness.ok("read", file_path="s.sh")
    await harness.ok("edit", file_path="s.sh", old_string="a", new_string="b")
    assert path.stat().st_mode & 0o777 == 0o700
    await harness.ctx.dispose()
