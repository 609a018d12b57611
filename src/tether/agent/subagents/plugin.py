"""The `subagents` plugin: the `task` tool and the agent types it offers.

Mount after `ToolRuntime` (and `jobs`, for background subagents):
`await ctx.plugin(tether.agent.subagents.plugin, {...})` (entry point `subagents`; config:
`SubagentsConfig`). The types are read once, at mount: the built-in `general-purpose`, then
`~/.claude/agents/*.md`, `<project_dir>/.claude/agents/*.md`, then `agents:` in the config (a
later one replaces an earlier one of the same name). Disposing the plugin unregisters `task`,
then aborts every background child and awaits its disposal.
"""

from __future__ import annotations

from typing import Final

from ...kernel import Context
from .child import Host
from .config import SubagentsConfig, build_catalog
from .task import task_tool

__all__ = ["Config", "apply", "inject", "name"]

name: Final = "subagents"
inject: Final = ("tools",)
Config = SubagentsConfig


def apply(ctx: Context, config: SubagentsConfig) -> None:
    """Load the types and register `task` (undone on dispose)."""
    host = Host(ctx, build_catalog(config), config.max_depth, frozenset(config.read_only_tools))
    ctx.effect(host.aclose)  # recorded first: runs after `task` is gone
    ctx.tools.register(task_tool(host))
