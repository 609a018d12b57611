"""Claude Code's tool vocabulary, so scripts written for Claude Code run unchanged.

Owns the default name map (Claude Code name → tether tool name) and `ToolNames`, which both the
hook bridge (matchers, `tool_name` in payloads) and the permission rules (`Bash(...)`) use, and
`claude_tool_input`, the arguments as those scripts expect them (and `tether_tool_input`, the way
back, for an input a hook or an application changed). Our tools already use Claude
Code's argument names (`command`, `file_path`, `content`, `old_string`, `new_string`,
`replace_all`, `offset`, `limit`, `pattern`, `path`, `glob`, `-A`/`-B`/`-C`, `url`, `todos`);
the differences are mapped here:

    bash        timeout_ms → timeout (both in milliseconds)
    web_search  queries (a list) → query (the first one); `queries` is kept

Every other argument is passed through unchanged. A name missing from the map is used as is on
both sides (`job_output` is `job_output`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, cast

from ...core.json import JsonValue

__all__ = ["DEFAULT_TOOL_NAMES", "ToolNames", "claude_tool_input", "tether_tool_input"]

DEFAULT_TOOL_NAMES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "Bash": "bash",
        "Read": "read",
        "Write": "write",
        "Edit": "edit",
        "WebFetch": "web_fetch",
        "WebSearch": "web_search",
        "TodoWrite": "todo_write",
        "Grep": "grep",
        "Glob": "glob",
        "ExitPlanMode": "exit_plan_mode",
    }
)
"""Claude Code tool name → tether tool name."""


@dataclass(frozen=True, slots=True)
class ToolNames:
    """A two-way name map; `claude_to_tether` defaults to `DEFAULT_TOOL_NAMES`."""

    claude_to_tether: Mapping[str, str] = field(default_factory=lambda: DEFAULT_TOOL_NAMES)
    _reverse: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_reverse", {v: k for k, v in self.claude_to_tether.items()})

    def claude_name(self, tether_name: str) -> str:
        """`bash` → `Bash`; unmapped names unchanged."""
        return self._reverse.get(tether_name, tether_name)

    def tether_name(self, claude_name: str) -> str:
        """`Bash` → `bash`; unmapped names unchanged."""
        return self.claude_to_tether.get(claude_name, claude_name)


def claude_tool_input(tether_name: str, arguments: JsonValue | None) -> dict[str, JsonValue]:
    """The call's arguments under Claude Code's names (`{}` when they are not an object)."""
    if not isinstance(arguments, dict):
        return {}
    tool_input = dict(arguments)
    if tether_name == "bash" and "timeout_ms" in tool_input:
        tool_input["timeout"] = tool_input.pop("timeout_ms")
    elif tether_name == "web_search":
        queries = tool_input.get("queries")
        if isinstance(queries, list) and queries and "query" not in tool_input:
            tool_input["query"] = queries[0]
    return tool_input


def tether_tool_input(tether_name: str, tool_input: Mapping[str, object]) -> dict[str, JsonValue]:
    """`claude_tool_input` undone: an input under Claude Code's names (a hook's or an
    application's `updatedInput`, parsed JSON) as the tool's arguments. A web search's `query`
    becomes its `queries` when it is not already their first."""
    arguments = cast(dict[str, JsonValue], dict(tool_input))
    if tether_name == "bash" and "timeout" in arguments:
        arguments["timeout_ms"] = arguments.pop("timeout")
    elif tether_name == "web_search" and "query" in arguments:
        query = arguments.pop("query")
        queries = arguments.get("queries")
        if not (isinstance(queries, list) and queries and queries[0] == query):
            arguments["queries"] = [query]
    return arguments
