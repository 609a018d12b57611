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

import stat
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar

from ...kernel.config_models import ConfigValue
from .agent_types import GENERAL_PURPOSE, INHERIT_MODEL, AgentCatalog, AgentType, tether_tool_names
from .readonly import READ_ONLY_TOOLS

if TYPE_CHECKING:
    from pydantic import BeforeValidator, Field

__all__ = ["DEFAULT_MAX_DEPTH", "AgentConfig", "SubagentsConfig", "build_catalog"]

DEFAULT_MAX_DEPTH = 3


def _names(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class AgentConfig(ConfigValue):
    """One type under `agents:` (Claude Code's `--agents` JSON shape). Its constructor
    validates as the mapping path does."""

    __pydantic_config__: ClassVar = {"extra": "forbid", "frozen": True, "populate_by_name": True}
    __config_validate__: ClassVar = True

    description: Annotated[str, Field(min_length=1)]
    prompt: str = ""
    tools: Annotated[list[str] | None, BeforeValidator(_names)] = None
    disallowed_tools: Annotated[
        list[str], BeforeValidator(_names), Field(alias="disallowedTools")
    ] = []  # noqa: RUF012 (a shared default: never mutated)
    model: str | None = None


class SubagentsConfig(ConfigValue):
    """See the module note. Its constructor validates as the mapping path does."""

    __pydantic_config__: ClassVar = {"extra": "forbid", "frozen": True}
    __config_validate__: ClassVar = True

    agents: dict[str, AgentConfig] = {}  # noqa: RUF012 (a shared default: never mutated)
    max_depth: Annotated[int, Field(ge=1, le=100)] = DEFAULT_MAX_DEPTH
    discover: bool = True
    project_dir: str | None = None
    user_agents_dir: str | None = None
    """Where user-level agent files are (default `~/.claude/agents`)."""
    read_only_tools: list[str] = sorted(READ_ONLY_TOOLS)  # a shared default: never mutated
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


def _agent_files(directory: Path) -> list[AgentType]:
    """`load_agent_dir(directory)`, whose reader is imported only when there is a directory to
    read (issue 36: a boot without agent files parses none); none when there is no directory to
    look at (missing, not a directory, or its stat fails), as `load_agent_dir` answers then."""
    try:
        is_directory = stat.S_ISDIR(directory.stat().st_mode)
    except OSError:
        return []
    if not is_directory:
        return []
    from .claude_agents import load_agent_dir

    return load_agent_dir(directory)


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
        layers.append(_agent_files(user_dir))
        if project_dir.resolve() != user_dir.resolve():
            layers.append(_agent_files(project_dir))
    layers.append([_configured(name, entry) for name, entry in config.agents.items()])
    return AgentCatalog(layers)
