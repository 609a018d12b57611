"""The read-only slash commands that say how the chat is set up: `/status`, `/config`, `/mcp`,
`/hooks`, `/agents`.

Owns what each prints, read from what the agent booted (its services: `permissions`, `fs`, `mcp`,
`subagent-types`) and from the files it read (tether's config files, Claude Code's settings
files) — never a second copy of the configuration. Changes nothing (`/permissions` and
`/add-dir` edit: `tether.cli.chat.rules`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from rich.console import Console

from ...agent.api import Agent
from ...agent.subagents.agent_types import AgentCatalog
from ...kernel import default_config_paths
from ...plugins.hooks.settings import claude_settings_paths, read_settings
from ...plugins.permissions import Permissions
from ..version import version_text
from ..visible import visible_markup

__all__ = ["show_agents", "show_config", "show_hooks", "show_mcp", "show_status"]


def _row(console: Console, key: str, value: str) -> None:
    console.print(f"  [bold]{key:<16}[/bold] {visible_markup(value)}", highlight=False)


def _mode(agent: Agent) -> str:
    service = agent.context.get("permissions")
    return service.mode if isinstance(service, Permissions) else "no permission rules mounted"


def _sandbox(agent: Agent) -> str:
    sandbox = getattr(agent.context.get("fs"), "sandbox", None)
    if not callable(sandbox):
        return "unknown (no fs plugin)"
    policy, _workspace = sandbox()
    describe = getattr(policy, "describe", None)
    return str(describe()) if callable(describe) else "unknown"


def _added_dirs(agent: Agent) -> list[str]:
    added = getattr(agent.context.get("fs"), "directories", ())
    return [str(path) for path in added] if isinstance(added, tuple) else []


def _key_source(provider: str) -> str:
    names = [name for name in os.environ if name.endswith("_API_KEY") and os.environ[name]]
    wanted = f"{provider.upper().replace('-', '_')}_API_KEY"
    if wanted in names:
        return f"${wanted}"
    return f"${names[0]}" if names else "none found in the environment"


def show_status(console: Console, agent: Agent) -> None:
    """`/status`: version, model and provider, session, workspace, mode, sandbox, API key."""
    llm = agent.llm
    provider = str(getattr(llm, "provider", "?"))
    _row(console, "version", version_text())
    _row(console, "model", f"{llm.model} ({provider})")
    _row(console, "session", f"{agent.session_id} ({agent.session.path})")
    _row(console, "cwd", str(agent.cwd))
    _row(console, "permission mode", _mode(agent))
    _row(console, "sandbox", _sandbox(agent))
    added = _added_dirs(agent)
    if added:
        _row(console, "added dirs", ", ".join(added))
    window = agent.context_window
    _row(console, "context window", f"{window:,} tokens" if window else "not managed")
    _row(console, "API key", _key_source(provider))


def _existing(paths: Iterable[Path]) -> list[str]:
    return [str(path) for path in paths if path.is_file()]


def show_config(console: Console, agent: Agent, config: Path | None) -> None:
    """`/config`: the files the configuration came from and what it amounts to."""
    files = _existing([config] if config is not None else default_config_paths(agent.cwd))
    _row(console, "tether config", ", ".join(files) or "none (built-in defaults)")
    settings = _existing(claude_settings_paths(agent.cwd))
    _row(console, "Claude settings", ", ".join(settings) or "none")
    _row(console, "model", agent.llm.model)
    _row(console, "permission mode", _mode(agent))
    service = agent.context.get("permissions")
    if isinstance(service, Permissions):
        for kind, rules in service.policy.listed().items():
            _row(console, f"{kind} rules", ", ".join(rules) or "none")
    _row(console, "sandbox", _sandbox(agent))
    _row(console, "tools", ", ".join(sorted(agent.context.tools.names())))
    console.print("  [dim]/permissions edits the rules, /add-dir adds a directory[/dim]")


def show_mcp(console: Console, agent: Agent) -> None:
    """`/mcp`: each configured MCP server, its status and tools."""
    servers = getattr(agent.context.get("mcp"), "servers", None)
    if not callable(servers):
        console.print(
            "[dim]no MCP servers configured (.mcp.json, --mcp-config or tether.yml: "
            "docs/mcp.md)[/dim]"
        )
        return
    for view in servers():
        error = f" · {view.error}" if view.error else ""
        console.print(
            f"  [bold]{visible_markup(view.name)}[/bold] {visible_markup(view.transport)} · "
            f"{visible_markup(str(view.status))}{visible_markup(error)}",
            highlight=False,
        )
        tools = ", ".join(view.tools) or "no tools"
        console.print(f"    [dim]{visible_markup(tools)}[/dim]", highlight=False)


def _hook_lines(document: object) -> list[tuple[str, str, str]]:
    hooks = document.get("hooks") if isinstance(document, Mapping) else None
    rows: list[tuple[str, str, str]] = []
    if not isinstance(hooks, Mapping):
        return rows
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else ():
            if not isinstance(group, Mapping):
                continue
            matcher = str(group.get("matcher") or "*")
            for hook in group.get("hooks") or ():
                if isinstance(hook, Mapping):
                    rows.append((str(event), matcher, str(hook.get("command", hook))))
    return rows


def show_hooks(console: Console, agent: Agent) -> None:
    """`/hooks`: the hooks of Claude Code's settings files, by event, and where each is."""
    found = False
    for path in claude_settings_paths(agent.cwd):
        if not path.is_file():
            continue
        try:
            rows = _hook_lines(read_settings(path))
        except (OSError, ValueError) as exc:
            console.print(
                f"  [yellow]{visible_markup(str(path))}: {visible_markup(str(exc))}[/yellow]"
            )
            continue
        for event, matcher, command in sorted(rows, key=lambda row: row[0]):
            found = True
            console.print(
                f"  [bold]{visible_markup(event)}[/bold] [dim]{visible_markup(matcher)}[/dim] "
                f"{visible_markup(command)} [dim]({visible_markup(str(path))})[/dim]",
                highlight=False,
            )
    if not found:
        console.print(
            "[dim]no hooks configured (.claude/settings.json, .claude/settings.local.json, "
            "~/.claude/settings.json: docs/claude-code.md)[/dim]"
        )


def show_agents(console: Console, agent: Agent) -> None:
    """`/agents`: the subagent types a `task` call can name, and where each is defined."""
    catalog = agent.context.get("subagent-types")
    if not isinstance(catalog, AgentCatalog):
        console.print("[dim]no subagents: the subagents plugin is not mounted[/dim]")
        return
    for kind in catalog:
        console.print(
            f"  [bold]{visible_markup(kind.name)}[/bold] {visible_markup(kind.description)} "
            f"[dim]({visible_markup(kind.source)})[/dim]",
            highlight=False,
        )
    console.print(
        "  [dim]add one: .claude/agents/NAME.md (project) or ~/.claude/agents/NAME.md[/dim]"
    )
