"""Which children may run side by side: the read-only tool set and the `task` classifier.

Owns `READ_ONLY_TOOLS`, the tools that change nothing outside the agent (reading files,
searching, fetching and searching the web, listing jobs), and `read_only_type`: a type whose
tool list is given and names only those tools. A type that inherits every tool (no `tools`
list) is never read-only, nor is one that may start children of its own (`task`), run commands,
edit files, write todos, or call MCP or Code Mode tools, whose effects tether cannot know.

The plugin's `read_only_tools` config replaces the set (list the defaults too when adding a
plugin's own read-only tool).

Spec §1.6.5: the `task` call is `parallel` only when its classifier returns exactly True; so
several `task` calls of read-only types in one step run concurrently, any other is exclusive.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from .agent_types import AgentType

__all__ = ["READ_ONLY_TOOLS", "read_only_type"]

READ_ONLY_TOOLS: Final = frozenset(
    {"read", "grep", "glob", "ls", "web_fetch", "web_search", "job_list", "todo_read"}
)
"""Tools that observe and never change anything: a child limited to them is safe in parallel."""


def read_only_type(agent_type: AgentType, read_only: Collection[str] = READ_ONLY_TOOLS) -> bool:
    """Whether every tool the type's children may use is in `read_only` (the plugin's
    `read_only_tools`, by default `READ_ONLY_TOOLS`)."""
    if agent_type.tools is None:
        return False
    allowed = [t for t in agent_type.tools if t not in agent_type.disallowed_tools]
    return all(name in read_only for name in allowed)
