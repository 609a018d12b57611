"""The shared boot (`tether.agent.boot.start`): which built-ins an agent context gets."""

from __future__ import annotations

from pathlib import Path

from tether.agent.boot import BUILTINS, start
from tether.kernel.boot import resolve_plugin
from tether.kernel.config_models import is_pydantic_model


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


def test_the_builtins_whose_config_is_still_a_pydantic_model_are_these() -> None:
    """Issue 36: a default boot imports pydantic while one of these is mounted (its config is
    validated at every boot); the others' configs are dataclasses, made without pydantic when
    they take their defaults. Converting one shrinks this set; a new pydantic one grows it."""
    pydantic_configs = {
        plugin_id
        for plugin_id, module in BUILTINS
        if is_pydantic_model(getattr(resolve_plugin(module, entry_points=()), "Config", None))
    }

    assert pydantic_configs == {
        "shell",
        "fs",
    }
