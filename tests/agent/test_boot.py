"""The shared boot (`tether.agent.boot.start`): which built-ins an agent context gets."""

from __future__ import annotations

from pathlib import Path

from tether.agent.boot import start


async def test_an_agent_context_offers_the_task_tool(tmp_path: Path) -> None:
    ctx = await start(cwd=tmp_path, home=tmp_path / "home", agent=True)
    try:
        assert ctx.tools.get("task") is not None
    finally:
        await ctx.dispose()


async def test_without_leaves_a_builtin_out(tmp_path: Path) -> None:
    ctx = await start(
        cwd=tmp_path, home=tmp_path / "home", agent=True, without=frozenset({"subagents"})
    )
    try:
        assert ctx.tools.get("task") is None
        assert ctx.tools.get("bash") is not None
    finally:
        await ctx.dispose()
