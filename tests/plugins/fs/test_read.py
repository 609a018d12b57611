"""`read` returns a line-numbered window of a UTF-8 file in the exact spec envelope; missing,
binary, non-text and out-of-workspace paths fail with coded `FsError`s; offset/limit select the
window and the footer says how to continue; lines and bytes are capped."""

from __future__ import annotations

import os
from pathlib import Path

from tether.core.signals import AbortController
from tether.tools import ToolExecutionInput, ToolFailure

from .conftest import Harness, field_of, mount, text_of


async def test_read_returns_the_exact_envelope(fs: Harness) -> None:
    path = fs.root / "a.txt"
    path.write_text("hello\nworld")
    result = await fs.ok("read", file_path=str(path))
    assert text_of(result) == (
        f"<path>{path}</path>\n<type>file</type>\n<content>\n1: hello\n2: world\n\n"
        "(End of file - total 2 lines)\n</content>"
    )
    assert result.value == {
        "path": str(path),
        "offset": 1,
        "lines": [{"number": 1, "text": "hello"}, {"number": 2, "text": "world"}],
        "total_lines": 2,
    }


async def test_a_relative_path_resolves_against_the_workspace_root(fs: Harness) -> None:
    (fs.root / "sub").mkdir()
    (fs.root / "sub" / "b.py").write_text("x = 1\n")
    result = await fs.ok("read", file_path="sub/b.py")
    assert field_of(result, "path") == str(fs.root / "sub" / "b.py")
    assert result.meta == {
        "path": str(fs.root / "sub" / "b.py"),
        "offset": 1,
        "lines": [{"number": 1, "text": "x = 1"}],
        "total_lines": 1,
        "lang": "py",
    }


async def test_a_missing_file_is_fs_not_found(fs: Harness) -> None:
    failure = await fs.fail("read", file_path="nope.txt")
    assert failure.error.message == f'cannot read "{fs.root / "nope.txt"}": not found'
    assert failure.code == "FS_NOT_FOUND"
    assert failure.error.info is not None
    assert failure.error.info.name == "FsError"
    assert text_of(failure) == f"Error: {failure.error.message}"


async def test_a_binary_file_is_fs_not_text(fs: Harness) -> None:
    (fs.root / "blob.bin").write_bytes(b"abc\x00def")
    failure = await fs.fail("read", file_path="blob.bin")
    assert failure.error.message == f'cannot read "{fs.root / "blob.bin"}": binary file'
    assert failure.code == "FS_NOT_TEXT"


async def test_invalid_utf8_is_fs_not_text(fs: Harness) -> None:
    (fs.root / "latin1.txt").write_bytes(b"caf\xe9\n")
    failure = await fs.fail("read", file_path="latin1.txt")
    assert failure.error.message == f'cannot read "{fs.root / "latin1.txt"}": invalid UTF-8 text'
    assert failure.code == "FS_NOT_TEXT"


async def test_a_directory_is_not_a_regular_file(fs: Harness) -> None:
    (fs.root / "d").mkdir()
    failure = await fs.fail("read", file_path="d")
    assert failure.error.message == f'cannot read "{fs.root / "d"}": not a regular file'
    assert failure.code == "FS_NOT_REGULAR_FILE"


async def test_a_fifo_is_not_a_regular_file_and_the_read_does_not_wait_for_a_writer(
    fs: Harness,
) -> None:
    os.mkfifo(fs.root / "pipe")
    failure = await fs.fail("read", file_path="pipe")
    assert failure.error.message == f'cannot read "{fs.root / "pipe"}": not a regular file'
    assert failure.code == "FS_NOT_REGULAR_FILE"


async def test_a_symlink_inside_the_workspace_is_read_through_its_real_path(fs: Harness) -> None:
    (fs.root / "real.txt").write_text("through the link\n")
    (fs.root / "link.txt").symlink_to(fs.root / "real.txt")
    result = await fs.ok("read", file_path="link.txt")
    assert result.value["lines"] == [{"number": 1, "text": "through the link"}]


