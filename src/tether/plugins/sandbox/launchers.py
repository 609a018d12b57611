"""The files that configured MCP servers and hooks run from, read from their configuration.

Owns `launcher_files(root, home)`: the existing files named by the `command` and `args` of every
server in `<root>/.mcp.json` and in the `servers` of `<root>/tether.yml`'s plugin entries, and
by the hook commands (and `statusLine` command) of `<root>/.claude/settings.json` and
`settings.local.json` — `$CLAUDE_PROJECT_DIR` read as the root. Those configuration files are
protected themselves (`protected.py`); the files they start are what a command could otherwise
rewrite to run code outside the sandbox the next time a server or hook starts. Only files that
exist are named: what a server loads by itself (imports, a `-m module`) and files a build will
create are not (docs/sandbox.md). A file that is not JSON (or a `tether.yml` tether refuses) is
skipped: tether refuses it with its own message; Claude Code ignores it. Does not own the
protections (`protected.py`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from ...kernel.config import load_config
from ...kernel.errors import ConfigError
from .gitconfig import command_files

__all__ = ["launcher_files"]

_SETTINGS: Final = (".claude/settings.json", ".claude/settings.local.json")
_PROJECT_DIR: Final = ("${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR")


def launcher_files(root: str, home: str) -> list[str]:
    """The existing files the servers of `root/.mcp.json` and the hooks of its Claude Code
    settings run (see the module note)."""
    found: list[str] = []
    servers = _json(os.path.join(root, ".mcp.json")).get("mcpServers")
    configured = [*servers.values()] if isinstance(servers, dict) else []
    for server in [*configured, *_tether_yml_servers(root)]:
        if isinstance(server, dict):
            words = [server.get("command")]
            args = server.get("args")
            if isinstance(args, list):
                words += args
            for word in words:
                if isinstance(word, str) and word:
                    found += command_files(_quote(word), root, home)
    for name in _SETTINGS:
        for command in _hook_commands(_json(os.path.join(root, name))):
            expanded = command
            for variable in _PROJECT_DIR:
                expanded = expanded.replace(variable, root)
            found += command_files(expanded, root, home)
    return found


def _tether_yml_servers(root: str) -> list[object]:
    """The `servers` of every plugin entry of `root/tether.yml` (the mcp plugin's)."""
    path = Path(root, "tether.yml")
    if not path.is_file():
        return []
    try:
        config = load_config([path])
    except ConfigError:
        return []
    found: list[object] = []
    for entry in config.plugins:
        servers = entry.config.get("servers")
        if isinstance(servers, dict):
            found += servers.values()
    return found


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\"'\"'") + "'"


def _hook_commands(settings: dict[str, object]) -> Iterator[str]:
    hooks = settings.get("hooks")
    if isinstance(hooks, dict):
        for groups in hooks.values():
            for group in groups if isinstance(groups, list) else ():
                entries = group.get("hooks") if isinstance(group, dict) else None
                for entry in entries if isinstance(entries, list) else ():
                    command = entry.get("command") if isinstance(entry, dict) else None
                    if isinstance(command, str):
                        yield command
    status = settings.get("statusLine")
    if isinstance(status, dict) and isinstance(status.get("command"), str):
        yield str(status["command"])


def _json(path: str) -> dict[str, object]:
    try:
        with open(path, encoding="utf-8") as file:
            document = json.loads(file.read(1 << 20))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return {}  # unreadable: the permissions plugin refuses to start on such a file
    return document if isinstance(document, dict) else {}
