"""Durable sessions: the append-only JSONL writer, the store, history rebuild and `check`.

Contract (spec §7.6-7.7, issue 6): a session file is a header line plus one event per line with
`seq` contiguous from 0; nothing is written before the first append; every append is written at
once, `turn/end` is fsynced before `append` returns and `sync()` pays one fsync for everything
else pending (group commit: `test_group_commit.py`); one writer at a time (a second one is refused,
naming the pid that holds the lock); every tool call gets at most one `tool/result` at append time;
reopening rebuilds the model history from the surface events; `check` reports seq gaps and
unbalanced calls/results without changing the file.
"""

import json
import os
from pathlib import Path

import pytest

from tether.agent.messages import (
    TextBlock,
    ToolCallBlock,
    assistant_message,
    tool_result_message,
)
from tether.agent.session import SessionError, SessionLog, SessionStore
from tether.tools.results import ErrorDetail, ErrorInfo, ToolFailure, user_message


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "sessions")


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_turn(log: SessionLog) -> None:
    log.turn_start(1)
    log.step_start(1, 1)
    log.user_message(user_message("list files"))
    call = ToolCallBlock("c1", "bash", '{"command": "ls"}')
    log.assistant_message(
        1, 1, assistant_message([TextBlock("Listing."), call], provider="p", model="m")
    )
    seq = log.tool_call(1, 1, "c1", "bash", '{"command": "ls"}').seq
    log.tool_result(1, 1, tool_result_message("c1", "a.txt"), call_seq=seq)
    log.step_end(1, 1)
    log.turn_end(1, {"kind": "completed"})


def test_nothing_is_written_before_the_first_append(store: SessionStore) -> None:
    with store.create(session_id="s1", cwd="/work") as log:
        assert not log.path.exists()
        assert store.list_sessions() == []
        log.turn_start(1)
        assert log.path == store.path("s1")
        assert lines(log.path) == [
            {
                "type": "session",
                "version": 0,
                "id": "s1",
                "created_at": log.header.created_at,
                "cwd": "/work",
                "delegation_depth": 0,
            },
            {"type": "turn/start", "seq": 0, "time": log.events[0].time, "data": {"turn": 1}},
        ]


def test_events_get_contiguous_seqs_and_surface_markers(store: SessionStore) -> None:
    with store.create(session_id="s1") as log:
        write_turn(log)
        records = lines(log.path)[1:]
    assert [r["seq"] for r in records] == list(range(8))
    assert [r["type"] for r in records] == [
        "turn/start",
        "step/start",
        "user/message",
        "assistant/message",
        "tool/call",
        "tool/result",
        "step/end",
        "turn/end",
    ]
    assert [r["type"] for r in records if r.get("surface_op") == "append"] == [
        "user/message",
        "assistant/message",
        "tool/result",
    ]
    assert records[5]["source_event_seqs"] == [4]