async def test_offset_and_limit_select_a_window_and_say_how_to_continue(fs: Harness) -> None:
    (fs.root / "ten.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    result = await fs.ok("read", file_path="ten.txt", offset=3, limit=2)
    assert text_of(result) == (
        f"<path>{fs.root / 'ten.txt'}</path>\n<type>file</type>\n<content>\n"
        "3: line 3\n4: line 4\n\n(Showing lines 3-4 of 10. Use offset=5 to continue.)\n</content>"
    )


async def test_a_window_reaching_the_end_says_end_of_file(fs: Harness) -> None:
    (fs.root / "ten.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    result = await fs.ok("read", file_path="ten.txt", offset=9, limit=5)
    assert text_of(result).endswith(
        "9: line 9\n10: line 10\n\n(End of file - total 10 lines)\n</content>"
    )


async def test_an_offset_past_the_end_is_out_of_range(fs: Harness) -> None:
    (fs.root / "ten.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    failure = await fs.fail("read", file_path="ten.txt", offset=12)
    assert (
        failure.error.message == f'offset 12 is out of range for "{fs.root / "ten.txt"}" (10 lines)'
    )
    assert failure.code == "FS_NOT_FOUND"


async def test_an_empty_file_read_from_line_one_shows_only_the_footer(fs: Harness) -> None:
    (fs.root / "empty.txt").write_text("")
    result = await fs.ok("read", file_path="empty.txt")
    assert text_of(result) == (
        f"<path>{fs.root / 'empty.txt'}</path>\n<type>file</type>\n<content>\n"
        "(End of file - total 0 lines)\n</content>"
    )


async def test_offset_and_limit_must_be_positive_and_limit_at_most_the_read_limit(
    fs: Harness,
) -> None:
    (fs.root / "a.txt").write_text("a\n")
    zero = await fs.fail("read", file_path="a.txt", offset=0)
    assert zero.error.message == "invalid arguments: offset: offset must be a positive integer"
    big = await fs.fail("read", file_path="a.txt", limit=2001)
    assert big.error.message == "invalid arguments: limit: limit must be less than or equal to 2000"
    blank = await fs.fail("read", file_path="  ")
    assert (
        blank.error.message == "invalid arguments: file_path: file_path must be a non-empty string"
    )
    assert {zero.code, big.code, blank.code} == {"INVALID_ARGS"}


async def test_long_lines_are_cut_with_a_notice(tmp_path: Path) -> None:
    harness = await mount(tmp_path, read_max_line_length=5)
    (tmp_path / "long.txt").write_text("abcdefghij\nshort\n")
    result = await harness.ok("read", file_path="long.txt")
    assert "1: abcde... (line truncated to 5 chars)\n2: short\n" in text_of(result)
    await harness.ctx.dispose()


async def test_the_byte_cap_stops_the_window_and_says_output_capped(tmp_path: Path) -> None:
    harness = await mount(tmp_path, read_max_bytes=12)
    (tmp_path / "a.txt").write_text("aaaa\nbbbb\ncccc\ndddd\n")  # 4 + 5 bytes fit, 14 do not
    result = await harness.ok("read", file_path="a.txt")
    assert text_of(result).endswith(
        "1: aaaa\n2: bbbb\n\n"
        "(Output capped. Showing lines 1-2. Use offset=3 to continue.)\n</content>"
    )
    assert field_of(result, "total_lines") == 4
    await harness.ctx.dispose()


async def test_streamed_reads_match_whole_reads_and_drop_carriage_returns(tmp_path: Path) -> None:
    content = "".join(f"row {n}\r\n" for n in range(1, 3001))
    (tmp_path / "big.txt").write_text(content, newline="")
    whole = await mount(tmp_path)
    streamed = await mount(tmp_path / ".", read_stream_min_size=1)
    a = await whole.ok("read", file_path="big.txt", offset=2990, limit=20)
    b = await streamed.ok("read", file_path="big.txt", offset=2990, limit=20)
    assert a.content == b.content
    assert "2990: row 2990\n" in text_of(a)
    assert text_of(a).endswith("(End of file - total 3000 lines)\n</content>")
    await whole.ctx.dispose()
    await streamed.ctx.dispose()


async def test_a_path_outside_the_workspace_is_refused_when_confined(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "secret.txt").write_text("s\n")
    harness = await mount(work)
    failure = await harness.fail("read", file_path="../secret.txt")
    assert failure.error.message == (
        f'cannot access "{tmp_path / "secret.txt"}": it is outside the workspace "{work}"'
    )
    assert failure.code == "FS_SANDBOX_DENIED"
    await harness.ctx.dispose()


async def test_a_symlink_leading_out_of_the_workspace_is_refused_when_confined(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "secret.txt").write_text("s\n")
    os.symlink(tmp_path / "secret.txt", work / "link.txt")
    harness = await mount(work)
    failure = await harness.fail("read", file_path="link.txt")
    assert isinstance(failure, ToolFailure)
    assert failure.code == "FS_SANDBOX_DENIED"
    await harness.ctx.dispose()


async def test_without_confinement_outside_paths_are_readable(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "other.txt").write_text("o\n")
    harness = await mount(work, confine=False)
    result = await harness.ok("read", file_path=str(tmp_path / "other.txt"))
    assert "1: o\n" in text_of(result)
    await harness.ctx.dispose()


async def test_read_is_concurrency_safe_and_write_and_edit_are_exclusive(fs: Harness) -> None:
    def mode_of(name: str) -> str:
        mode: str = fs.ctx.tools.execution_mode(
            ToolExecutionInput(
                call_id="x",
                name=name,
                arguments={"file_path": "a"},
                signal=AbortController().signal,
            )
        )
        return mode

    assert [mode_of(name) for name in ("read", "write", "edit")] == [
        "parallel",
        "exclusive",
        "exclusive",
    ]
    assert [fs.ctx.tools.get(name).timeout_ms for name in ("read", "write", "edit")] == [None] * 3
