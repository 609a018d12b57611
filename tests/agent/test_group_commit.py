"""Group commit: the session log pays one fsync per durability point, not one per record.

Contract (`tether.agent.session.log` module docstring): every append is written at once; the
fsyncs happen before a tool body may start (every `tool/call` recorded so far, so the calls
that start together share one), before each model request, and when `turn/end` is appended.
A second turn of ten parallel calls therefore costs four fsyncs (request, the calls' batch,
request, turn end), a new session's first turn two more (its publication: the file and its
directory). No body ever runs before its `tool/call` is durable; a log that cannot sync there
runs no body, and the calls get `ABORTED_BEFORE_DISPATCH` results once the log recovers.
The fsyncs are counted by wrapping `os.fsync` as the session log calls it (the real fsync still
runs).
"""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tether import AbortController, ToolOutput, define_tool
from tether.agent.loop import AgentLoop
from tether.agent.session import SessionLog, SessionStore, check_events
from tether.agent.session import log as log_module
from tether.kernel import Context
from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply
from tether.tools import ToolRuntime
from tether.tools.execution import ToolRunContext

from .test_loop import Rig as LoopRig

TEN_CALLS = [(f"c{i}", "probe", "{}") for i in range(10)]


class NoArgs(BaseModel):
    pass


class Trace:
    """A `probe` tool that notes what was synced when its body started, and a trace of the
    log's fsyncs (the number of events on disk at each)."""

    def __init__(self, server: ScriptedModelServer) -> None:
        self.server = server
        self.log: SessionLog | None = None
        self.fsyncs: list[int] = []  # len(log.events) at each fsync
        self.bodies: dict[str, int] = {}  # call id -> fsyncs seen when its body started
        self.fail_sync: Callable[[SessionLog], bool] = lambda log: False

    def fsync(self, real: Callable[[int], None]) -> Callable[[int], None]:
        def traced(fd: int) -> None:
            log = self.log
            if log is not None and self.fail_sync(log):
                raise OSError(errno.EIO, os.strerror(errno.EIO))
            real(fd)
            self.fsyncs.append(0 if log is None else len(log.events))

        return traced

    async def probe(self, args: NoArgs, exec: ToolRunContext) -> str:
        self.bodies[exec.call_id] = len(self.fsyncs)
        return "ok"


@pytest.fixture
async def rig(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[Trace, AgentLoop]]:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    async with ScriptedModelServer() as server:
        trace = Trace(server)
        monkeypatch.setattr(log_module.os, "fsync", trace.fsync(os.fsync))
        ctx.tools.register(
            define_tool(
                name="probe",
                description="notes the fsyncs before it",
                parameters=NoArgs,
                output=ToolOutput(schema=str),
                execute=trace.probe,
                is_concurrency_safe=lambda args: True,
            )
        )
        loop_rig = LoopRig(server, ctx, SessionStore(tmp_path / "sessions"), tmp_path)
        agent = loop_rig.agent()
        trace.log = loop_rig.logs[0]
        try:
            yield trace, agent
        finally:
            await loop_rig.aclose()
            await ctx.dispose()


def call_seqs(log: SessionLog) -> dict[str, int]:
    return {str(e.data["call_id"]): e.seq for e in log.events if e.type == "tool/call"}


async def test_a_new_sessions_first_turn_of_ten_parallel_calls_costs_six_fsyncs(
    rig: tuple[Trace, AgentLoop],
) -> None:
    harness, agent = rig
    harness.server.push(tool_calls_reply(*TEN_CALLS), text_reply("done"))

    outcome = await agent.run_turn("probe ten times", signal=AbortController().signal)

    assert outcome.completed
    assert len(harness.fsyncs) == 6  # file + directory, request, the calls, request, turn end


async def test_a_second_turn_of_ten_parallel_calls_costs_four_fsyncs(
    rig: tuple[Trace, AgentLoop],
) -> None:
    harness, agent = rig
    harness.server.push(text_reply("hello"), tool_calls_reply(*TEN_CALLS), text_reply("done"))
    await agent.run_turn("hi", signal=AbortController().signal)
    before = len(harness.fsyncs)

    outcome = await agent.run_turn("probe ten times", signal=AbortController().signal)

    assert outcome.completed
    assert len(harness.fsyncs) - before == 4  # request, the calls, request, turn end


