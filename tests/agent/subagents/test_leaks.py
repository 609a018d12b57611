"""Ten thousand children leave nothing behind on the caller's long-lived signal.

Contract (issue 16 "Done when", DESIGN.md: derived signals detach when their scope ends): a
`task` call hands the child a per-call signal derived from the caller's; after 10,000 child runs
the caller's signal has exactly the listeners it had before, no child agent loop is still
alive, and no listener was added to the context's events.

The model here is an in-process `LlmTransport` double (a canned one-text-block stream) rather
than the scripted HTTP server: 10,000 HTTP round trips would take minutes on a shared 2-core
machine, and the signals under test are the same either way — the double still receives the
child's request signal and every chunk goes through `Llm`, the loop and the session log. The
session logs are real files (under /dev/shm when it exists, where fsync costs nothing).

The full 10,000 run on 3.13; 3.11 runs 1,000 of the same children (a listener or a loop left
behind by one child shows after one; the full count is 20 s of CPU per interpreter, and the CI
suite's time is CPU-bound: docs/development.md).
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path

import pytest

from tether import AbortController, AbortSignal, ToolExecutionInput
from tether.agent.llm.service import Llm
from tether.agent.llm.transport import LlmRequest
from tether.agent.loop import AgentLoop, AgentSettings
from tether.agent.messages import BlockEnd, BlockStart, Finish, StreamChunk, TextBlock, TextDelta
from tether.agent.session import SessionStore
from tether.agent.subagents import plugin as subagents_plugin
from tether.kernel import Context
from tether.tools import ToolRuntime

pytestmark = pytest.mark.slow

RUNS = 10_000 if sys.version_info >= (3, 13) else 1_000


class CannedTransport:
    """Answers every request with one text block, after checking the request's signal."""

    def __init__(self) -> None:
        self.requests = 0

    async def stream(
        self, request: LlmRequest, *, signal: AbortSignal
    ) -> AsyncGenerator[StreamChunk, None]:
        signal.throw_if_aborted()
        self.requests += 1
        yield BlockStart(0, "text")
        yield TextDelta(0, "done")
        yield BlockEnd(0, TextBlock("done"))
        yield Finish("stop")

    async def aclose(self) -> None:
        return None


@pytest.fixture
def sessions_root(tmp_path: Path) -> AsyncIterator[Path]:
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        with tempfile.TemporaryDirectory(dir=shm, prefix="tether-subagents-") as root:
            yield Path(root)
    else:
        yield tmp_path / "sessions"


async def test_ten_thousand_children_leave_the_callers_signal_as_they_found_it(
    sessions_root: Path, tmp_path: Path
) -> None:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(
        subagents_plugin, {"project_dir": str(tmp_path), "user_agents_dir": str(tmp_path / "u")}
    )
    transport = CannedTransport()
    log = SessionStore(sessions_root).create(cwd=tmp_path)
    parent = AgentLoop(
        tools=ctx.tools.runtime,
        llm=Llm(transport, provider="double", model="canned"),
        session=log,
        settings=AgentSettings(cwd=tmp_path),
        ctx=ctx,
    )
    caller = AbortController()
    events = {name: len(ctx.listeners(name)) for name in ("subagent/start", "subagent/end")}
    before = caller.signal.listener_count
    try:
        for index in range(RUNS):
            result = await ctx.tools.execute(
                ToolExecutionInput(
                    call_id=f"t{index}",
                    name="task",
                    arguments={
                        "description": "count",
                        "prompt": f"child {index}",
                        "subagent_type": "general-purpose",
                    },
                    signal=caller.signal,
                    agent=parent,
                )
            )
            assert not result.is_error, result
        assert transport.requests == RUNS
        assert caller.signal.listener_count == before
        assert {name: len(ctx.listeners(name)) for name in events} == events
        gc.collect()
        children = [o for o in gc.get_objects() if isinstance(o, AgentLoop) and o is not parent]
        assert children == []
    finally:
        log.close()
        await ctx.dispose()
