"""The `subagents` plugin: the `task` tool and the agent types it offers.

Mount after `ToolRuntime` (and `jobs`, for background subagents):
`await ctx.plugin(tether.agent.subagents.plugin, {...})` (entry point `subagents`; config:
`SubagentsConfig`). The types are read once, at mount: the built-in `general-purpose`, then
`~/.claude/agents/*.md`, `<project_dir>/.claude/agents/*.md`, then `agents:` in the config (a
later one replaces an earlier one of the same name). `task`'s description lists, per type, the
tools its children get of the agent's tools *now* (a type's tool the agent lacks is left out; in
Code Mode, `run_code` and what its programs call): it is registered again whenever the tools
change (an MCP server connecting, a plugin's tools). Disposing the plugin unregisters `task`,
then aborts every background child and awaits its disposal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ...kernel import Context
from .config import SubagentsConfig, build_catalog
from .host import Host
from .task import description, task_tool

__all__ = ["Config", "apply", "inject", "name"]

name: Final = "subagents"
inject: Final = ("tools",)
Config = SubagentsConfig


def apply(ctx: Context, config: SubagentsConfig) -> None:
    """Load the types and register `task` (undone on dispose); renew it when the tools
    change, so that its description lists what children get now."""
    host = Host(ctx, build_catalog(config), config.max_depth, frozenset(config.read_only_tools))
    ctx.effect(host.aclose)  # recorded first: runs after `task` is gone
    ctx.provide("subagent-types", host.catalog)  # what `/agents` in `tether chat` lists
    current: list[str] = []  # the registered description
    removers: list[Callable[[], None]] = []
    renewing: list[bool] = []  # our own (un)registration's tools/change ends at once

    def publish() -> None:
        if renewing:
            return
        tools = ctx.tools
        text = description(host, tools.names(), code_mode=tools.runtime.mode == "code")
        if current == [text]:
            return
        renewing.append(True)
        try:
            while removers:
                removers.pop()()
            current[:] = [text]
            removers.append(tools.register(task_tool(host, text)))
        finally:
            renewing.clear()

    publish()
    ctx.on("tools/change", publish)
