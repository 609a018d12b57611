"""The spill policy (spec capabilities §1.6.8) with the real bash and fs tools and a real session.

Contract:
- An accepted, plain-text, top-level result over `max_inline_bytes` (UTF-8) from a tool other
  than `read` is saved beside the session (`<session dir>/spill/<call id>.txt`, the full text)
  and replaced by head + `\\n...\\n` + tail + blank line + `(Omitted <N> bytes. Full formatted
  result stored at: <path>. Use read with offset/limit, or grep this path to search within
  it.)`, the whole at most `max_inline_bytes`; cuts fall on character boundaries.
- It runs after the rest of the post-execute waterfall (it sees their decision).
- Kept as it is: at or under the cap, `read` results, no session owner, the notice alone does
  not fit, storing fails (one WARNING), the policy disabled (`max_inline_bytes: null`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from tether import AbortController
from tether.agent.session import SessionLog, SessionStore
from tether.kernel import Context
from tether.plugins.fs import plugin as fs_plugin
from tether.plugins.shell import bash as bash_plugin
from tether.plugins.shell import plugin as shell_plugin
from tether.plugins.spill import LOCAL_HINT, Spilled
from tether.plugins.spill import policy as spill_policy
from tether.plugins.spill.policy import bounded_text
from tether.tools import (
    Accept,
    PostToolDecision,
    ToolExecution,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolRuntime,
)

from ..hooks._support import FakeAgent, call_bash

SEQ = "seq 1 3000"  # 13,893 bytes of output


def text_of(result: ToolExecutionResult) -> str:
    return "".join(str(block.get("text", "")) for block in result.content)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def session(tmp_path: Path, project: Path) -> Iterator[SessionLog]:
    log = SessionStore(tmp_path / "sessions").create(cwd=project)
    log.turn_start(1)
    yield log
    log.close()


@pytest.fixture
async def ctx(project: Path) -> AsyncIterator[Context]:
    context = Context()
    await context.plugin(ToolRuntime)
    await context.plugin(shell_plugin, {"grace_ms": 200, "cwd": str(project)})
    await context.plugin(bash_plugin, {"enable_run_in_background": False})
    await context.plugin(fs_plugin, {"root": str(project)})
    yield context
    await context.dispose()


def spill_dir(session: SessionLog) -> Path:
    return session.path.parent / "spill"


# -- the preview ----------------------------------------------------------------------------------


def test_the_preview_is_head_elision_tail_and_the_notice_within_the_cap() -> None:
    where = Spilled("/s/c1.txt", "Hint.")
    notice = "(Omitted 100 bytes. Full formatted result stored at: /s/c1.txt. Hint.)"

    bounded = bounded_text("0123456789" * 10, len(notice) + len("\n...\n\n\n") + 10, where)

    assert bounded == (
        "01234\n...\n56789\n\n(Omitted 90 bytes. Full formatted result stored at: /s/c1.txt. Hint.)"
    )


def test_cuts_fall_on_character_boundaries_and_never_exceed_the_cap() -> None:
    where = Spilled("/s/c1.txt", "Hint.")
    cap = len("(Omitted 200 bytes. Full formatted result stored at: /s/c1.txt. Hint.)") + 7 + 9

    bounded = bounded_text("é" * 100, cap, where)

    assert bounded == (
        "éé\n...\néé\n\n(Omitted 192 bytes. Full formatted result stored at: /s/c1.txt. Hint.)"
    )
    assert len(bounded.encode()) <= cap


def test_nothing_is_made_when_the_notice_alone_does_not_fit() -> None:
    assert bounded_text("x" * 500, 60, Spilled("/s/c1.txt", "Hint.")) is None


# -- the post-execute listener --------------------------------------------------------------------


async def test_a_big_top_level_result_is_saved_and_replaced_by_its_preview(
    ctx: Context, session: SessionLog
) -> None:
    agent = FakeAgent(session)
    original = text_of(await call_bash(ctx, SEQ, agent=agent, call_id="c0"))
    await ctx.plugin(spill_policy, {"max_inline_bytes": 2000})

    result = await call_bash(ctx, SEQ, agent=agent, call_id="c1")

    saved = spill_dir(session) / "c1.txt"
    assert saved.read_text() == original
    assert text_of(result) == bounded_text(original, 2000, Spilled(str(saved), LOCAL_HINT))
    assert len(text_of(result).encode()) <= 2000
    assert text_of(result).endswith(
        f" bytes. Full formatted result stored at: {saved}. Use read with offset/limit, or grep"
        " this path to search within it.)"
    )


async def test_a_result_at_the_cap_is_kept(ctx: Context, session: SessionLog) -> None:
    agent = FakeAgent(session)
    original = text_of(await call_bash(ctx, SEQ, agent=agent, call_id="c0"))
    await ctx.plugin(spill_policy, {"max_inline_bytes": len(original.encode())})

    result = await call_bash(ctx, SEQ, agent=agent, call_id="c1")

    assert text_of(result) == original
    assert not spill_dir(session).exists()


async def test_it_sees_what_the_rest_of_the_post_execute_waterfall_decided(
    ctx: Context, session: SessionLog
) -> None:
    await ctx.plugin(spill_policy, {"max_inline_bytes": 500})
    big = "y" * 5000

    async def enlarge(
        exec: ToolExecution,
        result: ToolExecutionResult,
        next: Callable[[], Awaitable[PostToolDecision]],
    ) -> PostToolDecision:
        return Accept(content=[{"type": "text", "text": big}])

    ctx.on("tools/post-execute", enlarge)

    result = await call_bash(ctx, "echo small", agent=FakeAgent(session))

    assert (spill_dir(session) / "c1.txt").read_text() == big
    assert text_of(result).startswith("yyy")
    assert len(text_of(result).encode()) <= 500


async def test_read_results_are_never_spilled(
    ctx: Context, session: SessionLog, project: Path
) -> None:
    (project / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 1501)))
    await ctx.plugin(spill_policy, {"max_inline_bytes": 2000})

    result: ToolExecutionResult = await ctx.tools.execute(
        ToolExecutionInput(
            call_id="c1",
            name="read",
            arguments={"file_path": "big.txt"},
            signal=AbortController().signal,
            agent=FakeAgent(session),
        )
    )

    assert "line 1500" in text_of(result)
    assert len(text_of(result).encode()) > 2000
    assert not spill_dir(session).exists()


async def test_a_call_without_a_session_owner_keeps_its_result(ctx: Context) -> None:
    original = text_of(await call_bash(ctx, SEQ, call_id="c0"))
    await ctx.plugin(spill_policy, {"max_inline_bytes": 2000})

    result = await call_bash(ctx, SEQ)

    assert text_of(result) == original


async def test_a_cap_too_small_for_the_notice_keeps_the_result_and_stores_nothing(
    ctx: Context, session: SessionLog
) -> None:
    agent = FakeAgent(session)
    original = text_of(await call_bash(ctx, SEQ, agent=agent, call_id="c0"))
    await ctx.plugin(spill_policy, {"max_inline_bytes": 50})

    result = await call_bash(ctx, SEQ, agent=agent)

    assert text_of(result) == original
    assert not spill_dir(session).exists()


async def test_a_store_failure_keeps_the_result_with_one_warning(
    ctx: Context, session: SessionLog, caplog: pytest.LogCaptureFixture
) -> None:
    agent = FakeAgent(session)
    original = text_of(await call_bash(ctx, SEQ, agent=agent, call_id="c0"))
    spill_dir(session).write_text("a file where the directory should be")
    await ctx.plugin(spill_policy, {"max_inline_bytes": 2000})

    with caplog.at_level(logging.WARNING, logger="tether.spill"):
        result = await call_bash(ctx, SEQ, agent=agent)

    assert text_of(result) == original
    assert [r.getMessage() for r in caplog.records if r.name == "tether.spill"] == [
        'tool "bash" (c1): the full result could not be stored, so it is kept inline: '
        f"[Errno 17] File exists: '{spill_dir(session)}'"
    ]


async def test_a_disabled_policy_changes_nothing(ctx: Context, session: SessionLog) -> None:
    agent = FakeAgent(session)
    original = text_of(await call_bash(ctx, SEQ, agent=agent, call_id="c0"))
    await ctx.plugin(spill_policy, {"max_inline_bytes": None})

    result = await call_bash(ctx, SEQ, agent=agent)

    assert text_of(result) == original
    assert not spill_dir(session).exists()
