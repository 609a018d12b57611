"""tether.agent.subagents: Claude Code's Task tool with strict cancellation (issue 16).

A `task` call starts a child agent loop of a named type (config, `.claude/agents/*.md`, or the
built-in `general-purpose`) in its own restricted scope and its own session log linked to the
caller's. The child's turn signal is the call's signal, and the call returns only once the child
is disposed. See docs/subagents.md.
"""

from ...core.lazy import lazy_names
from .agent_types import GENERAL_PURPOSE as GENERAL_PURPOSE
from .agent_types import AgentCatalog as AgentCatalog
from .agent_types import AgentType as AgentType
from .config import SubagentsConfig as SubagentsConfig
from .config import build_catalog as build_catalog
from .host import END_EVENT as END_EVENT
from .host import START_EVENT as START_EVENT
from .readonly import READ_ONLY_TOOLS as READ_ONLY_TOOLS
from .task import TASK as TASK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .claude_agents import load_agent_dir as load_agent_dir
    from .claude_agents import parse_agent_file as parse_agent_file


__getattr__, __dir__ = lazy_names(
    globals(), {"load_agent_dir": ".claude_agents", "parse_agent_file": ".claude_agents"}
)
"""`load_agent_dir` and `parse_agent_file`, from `claude_agents.py`, imported at their first
use: a boot without agent files reads none (issue 36)."""


__all__ = [
    "END_EVENT",
    "GENERAL_PURPOSE",
    "READ_ONLY_TOOLS",
    "START_EVENT",
    "TASK",
    "AgentCatalog",
    "AgentType",
    "SubagentsConfig",
    "build_catalog",
    "load_agent_dir",
    "parse_agent_file",
]
