"""Crash repair across a caller's log and its subagents' logs.

Contract (issue 16 §6, capabilities spec §7.6): a writer killed mid-child leaves two open logs.
Opening the caller's log (`SessionStore.open`, what `sessions resume` does) first opens — and so
repairs — every child log its `subagent/spawned` events name, deepest first, then closes its own
open turn; the open `task` call gets `TOOL_OUTCOME_UNKNOWN` whose text names the child session
and whose `meta` is `{"subagent_session": <id>}`; the repair report says what was done to each
child first. A child that never wrote a line is skipped; one that cannot be opened is reported
and the caller is repaired anyway. `inspect_family` checks the children before the caller, and
`check_all` puts deeper sessions first.

The logs are written by real `SessionLog` writers that stop mid-turn, which is what a writer
killed with SIGKILL leaves on disk (the CLI test kills a real `tether run`).
"""

from __future__ import annotations

from pathlib import Path

from tether.agent.messages import ToolCallBlock, assistant_message
from tether.agent.session import OUTCOME_UNKNOWN_TEXT, SessionLog, SessionStore


def stop_mid_call(log: SessionLog, call: tuple[str, str], spawns: str | None = None) -> None:
    """Turn 1 of `log` stops with `call` (id, tool name) recorded and unanswered; with `spawns`,
    the call started that child session. The writer is closed without ending the turn."""
    call_id, name = call
    log.turn_start(1)
    log.step_start(1, 1)
    log.assistant_message(
        1, 1, assistant_message([ToolCallBlock(call_id, name, "{}")], provider="p", model="m")
    )
    log.tool_call(1, 1, call_id, name, "{}")
    if spawns is not None:
        link = {
            "turn": 1,
            "call_id": call_id,
            "session_id": spawns,
            "agent_type": "general-purpose",
            "background": False,
        }
        log.append("subagent/spawned", link)
    log.close()


def family(tmp_path: Path) -> tuple[SessionStore, str, str, str]:
    """A caller → child → grandchild chain, each stopped mid-call."""
    store = SessionStore(tmp_path / "sessions")
    top = store.create(cwd="/work")
    child = store.create(cwd="/work", parent_session=top.id, origin="subagent", delegation_depth=1)
    grandchild = store.create(
        cwd="/work", parent_session=child.id, origin="subagent", delegation_depth=2
    )
    stop_mid_call(top, ("t1", "task"), child.id)
    stop_mid_call(child, ("t2", "task"), grandchild.id)
    stop_mid_call(grandchild, ("b1", "bash"))
    return store, top.id, child.id, grandchild.id


def test_opening_the_caller_repairs_every_descendant_log_first(tmp_path: Path) -> None:
    store, top, child, grandchild = family(tmp_path)

    log = store.open(top)
    log.close()

    assert [store.check(i) for i in (top, child, grandchild)] == [[], [], []]
    assert log.repair.describe() == [
        f"subagent session {child}: subagent session {grandchild}: closed interrupted turn 1"
        " with synthetic tool results (1 TOOL_OUTCOME_UNKNOWN)",
        f"subagent session {child}: closed interrupted turn 1 with synthetic tool results"
        " (1 TOOL_OUTCOME_UNKNOWN)",
        "closed interrupted turn 1 with synthetic tool results (1 TOOL_OUTCOME_UNKNOWN)",
    ]


def test_the_open_task_call_becomes_outcome_unknown_naming_the_child(tmp_path: Path) -> None:
    store, top, child, _ = family(tmp_path)

    log = store.open(top)
    log.close()

    (result,) = [e.data for e in store.load(top).events if e.type == "tool/result"]
    assert dict(result["error"]) == {  # type: ignore[arg-type]
        "name": "ToolOutcomeUnknownError",
        "code": "TOOL_OUTCOME_UNKNOWN",
    }
    assert (
        result["message"]["content"][0]["content"]
        == [  # type: ignore[index]
            {
                "type": "text",
                "text": OUTCOME_UNKNOWN_TEXT
                + f" This call ran a subagent in session {child}; its own log records what it did:"
                f" `tether sessions show {child}`.",
            }
        ]
    )
    assert dict(result["meta"]) == {"subagent_session": child}  # type: ignore[arg-type]


def test_a_child_that_never_wrote_a_line_is_skipped(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    top = store.create(cwd="/work")
    stop_mid_call(top, ("t1", "task"), "20990101-000000-deadbeef")

    log = store.open(top.id)
    log.close()

    assert log.repair.children == ()
    assert store.check(top.id) == []
    assert not store.path("20990101-000000-deadbeef").parent.exists()


def test_a_child_that_cannot_be_opened_is_reported_and_the_caller_repaired(
    tmp_path: Path,
) -> None:
    store, top, child, _ = family(tmp_path)
    store.path(child).write_bytes(b"not a session\n")

    log = store.open(top)
    log.close()

    assert store.check(top) == []
    (line, *_) = log.repair.describe()
    assert line.startswith(f"could not repair subagent session {child}: ")
    assert "tether sessions repair" in line


def test_inspect_family_checks_the_children_before_the_caller(tmp_path: Path) -> None:
    store, top, child, grandchild = family(tmp_path)

    checked = store.inspect_family(top)

    assert [(c.id, c.remedy, c.parent_session) for c in checked] == [
        (grandchild, "resume", child),
        (child, "resume", top),
        (top, "resume", None),
    ]


def test_check_all_lists_deeper_sessions_first(tmp_path: Path) -> None:
    store, top, child, grandchild = family(tmp_path)

    assert [(c.id, c.delegation_depth) for c in store.check_all()] == [
        (grandchild, 2),
        (child, 1),
        (top, 0),
    ]
