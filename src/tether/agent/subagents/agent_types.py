"""Subagent types: what a `task` call's `subagent_type` names.

Owns `AgentType` (a frozen record: name, description, system prompt, tool list, model, where it
was defined), the built-in `general-purpose` type, Claude Code's tool names (so a type written
for Claude Code — `tools: Read, Grep, Bash` — names tether's tools), and `AgentCatalog`, the
types one plugin offers, in the precedence order Claude Code uses: types from the plugin config
over project files (`.claude/agents/*.md`) over user files (`~/.claude/agents/*.md`) over the
built-in type. Does not own reading files (`claude_agents.py`) or running a child (`child.py`).

A type's `tools` is None when it inherits every tool of its caller (Claude Code: no `tools`
line); otherwise it is the allow list installed on the child's scope. `disallowed_tools` is
subtracted (Claude Code's `disallowedTools`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from ...plugins.hooks.names import DEFAULT_TOOL_NAMES

__all__ = [
    "CLAUDE_TOOL_NAMES",
    "GENERAL_PURPOSE",
    "INHERIT_MODEL",
    "AgentCatalog",
    "AgentType",
    "tether_tool_names",
]

CLAUDE_TOOL_NAMES: Final[Mapping[str, str]] = MappingProxyType(
    {
        **DEFAULT_TOOL_NAMES,
        "Task": "task",
        "Agent": "task",
        "BashOutput": "job_output",
        "KillShell": "job_kill",
        "KillBash": "job_kill",
        "MultiEdit": "edit",
    }
)
"""Claude Code tool name → tether tool name; a name missing here is used as it is."""

INHERIT_MODEL: Final = frozenset({"inherit", "sonnet", "opus", "haiku"})
"""`model` values that mean "the caller's model": `inherit`, and Claude Code's aliases, which
name no model an OpenAI-compatible server serves."""


def tether_tool_names(names: Iterable[str]) -> tuple[str, ...]:
    """Claude Code names mapped to tether's (`Read` → `read`), order kept, duplicates dropped."""
    out: list[str] = []
    for name in names:
        mapped = CLAUDE_TOOL_NAMES.get(name, name)
        if mapped not in out:
            out.append(mapped)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class AgentType:
    """One subagent type. `source` says where it was defined, for messages (`built-in`,
    `tether.yml`, a file path). `model` None means the caller's model."""

    name: str
    description: str
    system_prompt: str
    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] = ()
    model: str | None = None
    source: str = "built-in"

    def describe_tools(self, visible: Collection[str]) -> str:
        """What a child of this type gets of the `visible` tools (the caller's): `*` for every
        one, else the names it keeps, comma-separated (`none` when it keeps none); a name the
        caller does not have now is left out, as the child's restriction leaves it out."""
        disallowed = [t for t in self.disallowed_tools if t in visible]
        if self.tools is None:
            return "*" + (f" except {', '.join(disallowed)}" if disallowed else "")
        kept = [t for t in self.tools if t in visible and t not in self.disallowed_tools]
        return ", ".join(kept) or "none"


GENERAL_PURPOSE: Final = AgentType(
    name="general-purpose",
    description=(
        "General-purpose agent for researching complex questions, searching for code, and "
        "executing multi-step tasks. When you are searching for a keyword or file and are not "
        "confident that you will find the right match in the first few tries, use this agent "
        "to perform the search for you."
    ),
    system_prompt=(
        "You are an agent for tether, a coding agent. Given the user's message, use the tools "
        "available to complete the task. Do what has been asked; nothing more, nothing less. "
        "When you complete the task, respond with a concise report of what you did and what you "
        "found: your final message is all the caller sees, so include every fact it needs "
        "(file paths, line numbers, command results)."
    ),
)


class AgentCatalog:
    """The types one `subagents` plugin offers, by name, in precedence order (see the module)."""

    __slots__ = ("_types",)

    def __init__(self, layers: Sequence[Iterable[AgentType]]) -> None:
        """`layers` from lowest to highest precedence: a later type replaces one of its name."""
        types: dict[str, AgentType] = {}
        for layer in layers:
            for agent_type in layer:
                types.pop(agent_type.name, None)
                types[agent_type.name] = agent_type
        self._types = dict(sorted(types.items()))

    def get(self, name: str) -> AgentType | None:
        return self._types.get(name)

    def names(self) -> list[str]:
        return list(self._types)

    def __iter__(self) -> Iterator[AgentType]:
        return iter(self._types.values())

    def __len__(self) -> int:
        return len(self._types)