def test_only_turn_end_is_fsynced_before_append_returns(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = store.create(session_id="s1")
    log.turn_start(1)  # materialises the file
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    seen: list[tuple[str, bool]] = []
    for kind, append in [
        ("step/start", lambda: log.step_start(1, 1)),
        ("tool/call", lambda: log.tool_call(1, 1, "c1", "read", "{}")),
        ("assistant/chunk", lambda: log.append("assistant/chunk", {"turn": 1, "step": 1})),
        ("tool/result", lambda: log.tool_result(1, 1, tool_result_message("c1", "x"))),
        ("step/end", lambda: log.step_end(1, 1)),
        ("turn/end", lambda: log.turn_end(1, {"kind": "completed"})),
    ]:
        before = len(synced)
        append()
        seen.append((kind, len(synced) > before))
    log.close()
    assert seen == [(kind, kind == "turn/end") for kind, _ in seen]


def test_sync_pays_one_fsync_for_everything_written_and_none_when_nothing_is(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = store.create(session_id="s1")
    log.turn_start(1)
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    log.step_start(1, 1)
    log.tool_call(1, 1, "c1", "read", "{}")
    log.tool_call(1, 1, "c2", "read", "{}")

    assert log.unsynced
    log.sync()
    log.sync()

    assert (len(synced), log.unsynced) == (1, False)
    log.close()
    assert len(synced) == 1  # close had nothing left to sync


def test_a_second_writer_is_refused_naming_the_pid_holding_the_lock(store: SessionStore) -> None:
    first = store.create(session_id="s1")
    first.append("todo/write", {"todos": []})
    with pytest.raises(SessionError) as caught:
        store.open("s1")
    assert caught.value.code == "SESSION_LOCKED"
    assert f"already open for writing by pid {os.getpid()}" in caught.value.message
    first.close()
    with store.open("s1") as second:
        assert len(second.events) == 1


def test_creating_an_existing_session_is_refused(store: SessionStore) -> None:
    with store.create(session_id="s1") as log:
        log.turn_start(1)
    with pytest.raises(SessionError) as caught:
        store.create(session_id="s1")
    assert caught.value.code == "SESSION_EXISTS"


def test_a_second_result_for_one_call_is_refused(store: SessionStore) -> None:
    with store.create(session_id="s1") as log:
        log.tool_call(1, 1, "c1", "read", "{}")
        log.tool_result(1, 1, tool_result_message("c1", "first"))
        with pytest.raises(SessionError) as caught:
            log.tool_result(1, 1, tool_result_message("c1", "second"))
        assert caught.value.code == "SESSION_DUPLICATE_RESULT"
        assert len(log.events) == 2
    assert len(lines(store.path("s1"))) == 3


def test_data_that_is_not_lossless_json_is_refused(store: SessionStore) -> None:
    with store.create(session_id="s1") as log:
        with pytest.raises(SessionError) as caught:
            log.append("todo/write", {"todos": float("nan")})
        assert caught.value.code == "SESSION_INVALID_EVENT"
        assert log.events == []


def test_a_closed_log_refuses_appends(store: SessionStore) -> None:
    log = store.create(session_id="s1")
    log.close()
    with pytest.raises(SessionError) as caught:
        log.turn_start(1)
    assert caught.value.code == "SESSION_CLOSED"


def test_reopening_rebuilds_the_model_history(store: SessionStore) -> None:
    with store.create(session_id="s1") as log:
        write_turn(log)
        written = log.messages()
    with store.open("s1") as resumed:
        assert resumed.messages() == written
        assert resumed.last_turn == 1
        assert resumed.open_turn is None
        assert resumed.repair.repaired is False
    assert [type(m).__name__ for m in written] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
    ]


def test_tool_outcome_records_a_registry_failure_with_its_error_info(store: SessionStore) -> None:
    failure = ToolFailure(
        ErrorDetail("tool call aborted", ErrorInfo("AbortError", "ABORTED")),
        [{"type": "text", "text": "Error: tool call aborted"}],
        meta={"ms": 3},
    )
    with store.create(session_id="s1") as log:
        seq = log.tool_call(1, 1, "c1", "bash", "{}").seq
        event = log.tool_outcome(1, 1, "c1", failure, call_seq=seq)
    assert event.data["error"] == {"name": "AbortError", "code": "ABORTED"}
    assert event.data["meta"] == {"ms": 3}
    assert event.data["message"]["content"][0]["is_error"] is True  # type: ignore[index]
    assert event.source_event_seqs == (0,)


def test_list_sessions_shows_each_session_with_its_first_prompt(store: SessionStore) -> None:
    with store.create(session_id="older", cwd="/a") as log:
        log.user_message(user_message("first   task\nwith lines"))
    with store.create(session_id="newer") as log:
        log.turn_start(1)
    os.utime(store.path("older"), ns=(1_000_000_000, 1_000_000_000))
    summaries = store.list_sessions()
    assert [(s.id, s.title, s.cwd) for s in summaries] == [
        ("newer", None, None),
        ("older", "first task with lines", "/a"),
    ]


def test_session_ids_are_encoded_into_safe_directory_names(store: SessionStore) -> None:
    assert store.path("a/b c").parent.name == "a~002Fb~0020c"
    assert store.path("..").parent.name == "~002E~002E"
    with pytest.raises(SessionError, match="non-empty"):
        store.path("")


def test_check_finds_nothing_wrong_in_a_complete_session(store: SessionStore) -> None:
    with store.create(session_id="s1") as log:
        write_turn(log)
    assert store.check("s1") == []


def write_raw(store: SessionStore, session_id: str, records: list[dict[str, object]]) -> Path:
    path = store.path(session_id)
    path.parent.mkdir(parents=True)
    header = {"type": "session", "version": 0, "id": session_id, "created_at": 1}
    path.write_text("".join(json.dumps(r) + "\n" for r in [header, *records]))
    return path


def event(kind: str, seq: int, **data: object) -> dict[str, object]:
    return {"type": kind, "seq": seq, "time": 5, "data": data}


def result(seq: int, call_id: str) -> dict[str, object]:
    message = {
        "id": f"r-{seq}",
        "role": "user",
        "content": [{"type": "tool-result", "call_id": call_id, "content": [], "is_error": False}],
        "source": {"kind": "tool", "call_id": call_id},
    }
    return {**event("tool/result", seq, turn=1, step=1, message=message), "surface_op": "append"}


def test_check_reports_a_seq_gap(store: SessionStore) -> None:
    write_raw(store, "s1", [event("turn/start", 0, turn=1), event("turn/end", 2, turn=1)])
    assert [(d.code, d.message) for d in store.check("s1")] == [
        ("SEQ_GAP", "seq 2 (turn/end) where 1 was expected")
    ]


def test_check_reports_unbalanced_calls_and_results(store: SessionStore) -> None:
    write_raw(
        store,
        "s1",
        [
            event("turn/start", 0, turn=1),
            event("tool/call", 1, turn=1, step=1, call_id="c1", name="bash", arguments="{}"),
            event("tool/call", 2, turn=1, step=1, call_id="c2", name="read", arguments="{}"),
            result(3, "c2"),
            result(4, "c2"),
            result(5, "ghost"),
            event("turn/end", 6, turn=1, reason={"kind": "completed"}),
        ],
    )
    assert [(d.code, d.seq) for d in store.check("s1")] == [
        ("MISSING_RESULT", 1),
        ("DUPLICATE_RESULT", 4),
        ("ORPHAN_RESULT", 5),
    ]
    messages = [d.message for d in store.check("s1")]
    assert messages[0] == 'tool/call "c1" (bash, seq 1) has no tool/result'


def test_check_reports_an_open_turn_and_a_torn_tail_without_changing_the_file(
    store: SessionStore,
) -> None:
    path = write_raw(
        store,
        "s1",
        [
            event("turn/start", 0, turn=1),
            event("tool/call", 1, turn=1, step=1, call_id="c1", name="bash", arguments="{}"),
        ],
    )
    with path.open("ab") as file:
        file.write(b'{"type": "tool/res')
    before = path.read_bytes()
    assert [d.code for d in store.check("s1")] == ["TORN_TAIL", "OPEN_TURN", "MISSING_RESULT"]
    assert path.read_bytes() == before


def test_a_session_written_by_a_newer_format_is_refused(store: SessionStore) -> None:
    path = store.path("s1")
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps({"type": "session", "version": 1, "id": "s1", "created_at": 1}) + "\n"
    )
    with pytest.raises(SessionError) as caught:
        store.load("s1")
    assert caught.value.code == "SESSION_VERSION"
    assert "written by a newer tether — upgrade" in caught.value.message


def test_opening_a_missing_session_says_how_to_find_one(store: SessionStore) -> None:
    with pytest.raises(SessionError) as caught:
        store.open("nope")
    assert caught.value.code == "SESSION_NOT_FOUND"
    assert "see `tether sessions list`" in caught.value.message
