"""The durable log of Code Mode sub-calls (spec §8.3 step 5, tool-runtime §7.6), with the real
sandbox and a real session log.

Contract:
- With an owning agent, each sub-call appends `tool/code-dispatch-start` when it starts and
  `tool/code-dispatch` when it commits (`parent_call_id` = the `run_code` call), both fsynced
  before `append` returns, like a top-level call's `tool/call` and `tool/result`.
- The logged content goes through the `tools/code-dispatch-log` waterfall (base: the settled
  content); only the durable copy changes, never what the program or `tools/result` saw.
- A listener that raises is contained: the original content is logged, with one WARNING.
- Appends keep commit order, and `run_code` returns only after every child event is logged.
- The spill policy's listener bounds the durable copy of a big plain-text sub-call result.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path

import pytest

from tether.agent.session import SessionLog, SessionStore
from tether.plugins.spill import LOCAL_HINT, Spilled
from tether.plugins.spill import policy as spill_policy
from tether.plugins.spill.policy import bounded_text
from tether.tools import ContentBlock
from tether.tools.code_dispatch import CODE_DISPATCH_LOG, CodeDispatchLog

from ..hooks._support import FakeAgent
from ._support import text_of
from .conftest import MakeLab

NextContent = Callable[[], Awaitable[Sequence[ContentBlock]]]


@pytest.fixture
def session(tmp_path: Path, project: Path) -> Iterator[SessionLog]:
    log = SessionStore(tmp_path / "sessions").create(cwd=project)
    log.turn_start(1)
    yield log
    log.close()


def children(session: SessionLog) -> list[tuple[str, dict[str, object]]]:
    return [
        (e.type, dict(e.data)) for e in session.events if e.type.startswith("tool/code-dispatch")
    ]


async def test_each_sub_call_is_logged_as_a_child_of_the_run_code_call(
    make_lab: MakeLab, session: SessionLog
) -> None:
    lab = await make_lab()

    await lab.run("await tools.nap({'ms': 1, 'label': 'a'})", agent=FakeAgent(session))

    assert children(session) == [
        (
            "tool/code-dispatch-start",
            {
                "root_call_id": "rc",
                "parent_call_id": "rc",
                "sub_call_id": "rc:code:1",
                "name": "nap",
                "arguments": {"ms": 1, "label": "a"},
            },
        ),
        (
            "tool/code-dispatch",
            {
                "root_call_id": "rc",
                "parent_call_id": "rc",
                "sub_call_id": "rc:code:1",
                "name": "nap",
                "arguments": {"ms": 1, "label": "a"},
                "is_error": False,
                "content": [{"type": "text", "text": "slept a"}],
            },
        ),
    ]


async def test_child_events_are_fsynced_before_append_returns(
    make_lab: MakeLab, session: SessionLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab = await make_lab()
    synced_at: list[int] = []  # the seq about to be appended when an fsync ran
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced_at.append(session.next_seq)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)

    await lab.run(
        "await tools.nap({'ms': 1})\nawait tools.nap({'ms': 1})", agent=FakeAgent(session)
    )

    logged = [e.seq for e in session.events if e.type.startswith("tool/code-dispatch")]
    assert len(logged) == 4
    assert [seq for seq in logged if seq in synced_at] == logged


async def test_a_listener_reshapes_only_the_durable_copy(
    make_lab: MakeLab, session: SessionLog
) -> None:
    lab = await make_lab()
    seen: list[CodeDispatchLog] = []
    agent = FakeAgent(session)

    async def shorten(dispatch: CodeDispatchLog, next: NextContent) -> Sequence[ContentBlock]:
        seen.append(dispatch)
        content = await next()
        return [{"type": "text", "text": f"{len(content)} block(s) from {dispatch.name}"}]

    lab.ctx.on(CODE_DISPATCH_LOG, shorten)

    result = await lab.run("return await tools.nap({'ms': 1, 'label': 'a'})", agent=agent)

    assert text_of(result) == "slept a"
    ((_, published),) = [(e, r) for e, r in lab.results if e.call_id == "rc:code:1"]
    assert text_of(published) == "slept a"
    assert children(session)[1][1]["content"] == [{"type": "text", "text": "1 block(s) from nap"}]
    (dispatch,) = seen
    assert (dispatch.root_call_id, dispatch.parent_call_id, dispatch.sub_call_id) == (
        "rc",
        "rc",
        "rc:code:1",
    )
    assert (dispatch.name, dispatch.arguments, dispatch.is_error) == (
        "nap",
        {"ms": 1, "label": "a"},
        False,
    )
    assert dispatch.content == [{"type": "text", "text": "slept a"}]
    assert dispatch.agent is agent


async def test_a_failed_sub_call_is_shaped_with_is_error_set(
    make_lab: MakeLab, session: SessionLog
) -> None:
    lab = await make_lab()
    seen: list[bool] = []

    async def watch(dispatch: CodeDispatchLog, next: NextContent) -> Sequence[ContentBlock]:
        seen.append(dispatch.is_error)
        return await next()

    lab.ctx.on(CODE_DISPATCH_LOG, watch)

    await lab.run(
        "try:\n    await tools.nap({'ms': 'soon'})\nexcept ToolCallError:\n    pass",
        agent=FakeAgent(session),
    )

    assert seen == [True]
    logged = children(session)[1][1]
    assert logged["is_error"] is True
    assert logged["error"]["info"]["code"] == "INVALID_ARGS"  # type: ignore[index]


async def test_a_raising_listener_logs_the_original_content_with_a_warning(
    make_lab: MakeLab, session: SessionLog, caplog: pytest.LogCaptureFixture
) -> None:
    lab = await make_lab()

    async def broken(dispatch: CodeDispatchLog, next: NextContent) -> Sequence[ContentBlock]:
        raise RuntimeError("shaper broke")

    lab.ctx.on(CODE_DISPATCH_LOG, broken)

    with caplog.at_level(logging.WARNING, logger="tether.tools"):
        result = await lab.run(
            "return await tools.nap({'ms': 1, 'label': 'a'})", agent=FakeAgent(session)
        )

    assert text_of(result) == "slept a"
    assert children(session)[1][1]["content"] == [{"type": "text", "text": "slept a"}]
    assert [r.getMessage() for r in caplog.records if r.name == "tether.tools"] == [
        'tool "nap" (rc:code:1): tools/code-dispatch-log listener failed; the original content'
        " is logged: shaper broke"
    ]


async def test_a_listener_answering_something_other_than_content_blocks_is_contained(
    make_lab: MakeLab, session: SessionLog, caplog: pytest.LogCaptureFixture
) -> None:
    lab = await make_lab()

    async def wrong(dispatch: CodeDispatchLog, next: NextContent) -> object:
        return "not a list of blocks"

    lab.ctx.on(CODE_DISPATCH_LOG, wrong)

    with caplog.at_level(logging.WARNING, logger="tether.tools"):
        await lab.run("await tools.nap({'ms': 1, 'label': 'a'})", agent=FakeAgent(session))

    assert children(session)[1][1]["content"] == [{"type": "text", "text": "slept a"}]
    assert [r.getMessage() for r in caplog.records if r.name == "tether.tools"] == [
        'tool "nap" (rc:code:1): tools/code-dispatch-log listener failed; the original content'
        " is logged: result content must be a list of content blocks (dicts)"
    ]


async def test_appends_keep_commit_order_and_finish_before_run_code_returns(
    make_lab: MakeLab, session: SessionLog
) -> None:
    lab = await make_lab()
    second_shaped = asyncio.Event()

    async def slow_first(dispatch: CodeDispatchLog, next: NextContent) -> Sequence[ContentBlock]:
        if dispatch.sub_call_id == "rc:code:1":
            await second_shaped.wait()  # the first is shaped only after the second
        else:
            second_shaped.set()
        return await next()

    lab.ctx.on(CODE_DISPATCH_LOG, slow_first)

    await lab.run(
        "import asyncio\n"
        "await asyncio.gather(\n"
        "    tools.nap({'ms': 1, 'label': 'a'}), tools.nap({'ms': 1, 'label': 'b'})\n"
        ")",
        agent=FakeAgent(session),
    )

    assert [
        (kind, data["sub_call_id"])
        for kind, data in children(session)
        if kind == "tool/code-dispatch"
    ] == [("tool/code-dispatch", "rc:code:1"), ("tool/code-dispatch", "rc:code:2")]


async def test_without_an_agent_no_listener_runs(make_lab: MakeLab) -> None:
    lab = await make_lab()
    seen: list[str] = []

    async def watch(dispatch: CodeDispatchLog, next: NextContent) -> Sequence[ContentBlock]:
        seen.append(dispatch.sub_call_id)
        return await next()

    lab.ctx.on(CODE_DISPATCH_LOG, watch)

    result = await lab.run("return await tools.nap({'ms': 1, 'label': 'a'})")

    assert text_of(result) == "slept a"
    assert seen == []


async def test_the_spill_policy_bounds_the_durable_copy_of_a_big_sub_call_result(
    make_lab: MakeLab, session: SessionLog
) -> None:
    lab = await make_lab()
    await lab.ctx.plugin(spill_policy, {"max_inline_bytes": 2000})

    result = await lab.run(
        "r = await tools.bash({'command': 'seq 1 3000', 'description': 'count'})\n"
        "return r['stdout']['text'].split()[-1]",
        agent=FakeAgent(session),
    )

    assert text_of(result) == "3000"
    ((_, published),) = [(e, r) for e, r in lab.results if e.call_id == "rc:code:1"]
    original = text_of(published)  # nested: the post-execute listener leaves it whole
    assert original.split()[-1] == "3000"
    saved = session.path.parent / "spill" / "rc_code_1.txt"
    assert saved.read_text() == original
    logged = children(session)[1][1]
    assert logged["content"] == [
        {"type": "text", "text": bounded_text(original, 2000, Spilled(str(saved), LOCAL_HINT))}
    ]
