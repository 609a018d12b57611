"""The `subagents` plugin's config, and the catalog of types it builds from config and files.

```yaml
plugins:
  - id: subagents
    name: subagents
    config:
      max_depth: 3                 # deepest delegation: a depth-3 agent cannot start a child
      agents:                      # types defined here win over files of the same name
        reviewer:
          description: Reviews a diff for bugs. Use after editing code.
          prompt: You are a careful reviewer ...
          tools: [read, grep, glob]  # or "Read, Grep, Glob"; omitted = every tool
          model: deepseek-chat       # omitted or inherit = the caller's model
      discover: true               # read .claude/agents/*.md (project, then ~/.claude/agents)
      project_dir: .               # the CLI sets the workspace
      read_only_tools: [read, grep, glob, ls, web_fetch, web_search, job_list, todo_read]
```

Owns: validating that (`SubagentsConfig`, `AgentConfig`) and `build_catalog`: the built-in
`general-purpose`, then user files, then project files, then config (each later layer replaces a
type of the same name). Does not own parsing files (`claude_agents.py`).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .agent_types import GENERAL_PURPOSE, INHERIT_MODEL, AgentCatalog, AgentType, tether_tool_names
from .claude_agents import load_agent_dir
from .readonly import READ_ONLY_TOOLS

__all__ = ["DEFAULT_MAX_DEPTH", "AgentConfig", "SubagentsConfig", "build_catalog"]

DEFAULT_MAX_DEPTH = 3


def _names(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class AgentConfig(BaseModel):
    """One type under `agents:` (Claude Code's `--agents` JSON shape)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    description: str = Field(min_length=1)
    prompt: str = ""
    tools: list[str] | None = None
    disallowed_tools: list[str] = Field(default_factory=list, alias="disallowedTools")
    model: str | None = None

    @field_validator("tools", "disallowed_tools", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return _names(value)


class SubagentsConfig(BaseModel):
    """See the module note."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agents: dict[str, AgentConfig] = Field(default_factory=dict)
    max_depth: int = Field(default=DEFAULT_MAX_DEPTH, ge=1, le=100)
    discover: bool = True
    project_dir: str | None = None
    user_agents_dir: str | None = None
    """Where user-level agent files are (default `~/.claude/agents`)."""
    read_only_tools: list[str] = Field(default_factory=lambda: sorted(READ_ONLY_TOOLS))
    """Tools that change nothing: children limited to them run in parallel (`readonly.py`)."""


def _configured(name: str, entry: AgentConfig) -> AgentType:
    model = entry.model
    return AgentType(
        name=name,
        description=entry.description.strip(),
        system_prompt=entry.prompt.strip(),
        tools=None if entry.tools is None else tether_tool_names(entry.tools),
        disallowed_tools=tether_tool_names(entry.disallowed_tools),
        model=None if model is None or model in INHERIT_MODEL else model,
        source=f'config "agents.{name}"',
    )


def build_catalog(config: SubagentsConfig, *, home: Path | None = None) -> AgentCatalog:
    """The types `config` offers (see the module note); files are read now, once."""
    layers: list[list[AgentType]] = [[GENERAL_PURPOSE]]
    if config.discover:
        user_dir = (
            Path(config.user_agents_dir).expanduser()
            if config.user_agents_dir is not None
            else (home or Path.home()) / ".claude" / "agents"
        )
        project = Path(config.project_dir) if config.project_dir else Path.cwd()
        project_dir = project / ".claude" / "agents"
        layers.append(load_agent_dir(user_dir))
        if project_dir.resolve() != user_dir.resolve():
            layers.append(load_agent_dir(project_dir))
    layers.append([_configured(name, entry) for name, entry in config.agents.items()])
    return AgentCatalog(layers)