async def test_every_body_starts_after_its_tool_call_is_durable(
    rig: tuple[Trace, AgentLoop],
) -> None:
    harness, agent = rig
    harness.server.push(tool_calls_reply(*TEN_CALLS), text_reply("done"))

    await agent.run_turn("probe ten times", signal=AbortController().signal)

    assert harness.log is not None
    seqs = call_seqs(harness.log)
    for call_id, seen in harness.bodies.items():
        synced_events = harness.fsyncs[seen - 1]
        assert seqs[call_id] < synced_events, call_id
    assert sorted(harness.bodies) == sorted(c for c, _, _ in TEN_CALLS)


async def test_every_result_is_durable_before_the_next_model_request(
    rig: tuple[Trace, AgentLoop],
) -> None:
    harness, agent = rig
    harness.server.push(tool_calls_reply(*TEN_CALLS), text_reply("done"))
    requests_seen: list[int] = []
    real_stream = agent.llm.stream

    def stream(*args: Any, **kwargs: Any) -> Any:
        assert harness.log is not None
        requests_seen.append(harness.fsyncs[-1] if harness.fsyncs else 0)
        assert not harness.log.unsynced
        return real_stream(*args, **kwargs)

    agent.llm.stream = stream  # type: ignore[method-assign]

    await agent.run_turn("probe ten times", signal=AbortController().signal)

    assert harness.log is not None
    last_result = max(e.seq for e in harness.log.events if e.type == "tool/result")
    assert len(requests_seen) == 2
    assert requests_seen[1] > last_result


async def test_a_log_that_cannot_sync_before_the_bodies_start_runs_none_of_them(
    rig: tuple[Trace, AgentLoop],
) -> None:
    harness, agent = rig
    harness.server.push(tool_calls_reply(*TEN_CALLS))
    harness.fail_sync = lambda log: bool(log.events) and log.events[-1].type == "tool/call"

    outcome = await agent.run_turn("probe ten times", signal=AbortController().signal)

    assert outcome.reason["kind"] == "error"
    assert dict(outcome.reason["error"])["code"] == "SESSION_WRITE_FAILED"  # type: ignore[arg-type]
    assert harness.bodies == {}
    harness.fail_sync = lambda log: False
    assert harness.log is not None
    report = harness.log.recover()
    codes = [
        dict(e.data["error"])["code"]  # type: ignore[arg-type]
        for e in report.synthesized
        if e.type == "tool/result"
    ]
    assert codes == ["ABORTED_BEFORE_DISPATCH"] * 10
    assert check_events(harness.log.events) == []


# The last fsync's duration decides where `durable()` runs the next: inline, or in a thread.
PATHS = pytest.mark.parametrize(
    "last_fsync_ns", [0, 10**9], ids=["fast disk: inline", "slow disk: worker thread"]
)


@PATHS
async def test_tasks_that_need_a_log_durable_at_once_share_one_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, last_fsync_ns: int
) -> None:
    monkeypatch.setattr(log_module, "_last_fsync_ns", [last_fsync_ns])
    fsyncs: list[int] = []
    real = os.fsync
    monkeypatch.setattr(log_module.os, "fsync", lambda fd: (fsyncs.append(fd), real(fd))[1])
    log = SessionStore(tmp_path / "sessions").create(session_id="s1")
    log.turn_start(1)  # publishes the file (its own fsyncs)
    published = len(fsyncs)
    for i in range(10):
        log.tool_call(1, 1, f"c{i}", "probe", "{}")

    await asyncio.gather(*(log.durable() for _ in range(10)))

    assert (len(fsyncs) - published, log.unsynced) == (1, False)
    log.close()


@PATHS
async def test_a_failed_fsync_at_a_durability_point_fails_every_waiter_and_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, last_fsync_ns: int
) -> None:
    monkeypatch.setattr(log_module, "_last_fsync_ns", [last_fsync_ns])
    log = SessionStore(tmp_path / "sessions").create(session_id="s1")
    log.turn_start(1)
    log.tool_call(1, 1, "c1", "probe", "{}")

    def eio(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(log_module.os, "fsync", eio)
    outcomes = await asyncio.gather(log.durable(), log.durable(), return_exceptions=True)

    assert [type(o).__name__ for o in outcomes] == ["SessionWriteFailed"] * 2
    assert log.failure is not None
    log.close()
