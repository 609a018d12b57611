"""The listing index (`tether.agent.session.index`): a cache that never changes an answer.

Contract: `list_sessions()` and `sweep()` give exactly what they give without the index — a
session appended to since it was indexed is read again (new title, size, time), a new session
appears, a removed one disappears, a corrupt or foreign index is rebuilt — while a log whose
identity (inode, size, mtime) is unchanged is not read again, and a sweep does not look into a
directory it found clean at its current mtime. Identities younger than `RACY_NS` are not cached.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tether.agent.session import SessionLog, SessionStore
from tether.agent.session import store as store_module
from tether.agent.session.index import INDEX_NAME
from tether.tools.results import user_message

LONG_AGO = 1_000_000_000  # 1970: far older than RACY_NS


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "sessions")


def settle(log: SessionLog) -> None:
    """Age the log and its directory past the racy window (as minutes passing would)."""
    os.utime(log.path, ns=(LONG_AGO, LONG_AGO))
    os.utime(log.path.parent, ns=(LONG_AGO, LONG_AGO))


def prompt(store: SessionStore, session_id: str, text: str | None) -> SessionLog:
    log = store.create(session_id=session_id, cwd="/w")
    log.turn_start(1)
    if text is not None:
        log.user_message(user_message(text))
    return log


def indexed(store: SessionStore) -> dict[str, dict[str, object]]:
    data = json.loads((store.root / INDEX_NAME).read_text())
    return data["sessions"]  # type: ignore[no-any-return]


def test_a_settled_session_is_listed_from_the_index_without_reading_its_log(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = prompt(store, "s1", "fix the build")
    log.close()
    settle(log)
    first = store.list_sessions()
    read: list[Path] = []
    real = store_module._read_summary
    monkeypatch.setattr(
        store_module, "_read_summary", lambda path, at: (read.append(path), real(path, at))[1]
    )

    again = store.list_sessions()

    assert again == first
    assert [(s.id, s.title) for s in again] == [("s1", "fix the build")]
    assert read == []


def test_a_session_appended_to_after_it_was_indexed_is_read_again(store: SessionStore) -> None:
    log = prompt(store, "s1", None)
    settle(log)
    assert [s.title for s in store.list_sessions()] == [None]
    assert "s1" in indexed(store)

    log.user_message(user_message("the prompt came later"))  # a live writer appends

    assert [s.title for s in store.list_sessions()] == ["the prompt came later"]
    assert store.list_sessions()[0].size == log.path.stat().st_size
    log.close()


def test_a_log_written_within_the_racy_window_is_not_cached(store: SessionStore) -> None:
    log = prompt(store, "s1", "just now")

    assert [s.title for s in store.list_sessions()] == ["just now"]
    assert "s1" not in indexed(store)
    log.close()


def test_new_and_removed_sessions_are_seen_whatever_the_index_says(store: SessionStore) -> None:
    for name in ("a", "b"):
        log = prompt(store, name, f"task {name}")
        log.close()
        settle(log)
    assert sorted(s.id for s in store.list_sessions()) == ["a", "b"]

    shutil.rmtree(store.path("a").parent)
    log = prompt(store, "c", "task c")
    log.close()

    assert sorted(s.id for s in store.list_sessions()) == ["b", "c"]
    assert "a" not in indexed(store)


@pytest.mark.parametrize("garbage", [b"", b"{not json", b'{"version": 99, "sessions": {}}', b"[]"])
def test_a_corrupt_or_foreign_index_is_rebuilt(store: SessionStore, garbage: bytes) -> None:
    log = prompt(store, "s1", "still here")
    log.close()
    settle(log)
    (store.root / INDEX_NAME).write_bytes(garbage)

    assert [(s.id, s.title) for s in store.list_sessions()] == [("s1", "still here")]
    assert indexed(store)["s1"]["title"] == "still here"


def test_an_index_entry_for_another_file_is_not_used(store: SessionStore) -> None:
    log = prompt(store, "s1", "the real title")
    log.close()
    settle(log)
    store.list_sessions()
    data = json.loads((store.root / INDEX_NAME).read_text())
    data["sessions"]["s1"]["title"] = "a stale title"
    data["sessions"]["s1"]["log"][1] += 1  # recorded for a file of another size
    (store.root / INDEX_NAME).write_text(json.dumps(data))

    assert [s.title for s in store.list_sessions()] == ["the real title"]


def test_sweep_skips_a_directory_it_found_clean_and_sweeps_it_once_it_changes(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = prompt(store, "s1", "task")
    log.close()
    settle(log)
    assert store.sweep() == []  # looked, found it clean, remembered its mtime
    looked: list[Path] = []
    real = store_module._sweep
    monkeypatch.setattr(store_module, "_sweep", lambda d: (looked.append(d), real(d))[1])

    assert store.sweep() == []
    assert looked == []
    stray = log.path.parent / ".session.jsonl.999999.tmp"  # a dead writer's temp file
    stray.write_text("{}\n")

    assert store.sweep() == [stray]
    assert looked == [log.path.parent]
