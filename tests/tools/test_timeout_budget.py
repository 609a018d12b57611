"""A tool's `timeout_ms` needs an enforcer, and a sync body can honour it (issue 12 §6).

Contract:
- A tool that declares `timeout_ms`, registered while no timeout policy is declared
  (`ctx.tools.declare_timeout_policy()`, which `tether.plugins.timeout_policy` calls when
  mounted), logs one WARNING on the `tether.tools` logger naming it at its first call if there is
  still no policy then — once per tool name, whatever the mount order: mounting the policy after
  the tools is fine. Tools without a budget, and calls under a policy, log nothing.
- A sync body runs in a worker thread and cannot be interrupted; polling `exec.signal.aborted`
  there sees the timeout policy's abort, and when it returns the call ends `TOOL_TIMEOUT`.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pytest
from pydantic import BaseModel

from tether import ToolOutput, ToolRunContext, define_tool
from tether.kernel import Context
from tether.plugins import timeout_policy

from .conftest import call, raw_tool

WARNING = (
    'tool "slow" declares timeout_ms=50, but no timeout policy is mounted, so the budget does '
    "nothing; mount tether.plugins.timeout_policy"
)


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[tuple[str, int, str]]:
    return [(r.name, r.levelno, r.getMessage()) for r in caplog.records]


async def test_a_budget_without_a_policy_warns_once_at_the_first_call_naming_the_tool(
    ctx: Context, caplog: pytest.LogCaptureFixture
) -> None:
    ctx.tools.register(raw_tool("slow", timeout_ms=50))

    with caplog.at_level(logging.WARNING, logger="tether.tools"):
        await ctx.tools.execute(call("slow"))
        await ctx.tools.execute(call("slow", call_id="c2"))

    assert warnings_of(caplog) == [("tether.tools", logging.WARNING, WARNING)]


async def test_the_warning_also_comes_for_a_call_with_an_agent(
    ctx: Context, caplog: pytest.LogCaptureFixture
) -> None:
    ctx.tools.register(raw_tool("slow", timeout_ms=50))

    with caplog.at_level(logging.WARNING, logger="tether.tools"):
        await ctx.tools.execute(call("slow", agent=object()))

    assert warnings_of(caplog) == [("tether.tools", logging.WARNING, WARNING)]


async def test_a_tool_registered_again_is_not_warned_about_twice(
    ctx: Context, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="tether.tools"):
        remove = ctx.tools.register(raw_tool("slow", timeout_ms=50))
        await ctx.tools.execute(call("slow"))
        remove()
        ctx.tools.register(raw_tool("slow", timeout_ms=50))
        await ctx.tools.execute(call("slow"))

    assert warnings_of(caplog) == [("tether.tools", logging.WARNING, WARNING)]


@pytest.mark.parametrize("policy_first", [True, False], ids=["policy first", "tools first"])
async def test_with_the_policy_mounted_in_either_order_nothing_is_logged(
    ctx: Context, caplog: pytest.LogCaptureFixture, policy_first: bool
) -> None:
    with caplog.at_level(logging.WARNING, logger="tether.tools"):
        if policy_first:
            await ctx.plugin(timeout_policy)
        ctx.tools.register(raw_tool("slow", timeout_ms=50))
        if not policy_first:
            await ctx.plugin(timeout_policy)
        result = await ctx.tools.execute(call("slow"))

    assert result.to_json()["is_error"] is False
    assert warnings_of(caplog) == []


async def test_a_tool_without_a_budget_is_not_warned_about(
    ctx: Context, caplog: pytest.LogCaptureFixture
) -> None:
    ctx.tools.register(raw_tool("quick"))

    with caplog.at_level(logging.WARNING, logger="tether.tools"):
        await ctx.tools.execute(call("quick"))

    assert warnings_of(caplog) == []


async def test_a_tool_registered_after_the_policy_is_disposed_is_warned_about(
    ctx: Context, caplog: pytest.LogCaptureFixture
) -> None:
    handle = await ctx.plugin(timeout_policy)
    await handle.dispose()
    ctx.tools.register(raw_tool("slow", timeout_ms=50))

    with caplog.at_level(logging.WARNING, logger="tether.tools"):
        await ctx.tools.execute(call("slow"))

    assert warnings_of(caplog) == [("tether.tools", logging.WARNING, WARNING)]


class NoArgs(BaseModel):
    pass


async def test_a_sync_body_polling_its_signal_sees_the_timeout_and_the_call_is_a_tool_timeout(
    ctx: Context,
) -> None:
    await ctx.plugin(timeout_policy)
    seen: list[tuple[bool, bool]] = []

    def crunch(args: NoArgs, exec: ToolRunContext) -> str:
        backstop = time.monotonic() + 60.0  # only if the abort never shows: the test then fails
        while not exec.signal.aborted and time.monotonic() < backstop:
            time.sleep(0.002)
        seen.append((exec.signal.aborted, threading.current_thread() is threading.main_thread()))
        return "stopped"

    ctx.tools.register(
        define_tool(
            name="crunch",
            description="polls its signal",
            parameters=NoArgs,
            output=ToolOutput(schema=str),
            execute=crunch,
            timeout_ms=50,
        )
    )

    result = await ctx.tools.execute(call("crunch"))

    assert seen == [(True, False)]
    expected: dict[str, Any] = {
        "is_error": True,
        "content": [{"type": "text", "text": "Error: tool call timed out after 50ms"}],
        "error": {
            "message": "tool call timed out after 50ms",
            "info": {"name": "ToolTimeoutError", "code": "TOOL_TIMEOUT"},
        },
    }
    assert result.to_json() == expected
