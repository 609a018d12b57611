"""Loading a session after a crash: torn tails and interrupted turns (spec §7.6-7.7).

Contract: a last line without its newline that is not a complete record, or a last line that is not
a valid record, is cut and reported (`repair.torn_tail`); nothing before it is lost (a complete
record lacking only its newline is kept: `test_session_faults.py`). Any other bad line is corruption
and the session is refused. A last turn without `turn/end` is closed: every tool call of the open
step without a result gets a synthetic error result — `TOOL_OUTCOME_UNKNOWN` (exact text, citing the
`tool/call` seq) when the call was recorded, `TOOL_NOT_STARTED` (exact text) when only the model
asked for it — then `step/end` for the open step and `turn/end {kind: "interrupted"}`; seqs continue
the log and `time` repeats the last event's. `open` writes the repair durably; `load` applies it in
memory only.
"""

import json
from pathlib import Path

import pytest

from tether.agent.messages import ToolResultMessage
from tether.agent.session import (
    OUTCOME_UNKNOWN_TEXT,
    TOOL_NOT_STARTED_TEXT,
    SessionError,
    SessionStore,
    TornTail,
)

UNKNOWN_TEXT = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded."
    " Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the"
    " operation is read-only or idempotent; if it may have side effects, first verify external"
    " state or ask the user. Do not retry blindly."
)
NOT_STARTED_TEXT = (
    "The tool call was interrupted before the Harness recorded it as started. Retry it if it is"
    " still needed."
)


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path)


def event(kind: str, seq: int, **data: object) -> dict[str, object]:
    record: dict[str, object] = {"type": kind, "seq": seq, "time": 1000 + seq, "data": data}
    if kind in ("user/message", "assistant/message", "tool/result"):
        record["surface_op"] = "append"
    return record


def assistant(seq: int, *call_ids: str) -> dict[str, object]:
    blocks = [{"type": "tool-call", "id": c, "name": "bash", "arguments": "{}"} for c in call_ids]
    message = {
        "id": f"a{seq}",
        "role": "assistant",
        "content": [{"type": "text", "text": "Running."}, *blocks],
        "source": {"kind": "model", "provider": "p", "model": "m"},
    }
    return event("assistant/message", seq, turn=1, step=1, message=message)


def call(seq: int, call_id: str) -> dict[str, object]:
    return event("tool/call", seq, turn=1, step=1, call_id=call_id, name="bash", arguments="{}")


def answer(seq: int, call_id: str) -> dict[str, object]:
    message = {
        "id": f"r{seq}",
        "role": "user",
        "content": [
            {
                "type": "tool-result",
                "call_id": call_id,
                "content": [{"type": "text", "text": "ok"}],
                "is_error": False,
            }
        ],
        "source": {"kind": "tool", "call_id": call_id},
    }
    return event("tool/result", seq, turn=1, step=1, message=message)


def write_log(store: SessionStore, records: list[dict[str, object]], tail: bytes = b"") -> Path:
    """A session file as a crashed writer would leave it."""
    path = store.path("s1")
    path.parent.mkdir(parents=True)
    header = {"type": "session", "version": 0, "id": "s1", "created_at": 1, "delegation_depth": 0}
    body = "".join(json.dumps(r) + "\n" for r in [header, *records]).encode()
    path.write_bytes(body + tail)
    return path


CRASHED_MID_TOOL = [
    event("turn/start", 0, turn=1),
    event("step/start", 1, turn=1, step=1),
    assistant(2, "c1", "c2", "c3"),
    call(3, "c1"),
    answer(4, "c1"),
    call(5, "c2"),
]


def test_the_exact_synthetic_texts_are_the_spec_texts() -> None:
    assert OUTCOME_UNKNOWN_TEXT == UNKNOWN_TEXT
    assert TOOL_NOT_STARTED_TEXT == NOT_STARTED_TEXT


