"""Fault injection on the durable session log (issue 18): real files, a real full filesystem.

Contract: an append the file refuses (`ENOSPC`, `EIO`) leaves the file a valid prefix (cut back
to its last complete line) and puts the log in the failed state: every later append is refused
(`SessionWriteFailed`), a refused `tool/result` is held in memory. `recover()` — once there is
space — closes the cut turn with the held results as they were, `TOOL_OUTCOME_UNKNOWN` for a
recorded call without one, `TOOL_NOT_STARTED` for a call that never started, then `step/end` and
`turn/end {"kind": "error", "error": {"code": "SESSION_WRITE_FAILED", ...}}`; while the file
still refuses writes it raises and changes nothing. In the agent loop a full disk stops the
turn: the step's running calls are aborted and awaited, the turn returns `SESSION_WRITE_FAILED`
(never raises), and the next turn first recovers the log with the real results. A turn that a
writer closed without some results is repaired after its `turn/end`. `salvage` keeps the valid
prefix of a damaged file, moves the rest to a side file, closes the last turn; `sweep` removes a
dead writer's temp file and never touches a live writer's session.

The full disk is a tmpfs mounted for the test, or — where mounting is refused — the session
log's write seam raising `ENOSPC` (`_disk.py`); each test runs under either, none is skipped.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tether import AbortController, ToolOutput, define_tool
from tether.agent.llm import LlmConfig, RetryPolicy
from tether.agent.llm.plugin import build_llm
from tether.agent.loop import AgentLoop, AgentSettings
from tether.agent.session import (
    OUTCOME_UNKNOWN_TEXT,
    SessionLog,
    SessionStore,
    SessionWriteFailed,
)
from tether.agent.session import log as log_module
from tether.kernel import Context
from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply
from tether.tools import ToolRuntime
from tether.tools.execution import ToolRunContext
from tether.tools.results import ToolSuccess, text_content

from ._disk import SmallDisk
from .test_session_repair import answer, assistant, call, event

BIG = "x" * 60_000
"""A tool output that does not fit in the 24 KiB the tests leave free."""


def ok_result(text: str) -> ToolSuccess:
    return ToolSuccess(value=text, content=text_content(text))


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SmallDisk]:
    small = SmallDisk.open(tmp_path / "small", size=256 * 1024)
    small.arm(monkeypatch)
    try:
        yield small
    finally:
        small.close()


@pytest.fixture
def store(disk: SmallDisk) -> SessionStore:
    return SessionStore(disk.path / "sessions")


def types(log: SessionLog | list[dict[str, Any]]) -> list[str]:
    if isinstance(log, SessionLog):
        return [e.type for e in log.events]
    return [r["type"] for r in log]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def outcome_of(record: Any) -> tuple[str, Any]:
    data = record["data"] if isinstance(record, dict) and "data" in record else record.data
    error = data.get("error")
    return data["message"]["content"][0]["call_id"], error and dict(error)


def eio(fd: int) -> None:
    """An fsync that fails as a dying disk's does."""
    raise OSError(errno.EIO, os.strerror(errno.EIO))


def start_two_calls(log: SessionLog) -> int:
    """A turn whose assistant message asks for c1 and c2; c1 is recorded. Returns c1's seq."""
    log.turn_start(1)
    log.step_start(1, 1)
    log.append("assistant/message", assistant(0, "c1", "c2")["data"])  # type: ignore[arg-type]
    return log.tool_call(1, 1, "c1", "bash", "{}").seq


# -- the log ---------------------------------------------------------------------------------------


def test_a_refused_result_leaves_a_valid_prefix_and_stops_every_later_append(
    store: SessionStore, disk: SmallDisk
) -> None:
    log = store.create(session_id="s1")
    start_two_calls(log)
    before = log.path.read_bytes()
    disk.fill(24 * 1024)

    with pytest.raises(SessionWriteFailed) as refused:
        log.tool_outcome(1, 1, "c1", ok_result(BIG))
    with pytest.raises(SessionWriteFailed) as stopped:
        log.step_end(1, 1)

    assert refused.value.code == "SESSION_WRITE_FAILED"
    assert refused.value.message == (
        f"cannot append to {log.path}: [Errno 28] No space left on device"
    )
    assert stopped.value.message == (
        f'session "s1" stopped recording at seq 4 after a write failure ({refused.value.message});'
        " nothing more is written until it recovers"
    )
    assert log.path.read_bytes() == before
    assert log.failure is refused.value
    assert list(log.held_results) == ["c1"]
    assert [d.code for d in store.check("s1")] == ["OPEN_TURN", "MISSING_RESULT", "MISSING_RESULT"]
    log.close()


