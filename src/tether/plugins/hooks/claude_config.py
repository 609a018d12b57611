"""Parsing Claude Code hook configs (spec §5.3 "config parsing").

Owns turning one document — `{"hooks": {...}}` (a settings file) or a bare event map
(`hooks.json`) — into `HookGroup`s of `CommandHook`s (a command and its optional `timeout` in
seconds; `runner.py` runs one), and `ClaudeHookSet`, the groups of several files together.

Rules, per document: a top level that is not an object, or a `hooks` key whose value is not an
object, raises `HookConfigError('the file holds a JSON array, not an object')` /
`HookConfigError('"hooks" is a string, not an object of events')` (the caller logs it naming the
file). A document without a `hooks` key is read as a bare event map. Only the supported
events are read (`SUPPORTED_EVENTS`); any other event is ignored *before* parsing, so an invalid
matcher on an unsupported event cannot disable the supported hooks (`unsupported_events` names
them, for the bridge's one warning line at load). Per group: a non-object
group or a non-array `hooks` is skipped. Per hook: `type` defaults to `command`; any other type
(`http`, `prompt`, `agent`, `mcp_tool`, ...) is skipped with the log line
`hooks-claude-code: skipping unsupported "<type>" hook on <event> (only command hooks run)`;
`command` must be a string; a positive numeric `timeout` is its timeout in seconds (anything else
means the default); `${CLAUDE_PLUGIN_ROOT}` and `${CLAUDE_PROJECT_DIR}` are replaced when a
value for them is given. Groups left without commands are dropped. The matcher is discarded for
`UserPromptSubmit` and `Stop`. An invalid regex matcher on a supported event raises
`HookConfigError('invalid claude-code regex matcher "<p>" on event "<Event>"')`: the caller
(the bridge) contains it and loads nothing from that file.

Across files, a hook whose (event, matcher, command) was already loaded is dropped (Claude Code
deduplicates identical commands), and every kept hook gets a handler id
`claude-code:<Event>:<n>`, counted per event from 1 in load order.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from .matcher import matcher_diagnostic

__all__ = [
    "SUPPORTED_EVENTS",
    "ClaudeHookSet",
    "CommandHook",
    "ConfiguredHook",
    "HookConfigError",
    "HookGroup",
    "parse_claude_hooks",
    "unsupported_events",
]

_log = logging.getLogger("tether.plugins.hooks")

SUPPORTED_EVENTS: Final = (
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
)
_NO_MATCHER: Final = frozenset({"UserPromptSubmit", "Stop"})


class HookConfigError(ValueError):
    """A hook config that cannot be loaded (the message says why)."""


@dataclass(frozen=True, slots=True)
class CommandHook:
    """`{"type": "command", "command": ..., "timeout": seconds}` from a hook config."""

    command: str
    timeout_sec: float | None = None

    def timeout_ms(self, default_ms: float) -> float:
        return default_ms if self.timeout_sec is None else self.timeout_sec * 1000


@dataclass(frozen=True, slots=True)
class ConfiguredHook:
    """A command hook as loaded: its handler id and where it came from."""

    handler_id: str
    hook: CommandHook
    source: str


@dataclass(frozen=True, slots=True)
class HookGroup:
    """`{matcher?, hooks: [...]}` under one event."""

    event: str
    matcher: str | None
    hooks: tuple[CommandHook, ...]


def parse_claude_hooks(
    document: object, *, substitutions: Mapping[str, str] | None = None
) -> list[HookGroup]:
    """The command-hook groups of one document, in config order. Raises HookConfigError."""
    if not isinstance(document, dict):
        raise HookConfigError(f"the file holds {_json_kind(document)}, not an object")
    events = document.get("hooks", document)
    if not isinstance(events, dict):
        raise HookConfigError(f'"hooks" is {_json_kind(events)}, not an object of events')
    replace = dict(substitutions or {})
    groups: list[HookGroup] = []
    for event in SUPPORTED_EVENTS:
        entries = events.get(event)
        if not isinstance(entries, list):
            continue
        for entry in entries:
            group = _group(event, entry, replace)
            if group is not None:
                groups.append(group)
    return groups


def unsupported_events(document: object) -> list[str]:
    """The events a document has hooks for that tether does not run, in document order."""
    if not isinstance(document, dict):
        return []
    events = document.get("hooks", document)
    if not isinstance(events, dict):
        return []
    return [
        str(event)
        for event, entries in events.items()
        if event not in SUPPORTED_EVENTS and isinstance(entries, list) and entries
    ]


def _json_kind(value: object) -> str:
    """How JSON names the type of a parsed value: `a JSON array`, `a string`, `null`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a JSON array"
    return f"a {type(value).__name__}"


def _group(event: str, entry: object, replace: Mapping[str, str]) -> HookGroup | None:
    if not isinstance(entry, dict):
        return None
    hooks = entry.get("hooks")
    if not isinstance(hooks, list):
        return None
    matcher = entry.get("matcher")
    if event in _NO_MATCHER or not isinstance(matcher, str):
        matcher = None
    commands = tuple(c for c in (_command(event, h, replace) for h in hooks) if c is not None)
    if not commands:
        return None
    if (problem := matcher_diagnostic(matcher)) is not None:
        raise HookConfigError(f'{problem} on event "{event}"')
    return HookGroup(event, matcher, commands)


def _command(event: str, hook: object, replace: Mapping[str, str]) -> CommandHook | None:
    if not isinstance(hook, dict):
        return None
    kind = hook.get("type", "command")
    if kind != "command":
        _log.warning(
            'hooks-claude-code: skipping unsupported "%s" hook on %s (only command hooks run)',
            kind,
            event,
        )
        return None
    command = hook.get("command")
    if not isinstance(command, str):
        return None
    for name, value in replace.items():
        command = command.replace("${" + name + "}", value)
    timeout = hook.get("timeout")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        return CommandHook(command)
    if not (math.isfinite(timeout) and timeout > 0):
        return CommandHook(command)
    return CommandHook(command, float(timeout))


@dataclass
class ClaudeHookSet:
    """The hooks of every loaded file, per event, deduplicated, with handler ids."""

    groups: dict[str, list[tuple[str | None, ConfiguredHook]]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    _seen: set[tuple[str, str | None, str]] = field(default_factory=set)

    def add(self, source: str, groups: list[HookGroup]) -> None:
        """Add one file's groups (already parsed: a failed file adds nothing)."""
        self.sources.append(source)
        for group in groups:
            for hook in group.hooks:
                key = (group.event, group.matcher, hook.command)
                if key in self._seen:
                    continue
                self._seen.add(key)
                kept = self.groups.setdefault(group.event, [])
                handler_id = f"claude-code:{group.event}:{len(kept) + 1}"
                kept.append((group.matcher, ConfiguredHook(handler_id, hook, source)))

    def events(self) -> frozenset[str]:
        """The events that have at least one hook."""
        return frozenset(event for event, hooks in self.groups.items() if hooks)
