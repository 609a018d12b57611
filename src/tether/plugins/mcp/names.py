"""Tool names of MCP tools: `mcp__<server>__<tool>`, as Claude Code spells them.

Owns `tool_name` (a server's tool as tether registers it) and `split_name` (back again). Characters
outside `[A-Za-z0-9_-]` in a server's tool name become `_`, so a name is always a valid
function name for a model and matches Claude Code's `mcp__server__tool` permission rules.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["PREFIX", "split_name", "tool_name"]

PREFIX: Final = "mcp__"
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, unsafe characters replaced by `_`."""
    return f"{PREFIX}{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"


def split_name(name: str) -> tuple[str, str] | None:
    """`(server, tool)` of an `mcp__<server>__<tool>` name, or None for any other name."""
    if not name.startswith(PREFIX):
        return None
    server, sep, tool = name[len(PREFIX) :].partition("__")
    if not sep or not server or not tool:
        return None
    return server, tool
