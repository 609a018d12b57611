"""Permission rules in Claude Code's syntax: `Tool` or `Tool(specifier)`.

Owns parsing a rule (`parse_rule`) and `PermissionRule.matches`. The tool name is a Claude Code
name (mapped through the name map: `Bash` is `bash`) or a tether tool name. Families: a `Read`
rule also covers `grep` and `glob`, an `Edit` rule also covers `write`. Specifiers:

    Bash(npm run test)        exactly this command
    Bash(git status:*)        this prefix: `git status`, `git status --short`, not `git statusx`
    Bash(git * main)          `*` matches anything (within one simple command)
    Read(./src/**)            a path glob (see `tether.plugins.permissions.paths`)
    Edit(/docs/**)            (a leading / is the workspace root; // is the filesystem root)
    WebFetch(domain:x.com)    the URL's host is x.com or a subdomain of it

A bare name matches every call of the tool (family). MCP rules are Claude Code's:
`mcp__server__tool` is that tool, `mcp__server` and `mcp__server__*` every tool of the server;
they are applied like any other rule. Rules that tether cannot apply are parsed and then ignored
with a log line, never silently: specifiers on MCP rules (`mcp__s__t(x)`) and on tools that have
no specifier grammar (`WebSearch(x)`). A
malformed rule raises `ValueError` naming what is wrong.

A command is matched against `Bash(...)` rules by the policy (`tether.plugins.permissions.policy`)
per simple command and per program it runs (`tether.plugins.permissions.commands`): deny and ask
rules hit if any part matches, or if part of the line cannot be read; an allow decision needs
every simple command allowed as written and no substitution, and a prefix or wildcard rule does
not cover a redirection that writes a file (`Bash(echo:*)` allows `echo hi`, not `echo hi > f`:
`PermissionRule.covers`). `Read(...)` deny and ask rules also hold against bash lines that read
the path by name (`tether.plugins.permissions.reads`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, TypeAlias
from urllib.parse import urlsplit

from ..hooks.names import ToolNames
from .paths import PathPattern, candidate_paths

if TYPE_CHECKING:
    from .command_line import SimpleCommand

__all__ = [
    "PATH_TOOLS",
    "CommandSpec",
    "DomainSpec",
    "PermissionRule",
    "RuleSpec",
    "mcp_server_key",
    "parse_rule",
    "paths_of",
    "rule_tools",
]


@functools.cache
def _rule() -> re.Pattern[str]:
    return re.compile(r"(?P<tool>[A-Za-z0-9_\-]+(?:__\*)?)(?:\((?P<spec>.*)\))?", re.DOTALL)


_MCP: Final = "mcp__"
_FAMILIES: Final[dict[str, frozenset[str]]] = {
    "read": frozenset({"read", "grep", "glob"}),
    "edit": frozenset({"edit", "write"}),
}
PATH_TOOLS: Final = frozenset({"read", "write", "edit", "grep", "glob"})


def rule_tools(tool: str) -> frozenset[str]:
    """The tether tools a rule naming `tool` (a tether name) covers."""
    return _FAMILIES.get(tool, frozenset({tool}))


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """`Bash(...)`: exact, `prefix:*`, or a `*` wildcard pattern."""

    kind: Literal["exact", "prefix", "wildcard"]
    text: str
    regex: re.Pattern[str] | None = None

    @classmethod
    def parse(cls, spec: str) -> CommandSpec:
        body = " ".join(spec.split())
        if not body:
            raise ValueError("a Bash(...) rule needs a command")
        if body.endswith(":*"):
            prefix = body[:-2].rstrip()
            if not prefix:
                raise ValueError("a Bash(<prefix>:*) rule needs a prefix")
            return cls("prefix", prefix)
        if "*" in body:
            pattern = ".*".join(re.escape(piece) for piece in body.split("*"))
            return cls("wildcard", body, re.compile(pattern, re.DOTALL))
        return cls("exact", body)

    def matches(self, command: str) -> bool:
        """`command` is one normalized simple command (or a whole normalized line)."""
        if self.kind == "exact":
            return command == self.text
        if self.kind == "prefix":
            return command == self.text or command.startswith(self.text + " ")
        return self.regex is not None and self.regex.fullmatch(command) is not None


@dataclass(frozen=True, slots=True)
class DomainSpec:
    """`WebFetch(domain:<host>)`: the host or any subdomain (`*.` in front is the same)."""

    domain: str

    def matches(self, url: str) -> bool:
        try:
            host = (urlsplit(url.strip()).hostname or "").rstrip(".").lower()
        except ValueError:
            return False
        return host == self.domain or host.endswith("." + self.domain)


RuleSpec: TypeAlias = CommandSpec | PathPattern | DomainSpec | None


@dataclass(frozen=True, slots=True)
class PermissionRule:
    """One parsed rule. `tools` is empty for a rule tether ignores (`ignored` says why)."""

    text: str
    tool: str
    tools: frozenset[str]
    spec: RuleSpec
    ignored: str | None = None

    def matches_command(self, command: str) -> bool:
        return self.spec is None or (
            isinstance(self.spec, CommandSpec) and self.spec.matches(command)
        )

    def covers(self, part: SimpleCommand) -> bool:
        """Whether this allow rule covers one simple command as written. A prefix or wildcard
        rule never covers a redirection that writes a file unless its own text has a `>`:
        `Bash(echo:*)` allows `echo hi`, not `echo hi > ~/.bashrc`."""
        spec = self.spec
        if spec is None:
            return True
        if not isinstance(spec, CommandSpec):
            return False
        if ">" in spec.text:  # `Bash(echo * > /tmp/*)`: `> f` is written either way
            spaced = [w.text for w in (*part.assignments, *part.words)]
            spaced += [f"{r.op} {r.target.text}" for r in part.redirects]
            return spec.matches(part.text) or spec.matches(" ".join(spaced))
        if not spec.matches(part.text):
            return False
        return spec.kind == "exact" or not any(r.writes_file for r in part.redirects)

    def matches_paths(self, paths: Sequence[str], *, every: bool) -> bool:
        if self.spec is None:
            return True
        if not isinstance(self.spec, PathPattern):
            return False
        hits = [self.spec.matches(p) for p in paths]
        return all(hits) if every else any(hits)

    def matches_url(self, url: str) -> bool:
        return self.spec is None or (isinstance(self.spec, DomainSpec) and self.spec.matches(url))

    def matches_any(self) -> bool:
        return self.spec is None


def parse_rule(
    text: str, *, names: ToolNames, workspace: Path, home: Path | None = None
) -> PermissionRule:
    """Parse one rule. Raises ValueError: `"<text>" is not a permission rule: <why>`."""
    if not isinstance(text, str):
        raise ValueError(f"a permission rule is a string, got {type(text).__name__}")
    stripped = text.strip()
    found = _rule().fullmatch(stripped)
    if found is None:
        raise ValueError(
            f'"{text}" is not a permission rule: write Tool or Tool(specifier), '
            'e.g. "Bash(git status:*)" or "Read(./src/**)"'
        )
    claude_tool, spec = found["tool"], found["spec"]
    if claude_tool.startswith(_MCP):
        if spec is not None:
            return PermissionRule(
                text, claude_tool, frozenset(), None, "MCP rules take no specifier"
            )
        key = claude_tool.removesuffix("__*")
        return PermissionRule(text, key, frozenset({key}), None)
    if claude_tool.endswith("__*"):
        raise ValueError(f'"{text}" is not a permission rule: only mcp__<server>__* takes a "*"')
    tool = names.tether_name(claude_tool)
    tools = rule_tools(tool)
    if spec is None:
        return PermissionRule(text, tool, tools, None)
    try:
        if tool == "bash":
            return PermissionRule(text, tool, tools, CommandSpec.parse(spec))
        if tool in PATH_TOOLS:
            return PermissionRule(text, tool, tools, PathPattern.compile(spec, workspace, home))
    except ValueError as exc:
        raise ValueError(f'"{text}" is not a permission rule: {exc}') from None
    if tool == "web_fetch":
        if not spec.startswith("domain:") or not spec[7:].strip():
            raise ValueError(f'"{text}" is not a permission rule: write WebFetch(domain:<host>)')
        domain = spec[7:].strip().lower().removeprefix("*.").rstrip(".")
        return PermissionRule(text, tool, tools, DomainSpec(domain))
    why = f'"{claude_tool}" rules take no specifier'
    return PermissionRule(text, tool, frozenset(), None, why)


def mcp_server_key(tool: str) -> str | None:
    """`mcp__<server>` for an MCP tool `mcp__<server>__<tool>` (what server-wide rules are
    indexed under), or None for any other tool."""
    if not tool.startswith(_MCP):
        return None
    server, sep, rest = tool[len(_MCP) :].partition("__")
    return f"{_MCP}{server}" if sep and server and rest else None


def paths_of(tool: str, arguments: object, workspace: Path) -> tuple[str, ...] | None:
    """The path forms a path tool's call is checked as; None when the call names none."""
    if not isinstance(arguments, dict):
        return None
    key = "path" if tool in ("grep", "glob") else "file_path"
    raw = arguments.get(key)
    if raw is None and key == "path":
        raw = "."
    if not isinstance(raw, str) or not raw.strip():
        return None
    return candidate_paths(raw, workspace)
