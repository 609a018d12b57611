"""What `tether run` and the stream-json session (`tether.cli.stream_input`) both make from the
flags: the system prompt, Claude Code's options, and what the `system`/`init` record says.

Owns `instructions_of`, `claude_options`, `open_flags_agent` (the flags as
`tether.cli.session.open_agent`'s arguments) and `run_info`; does not run turns.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from ..agent.api import Agent
from ..agent.claude_options import ClaudeOptions
from ..agent.events import AgentEvent
from ..agent.llm.config import LlmRoute
from ..agent.loop import default_system_prompt
from ..agent.subagents.config import SubagentsConfig, build_catalog
from ..plugins.permissions import Permissions
from .agent_flags import AgentFlags
from .session import open_agent

if TYPE_CHECKING:
    from .output import RunInfo  # imported where used: only a JSON output format needs it

__all__ = ["claude_options", "instructions_of", "open_flags_agent", "run_info"]


def instructions_of(flags: AgentFlags, cwd: Path) -> str | None:
    """The system prompt `--system-prompt` / `--append-system-prompt` make (None: tether's)."""
    if flags.append_system_prompt is None:
        return flags.system_prompt
    base = flags.system_prompt if flags.system_prompt is not None else default_system_prompt(cwd)
    return f"{base}\n\n{flags.append_system_prompt}"


def claude_options(flags: AgentFlags) -> ClaudeOptions:
    return ClaudeOptions(
        disallowed_tools=flags.disallow,
        tools=flags.tools,
        settings=flags.settings,
        add_dirs=flags.add_dirs,
        mcp_config=flags.mcp_config,
        strict_mcp_config=flags.strict_mcp_config,
    )


async def open_flags_agent(
    stack: AsyncExitStack,
    flags: AgentFlags,
    *,
    workdir: Path,
    resume: str | None,
    on_event: Callable[[AgentEvent], None] | None,
) -> Agent | None:
    """`open_agent` with what the command line says (None: it could not start, and said why)."""
    return await open_agent(
        stack,
        cwd=workdir,
        config=flags.config,
        model=flags.model,
        resume=resume,
        on_event=on_event,
        yolo=flags.yolo,
        allow=flags.allow,
        sandbox=flags.sandbox,
        context_window=flags.context_window,
        instructions=instructions_of(flags, workdir),
        max_steps=flags.max_turns,
        permission_mode=flags.permission_mode,
        claude_options=claude_options(flags),
    )


def run_info(agent: Agent, cwd: Path, flags: AgentFlags) -> RunInfo:
    """What the headless `system`/`init` record says: the tools the model is sent, the
    permission mode, the MCP servers and their status, where the key comes from, the subagent
    types and the model's price."""
    from .output import RunInfo

    ctx, loop = agent.context, agent.loop
    permissions = ctx.get("permissions")
    listing = getattr(ctx.get("mcp"), "servers", None)  # the mcp plugin, not imported here
    servers = listing() if callable(listing) else []
    tools = [str(schema["name"]) for schema in loop.offered_tools()]
    route = getattr(agent.llm.transport, "route", None)
    key_source = "none"
    if isinstance(route, LlmRoute) and route.api_key is not None:
        key_source = route.api_key_ref
    agents = build_catalog(SubagentsConfig(project_dir=str(cwd))).names() if "task" in tools else []
    return RunInfo(
        session_id=agent.session_id,
        model=agent.llm.model,
        cwd=str(cwd),
        tools=tools,
        permission_mode=permissions.mode if isinstance(permissions, Permissions) else "default",
        mcp_servers=[(str(server.name), str(server.status)) for server in servers],
        agents=agents,
        api_key_source=key_source,
        additional_directories=[str(path) for path in flags.add_dirs],
        price=agent.llm.price(),
        context_window=agent.context_window,
        max_output_tokens=route.max_tokens if isinstance(route, LlmRoute) else None,
    )