def test_recover_writes_the_held_result_as_it_was_and_closes_the_turn(
    store: SessionStore, disk: SmallDisk
) -> None:
    log = store.create(session_id="s1")
    called = start_two_calls(log)
    disk.fill(24 * 1024)
    with pytest.raises(SessionWriteFailed) as refused:
        log.tool_outcome(1, 1, "c1", ok_result(BIG), call_seq=called)
    disk.free()

    report = log.recover()

    assert types(log)[4:] == ["tool/result", "tool/result", "step/end", "turn/end"]
    kept, synthetic, _, ended = log.events[4:]
    assert (outcome_of(kept), kept.source_event_seqs) == (("c1", None), (called,))
    assert kept.data["message"]["content"][0]["content"] == [{"type": "text", "text": BIG}]
    assert outcome_of(synthetic) == (
        "c2",
        {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"},
    )
    assert ended.data["reason"] == {
        "kind": "error",
        "error": {"message": refused.value.message, "code": "SESSION_WRITE_FAILED"},
    }
    assert report.describe() == [
        "closed interrupted turn 1 with synthetic tool results (1 TOOL_NOT_STARTED) and 1 held"
        " tool result"
    ]
    assert (log.failure, dict(log.held_results)) == (None, {})
    log.turn_start(2)  # the log writes again
    log.turn_end(2, {"kind": "completed"})
    log.close()
    assert store.check("s1") == []
    assert types(lines(store.path("s1")))[-2:] == ["turn/start", "turn/end"]


def test_a_session_created_on_a_full_disk_is_not_there_until_an_append_succeeds(
    store: SessionStore, disk: SmallDisk
) -> None:
    log = store.create(session_id="s1")
    disk.fill(0)

    with pytest.raises(SessionWriteFailed) as refused:
        log.turn_start(1)

    assert refused.value.message == (
        f"cannot create {log.path}: [Errno 28] No space left on device"
    )
    assert sorted(p.name for p in log.path.parent.iterdir()) == ["writer.lock"]
    assert store.check_all() == []
    disk.free()
    assert log.recover().describe() == []
    log.turn_start(1)
    log.turn_end(1, {"kind": "completed"})
    log.close()
    assert store.check("s1") == []


def test_recover_while_the_file_still_refuses_writes_raises_and_changes_nothing(
    store: SessionStore, disk: SmallDisk
) -> None:
    log = store.create(session_id="s1")
    start_two_calls(log)
    disk.fill(24 * 1024)
    with pytest.raises(SessionWriteFailed):
        log.tool_outcome(1, 1, "c1", ok_result(BIG))
    before = log.path.read_bytes()

    with pytest.raises(SessionWriteFailed):
        log.recover()  # the held 60 KB result still does not fit

    assert log.path.read_bytes() == before
    assert log.failure is not None
    assert list(log.held_results) == ["c1"]
    log.close()


def test_a_failed_fsync_at_a_durability_point_fails_the_log(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = store.create(session_id="s1")
    start_two_calls(log)
    log.tool_outcome(1, 1, "c1", ok_result("done"))  # written; synced at the next point

    with monkeypatch.context() as patch:
        patch.setattr(log_module.os, "fsync", eio)
        with pytest.raises(SessionWriteFailed) as refused:
            log.sync()

    assert refused.value.message == f"cannot sync {log.path}: [Errno 5] Input/output error"
    assert log.failure is not None
    assert types(lines(log.path))[-1] == "tool/result"  # what was written stays written
    with pytest.raises(SessionWriteFailed):
        log.step_end(1, 1)
    log.close()


def test_a_failed_fsync_of_a_turn_end_is_a_write_failure_too(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = store.create(session_id="s1")
    start_two_calls(log)
    log.tool_outcome(1, 1, "c1", ok_result("done"))
    before = log.path.read_bytes()

    with monkeypatch.context() as patch:
        patch.setattr(log_module.os, "fsync", eio)
        with pytest.raises(SessionWriteFailed) as refused:
            log.turn_end(1, {"kind": "completed"})

    assert refused.value.message == f"cannot append to {log.path}: [Errno 5] Input/output error"
    assert log.path.read_bytes() == before
    assert log.failure is not None
    log.close()


def test_opening_a_cut_session_on_a_full_disk_fails_and_changes_nothing(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = store.create(session_id="s1")
    start_two_calls(log)
    log.close()
    before = store.path("s1").read_bytes()

    def full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    # The page slack of a tmpfs file takes a small repair even when the disk is "full": the
    # seam is the deterministic way to refuse every byte.
    monkeypatch.setattr(log_module, "_write_all", full)
    with pytest.raises(SessionWriteFailed) as refused:
        store.open("s1")

    assert refused.value.message == (
        f"cannot append to {store.path('s1')}: [Errno 28] No space left on device"
    )
    assert store.path("s1").read_bytes() == before
    monkeypatch.undo()
    with store.open("s1") as reopened:  # the lock was released
        assert types(reopened)[-1] == "turn/end"


# -- the agent loop --------------------------------------------------------------------------------


class Args(BaseModel):
    note: str = ""


class Rig:
    def __init__(self, ctx: Context, server: ScriptedModelServer, store: SessionStore) -> None:
        self.ctx, self.server, self.store = ctx, server, store
        self.aborted = asyncio.Event()
        self.entered = asyncio.Event()

    async def big(self, args: Args, exec: ToolRunContext) -> str:
        await self.entered.wait()  # c2 is running when c1's result is refused
        return BIG

    async def slow(self, args: Args, exec: ToolRunContext) -> str:
        self.entered.set()
        await exec.signal.wait()
        self.aborted.set()
        exec.signal.throw_if_aborted()
        return "never"


@pytest.fixture
async def rig(store: SessionStore) -> AsyncIterator[Rig]:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    async with ScriptedModelServer() as server:
        built = Rig(ctx, server, store)
        for name, body in (("big", built.big), ("slow", built.slow)):
            ctx.tools.register(
                define_tool(
                    name=name,
                    description=name,
                    parameters=Args,
                    output=ToolOutput(schema=str),
                    execute=body,
                    is_concurrency_safe=lambda args: True,
                )
            )
        try:
            yield built
        finally:
            await ctx.dispose()


async def test_a_full_disk_aborts_the_running_calls_and_the_next_turn_records_their_results(
    rig: Rig, disk: SmallDisk, tmp_path: Path
) -> None:
    llm = build_llm(
        LlmConfig(
            provider="openai",
            base_url=rig.server.base_url,
            model="scripted",
            retry=RetryPolicy(mode="off"),
        ),
        environ={},
    )
    log = rig.store.create(session_id="s1")
    agent = AgentLoop(
        tools=rig.ctx.tools.runtime,
        llm=llm,
        session=log,
        settings=AgentSettings(cwd=tmp_path),
    )
    rig.server.push(tool_calls_reply(("c1", "big", "{}"), ("c2", "slow", "{}")))
    disk.fill(24 * 1024)
    try:
        outcome = await agent.run_turn("go", signal=AbortController().signal)

        assert rig.aborted.is_set()
        assert outcome.reason == {
            "kind": "error",
            "error": {
                "code": "SESSION_WRITE_FAILED",
                "message": f"cannot append to {log.path}: [Errno 28] No space left on device;"
                " the turn stopped (its started tool calls were stopped and awaited); once there"
                " is space, `tether sessions resume s1` records their outcome",
            },
        }
        on_disk = lines(log.path)
        assert types(on_disk)[-3:] == ["assistant/message", "tool/call", "tool/call"]
        assert sorted(log.held_results) == ["c1", "c2"]

        refused = await agent.run_turn("again", signal=AbortController().signal)
        assert refused.reason == outcome.reason  # still full: no turn starts
        assert lines(log.path) == on_disk

        disk.free()
        rig.server.push(text_reply("fine"))
        recovered = await agent.run_turn("again", signal=AbortController().signal)
    finally:
        log.close()
        await llm.aclose()

    assert recovered.reason == {"kind": "completed"}
    records = lines(log.path)
    results = [outcome_of(r) for r in records if r["type"] == "tool/result"]
    assert results == [("c1", None), ("c2", {"name": "AbortError", "code": "ABORTED"})]
    assert types(records)[len(on_disk) : len(on_disk) + 5] == [
        "tool/result",
        "tool/result",
        "step/end",
        "turn/end",
        "turn/start",
    ]
    assert rig.store.check("s1") == []


# -- repair of a turn closed without its results ---------------------------------------------------


def write(store: SessionStore, records: list[dict[str, object]], session_id: str = "s1") -> Path:
    path = store.path(session_id)
    path.parent.mkdir(parents=True)
    header = {"type": "session", "version": 0, "id": session_id, "created_at": 1}
    path.write_text("".join(json.dumps(r) + "\n" for r in [header, *records]))
    return path


CLOSED_WITHOUT_RESULTS = [
    event("turn/start", 0, turn=1),
    event("step/start", 1, turn=1, step=1),
    assistant(2, "r1_s0", "r1_s1"),
    call(3, "r1_s0"),
    event("step/end", 4, turn=1, step=1),
    event("turn/end", 5, turn=1, reason={"kind": "error", "error": {"message": "[Errno 28]"}}),
]
"""What a tether before issue 18 left on a full disk: the turn closed, two results missing."""


def test_a_turn_closed_without_its_results_gets_them_after_its_turn_end(
    store: SessionStore,
) -> None:
    write(store, CLOSED_WITHOUT_RESULTS)
    assert store.inspect("s1").remedy == "resume"

    with store.open("s1") as log:
        closers = log.repair.synthesized
        described = log.repair.describe()

    assert [outcome_of(e) for e in closers] == [
        ("r1_s0", {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}),
        ("r1_s1", {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}),
    ]
    assert closers[0].data["message"]["content"][0]["content"] == [
        {"type": "text", "text": OUTCOME_UNKNOWN_TEXT}
    ]
    assert described == [
        "gave turn 1 its missing tool results (1 TOOL_OUTCOME_UNKNOWN, 1 TOOL_NOT_STARTED)"
    ]
    assert store.check("s1") == []


# -- salvage ---------------------------------------------------------------------------------------


def test_salvage_cuts_at_a_nested_turn_and_moves_the_rest_to_a_side_file(
    store: SessionStore,
) -> None:
    path = write(
        store,
        [
            event("turn/start", 0, turn=1),
            event("turn/start", 1, turn=2),
            event("turn/end", 2, turn=2, reason={"kind": "completed"}),
        ],
    )
    data = path.read_bytes()
    keep = len(data.splitlines(keepends=True)[0]) + len(data.splitlines(keepends=True)[1])
    assert store.inspect("s1").remedy == "repair"

    report = store.salvage("s1")

    side = path.with_name("session.damaged-1.jsonl")
    assert report.describe() == [
        f"moved lines 3-4 ({len(data) - keep} bytes from offset {keep}) to {side}:"
        " seq 1 (turn/start): a turn/start while another turn is open",
        "closed interrupted turn 1",
    ]
    assert side.read_bytes() == data[keep:]
    assert types(lines(path)) == ["session", "turn/start", "turn/end"]
    assert store.check("s1") == []


def test_salvage_cuts_at_a_second_result_for_one_call(store: SessionStore) -> None:
    write(
        store,
        [
            event("turn/start", 0, turn=1),
            event("step/start", 1, turn=1, step=1),
            assistant(2, "c1"),
            call(3, "c1"),
            answer(4, "c1"),
            answer(5, "c1"),
            event("step/end", 6, turn=1, step=1),
        ],
    )

    report = store.salvage("s1")

    assert report.reason == 'seq 5 (tool/result): a second tool/result for "c1"'
    assert (report.first_line, report.last_line) == (7, 8)
    assert store.check("s1") == []


def test_salvage_of_a_healthy_session_changes_nothing(store: SessionStore) -> None:
    path = write(store, [event("turn/start", 0, turn=1), event("turn/end", 1, turn=1, reason={})])
    before = path.read_bytes()

    report = store.salvage("s1")

    assert (report.changed, report.describe()) == (False, [])
    assert path.read_bytes() == before


# -- sweep -----------------------------------------------------------------------------------------


def test_sweep_leaves_a_live_writer_alone_even_before_its_file_exists(
    store: SessionStore,
) -> None:
    live = store.create(session_id="live")  # locked, nothing published yet
    dead = store.path("dead").parent
    dead.mkdir(parents=True)
    (dead / "writer.lock").write_text("999999\n")
    (dead / ".session.jsonl.999999.tmp").write_text("{}\n")

    removed = store.sweep()

    assert removed == [dead / ".session.jsonl.999999.tmp", dead / "writer.lock", dead]
    assert (store.path("live").parent / "writer.lock").exists()
    live.turn_start(1)  # the live writer publishes as usual
    live.close()
    assert types(lines(store.path("live"))) == ["session", "turn/start"]


def test_check_all_names_a_session_by_the_id_its_directory_encodes(store: SessionStore) -> None:
    log = store.create(session_id="a/b c")
    log.append("todo/write", {"todos": []})
    log.close()
    store.path("a/b c").write_bytes(b"")

    (found,) = store.check_all()

    assert (found.id, [d.code for d in found.defects], found.remedy) == (
        "a/b c",
        ["EMPTY_FILE"],
        "repair",
    )
