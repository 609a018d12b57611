"""Contract of one stream's collection (spec §3.4 "Collection"), without processes.

- The in-memory tail holds exactly the last `max_bytes` bytes, however the bytes were chunked.
- Reads are consuming cursors over whole-stream byte offsets: consecutive reads never repeat
  output; a cursor that fell behind the tail gets the whole tail and `lossy`.
- A read never splits a UTF-8 character that is still arriving; a cut tail drops the partial
  character at its start.
- The spill file is created only on overflow, holds the complete stream, and is given up
  (deleted, no path) past the spill cap. Removing the directory deletes it, unless the
  directory keeps its files (for a reader who outlives the shell).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tether.plugins.shell._collect import CaptureLimits, SpillDirectory, StreamCollector


def collector(
    max_bytes: int, spill: int | None = None, *, keep: bool = False
) -> tuple[StreamCollector, SpillDirectory]:
    spill_dir = SpillDirectory(keep=keep)
    return (
        StreamCollector(CaptureLimits(max_bytes, spill), spill_dir=spill_dir, label="stdout"),
        spill_dir,
    )


@given(st.lists(st.binary(max_size=40), max_size=30), st.integers(1, 64))
def test_the_tail_is_the_exact_last_bytes_whatever_the_chunking(
    chunks: list[bytes], cap: int
) -> None:
    stream, _ = collector(cap)
    for chunk in chunks:
        stream.feed(chunk)
    whole = b"".join(chunks)

    assert bytes(stream._buf) == whole[-cap:]
    assert stream.total == len(whole)
    assert stream.truncated == (len(whole) > cap)


def test_consecutive_reads_never_repeat_output() -> None:
    stream, _ = collector(100)
    stream.feed(b"one\n")
    first = stream.read_from(0)
    stream.feed(b"two\n")
    second = stream.read_from(first.next_offset)
    third = stream.read_from(second.next_offset)

    assert (first.text, second.text, third.text) == ("one\n", "two\n", "")
    assert not (first.lossy)
    assert not (second.lossy)
    assert not (third.lossy)


def test_a_cursor_behind_the_tail_gets_the_whole_tail_and_is_lossy() -> None:
    stream, _ = collector(4)
    stream.feed(b"abcdefgh")
    read = stream.read_from(0)

    assert (read.text, read.next_offset, read.lossy) == ("efgh", 8, True)


def test_a_read_holds_back_a_character_that_is_still_arriving() -> None:
    stream, _ = collector(100)
    euro = "€".encode()
    stream.feed(b"a" + euro[:2])
    first = stream.read_from(0)
    stream.feed(euro[2:])
    second = stream.read_from(first.next_offset)

    assert (first.text, first.next_offset) == ("a", 1)
    assert second.text == "€"


def test_a_sealed_stream_returns_an_incomplete_character_as_a_replacement() -> None:
    stream, _ = collector(100)
    stream.feed(b"a\xe2\x82")
    stream.seal()

    assert stream.read_from(0).text == "a\ufffd"


def test_a_tail_cut_inside_a_character_drops_the_partial_start() -> None:
    stream, _ = collector(4)
    stream.feed("x€€".encode())  # 7 bytes; the tail starts inside the first euro sign

    assert stream.result().text == "€"


def test_the_spill_file_appears_only_on_overflow_and_holds_everything() -> None:
    stream, spill_dir = collector(5, 1000)
    stream.feed(b"12345")
    assert spill_dir.path is None
    stream.feed(b"678")
    stream.seal()
    result = stream.result()

    assert result.spill_path is not None
    assert Path(result.spill_path).read_bytes() == b"12345678"
    assert Path(result.spill_path).name.endswith("-stdout.log")
    spill_dir.remove()
    assert not Path(result.spill_path).exists()


def test_a_directory_that_keeps_its_files_leaves_the_spill_file_on_remove() -> None:
    stream, spill_dir = collector(5, 1000, keep=True)
    stream.feed(b"12345678")
    stream.seal()
    path = stream.result().spill_path
    assert path is not None

    spill_dir.remove()

    assert Path(path).read_bytes() == b"12345678"
    assert spill_dir.path is None
    shutil.rmtree(Path(path).parent)


def test_a_stream_past_the_spill_cap_deletes_its_spill_file() -> None:
    stream, spill_dir = collector(2, 6)
    stream.feed(b"abcd")
    path = stream._spill_path
    assert path is not None
    assert Path(path).exists()
    stream.feed(b"efg")
    stream.seal()

    assert not Path(path).exists()
    assert stream.result().spill_path is None
    assert stream.result().text == "fg"
    spill_dir.remove()