def test_a_crash_mid_tool_is_closed_with_outcome_unknown_and_not_started(
    store: SessionStore,
) -> None:
    write_log(store, CRASHED_MID_TOOL)
    with store.open("s1") as log:
        added = [e.to_json() for e in log.events[6:]]
        assert log.repair.closed_turn == 1
        assert log.repair.describe() == [
            "closed interrupted turn 1 with synthetic tool results (1 TOOL_OUTCOME_UNKNOWN,"
            " 1 TOOL_NOT_STARTED)"
        ]
    assert added == [
        {
            "type": "tool/result",
            "seq": 6,
            "time": 1005,
            "data": {
                "turn": 1,
                "step": 1,
                "message": {
                    "id": "interrupted-tool-result-c2-6",
                    "role": "user",
                    "content": [
                        {
                            "type": "tool-result",
                            "call_id": "c2",
                            "content": [{"type": "text", "text": UNKNOWN_TEXT}],
                            "is_error": True,
                        }
                    ],
                    "source": {"kind": "tool", "call_id": "c2"},
                },
                "error": {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"},
            },
            "surface_op": "append",
            "source_event_seqs": [5],
        },
        {
            "type": "tool/result",
            "seq": 7,
            "time": 1005,
            "data": {
                "turn": 1,
                "step": 1,
                "message": {
                    "id": "interrupted-tool-result-c3-7",
                    "role": "user",
                    "content": [
                        {
                            "type": "tool-result",
                            "call_id": "c3",
                            "content": [{"type": "text", "text": NOT_STARTED_TEXT}],
                            "is_error": True,
                        }
                    ],
                    "source": {"kind": "tool", "call_id": "c3"},
                },
                "error": {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"},
            },
            "surface_op": "append",
        },
        {"type": "step/end", "seq": 8, "time": 1005, "data": {"turn": 1, "step": 1}},
        {
            "type": "turn/end",
            "seq": 9,
            "time": 1005,
            "data": {"turn": 1, "reason": {"kind": "interrupted"}},
        },
    ]


def test_the_repair_is_durable_and_leaves_a_balanced_log(store: SessionStore) -> None:
    write_log(store, CRASHED_MID_TOOL)
    assert "OPEN_TURN" in [d.code for d in store.check("s1")]
    with store.open("s1") as log:
        repaired = list(log.events)
    assert store.check("s1") == []
    with store.open("s1") as again:
        assert list(again.events) == repaired
        assert again.repair.repaired is False


def test_the_repaired_history_answers_every_tool_call(store: SessionStore) -> None:
    write_log(store, CRASHED_MID_TOOL)
    with store.open("s1") as log:
        history = log.messages()
    results = [m for m in history if isinstance(m, ToolResultMessage)]
    assert [(r.call_id, r.is_error) for r in results] == [
        ("c1", False),
        ("c2", True),
        ("c3", True),
    ]


def test_an_open_turn_between_steps_gets_only_a_turn_end(store: SessionStore) -> None:
    write_log(
        store,
        [
            event("turn/start", 0, turn=1),
            event("step/start", 1, turn=1, step=1),
            assistant(2, "c1"),
            call(3, "c1"),
            answer(4, "c1"),
            event("step/end", 5, turn=1, step=1),
        ],
    )
    with store.open("s1") as log:
        assert [(e.type, e.seq) for e in log.repair.synthesized] == [("turn/end", 6)]


def test_a_closed_log_is_not_repaired(store: SessionStore) -> None:
    path = write_log(
        store,
        [
            event("turn/start", 0, turn=1),
            event("turn/end", 1, turn=1, reason={"kind": "completed"}),
        ],
    )
    before = path.read_bytes()
    with store.open("s1") as log:
        assert log.repair.repaired is False
    assert path.read_bytes() == before


def test_a_torn_last_line_is_cut_and_reported_and_nothing_else_is_lost(
    store: SessionStore,
) -> None:
    records = [
        event("turn/start", 0, turn=1),
        event("turn/end", 1, turn=1, reason={"kind": "completed"}),
    ]
    torn = b'{"type": "turn/start", "seq": 2, "ti'
    path = write_log(store, records, tail=torn)
    complete = path.read_bytes()[: -len(torn)]
    with store.open("s1") as log:
        assert [e.seq for e in log.events] == [0, 1]
        assert log.repair.torn_tail == TornTail(
            line=4, offset=len(complete), length=len(torn), reason="the last line has no newline"
        )
        assert log.repair.describe() == [
            f"cut a torn last line: line 4 ({len(torn)} bytes at offset {len(complete)}):"
            " the last line has no newline"
        ]
        assert path.read_bytes() == complete
        log.turn_start(2)
    assert [json.loads(x)["seq"] for x in path.read_text().splitlines()[1:]] == [0, 1, 2]


def test_a_last_line_that_is_not_valid_json_is_cut(store: SessionStore) -> None:
    path = write_log(store, [event("turn/start", 0, turn=1)], tail=b'{"type": garbage}\n')
    with store.open("s1") as log:
        assert log.repair.torn_tail is not None
        assert log.repair.torn_tail.reason == "not valid JSON"
        assert [e.type for e in log.events] == ["turn/start", "turn/end"]
    assert b"garbage" not in path.read_bytes()


def test_a_bad_line_before_the_last_is_corruption(store: SessionStore) -> None:
    path = store.path("s1")
    path.parent.mkdir(parents=True)
    header = json.dumps({"type": "session", "version": 0, "id": "s1", "created_at": 1})
    good = json.dumps(event("turn/start", 1, turn=1))
    path.write_text(f"{header}\nnot json\n{good}\n")
    with pytest.raises(SessionError) as caught:
        store.open("s1")
    assert caught.value.code == "SESSION_CORRUPT"
    assert "line 2 is corrupt (not valid JSON)" in caught.value.message
    assert [d.code for d in store.check("s1")] == ["INVALID_LINE", "SEQ_GAP", "OPEN_TURN"]


def test_load_repairs_in_memory_only(store: SessionStore) -> None:
    path = write_log(store, CRASHED_MID_TOOL, tail=b'{"type": "tool/res')
    before = path.read_bytes()
    loaded = store.load("s1")
    assert loaded.repair.torn_tail is not None
    assert [e.type for e in loaded.repair.synthesized] == [
        "tool/result",
        "tool/result",
        "step/end",
        "turn/end",
    ]
    assert len(loaded.events) == 10
    assert path.read_bytes() == before
