"""Claude Code subagent files (`.claude/agents/*.md`), read unchanged.

Owns parsing one file into an `AgentType` and reading a directory of them. The format is Claude
Code's: YAML frontmatter between `---` lines, then the system prompt:

    ---
    name: code-reviewer
    description: Reviews code for quality. Use after writing code.
    tools: Read, Grep, Glob, Bash        # optional; omitted = every tool of the caller
    disallowedTools: Write               # optional
    model: inherit                       # optional; inherit/sonnet/opus/haiku = the caller's
    ---
    You are a senior code reviewer ...

`name` and `description` are required; `tools` and `disallowedTools` are a comma-separated
string or a YAML list of Claude Code tool names (mapped to tether's); other keys (`color`,
`permissionMode`, ...) are ignored. Claude Code's own parser tolerates frontmatter that is not
strict YAML (a plain description holding `Examples: <example>Context: ...` has `: ` inside a
plain scalar); so does this one: when YAML refuses the block, each `key: value` line is read as
is and indented lines continue the previous value.

A file that cannot be used is skipped with one WARNING on the `tether.agent.subagents` logger
naming the file and the problem; the others still load.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from .agent_types import INHERIT_MODEL, AgentType, tether_tool_names

__all__ = ["MAX_FILE_BYTES", "AgentFileError", "load_agent_dir", "parse_agent_file"]

_log = logging.getLogger("tether.agent.subagents")

MAX_FILE_BYTES: Final = 1_000_000
"""A subagent file larger than this is skipped (a real one is a few kilobytes)."""


@functools.cache
def _name() -> re.Pattern[str]:
    return re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")


@functools.cache
def _key_line() -> re.Pattern[str]:
    return re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):[ \t]*(.*)$")


class AgentFileError(ValueError):
    """A subagent file that cannot be used; the message says what is wrong."""


def parse_agent_file(text: str, source: str) -> AgentType:
    """The type a Claude Code subagent file defines. Raises AgentFileError."""
    frontmatter, body = _split(text)
    fields = _fields(frontmatter)
    name = _required(fields, "name")
    if not _name().match(name):
        raise AgentFileError(
            f'"name" must be letters, digits, "-", "_", "." or ":" (e.g. code-reviewer); '
            f"got {name!r}"
        )
    description = _required(fields, "description")
    model = _optional_str(fields, "model")
    return AgentType(
        name=name,
        description=description,
        system_prompt=body.strip(),
        tools=_tool_list(fields, "tools"),
        disallowed_tools=_tool_list(fields, "disallowedTools") or (),
        model=None if model is None or model in INHERIT_MODEL else model,
        source=source,
    )


def load_agent_dir(directory: Path) -> list[AgentType]:
    """Every usable `*.md` file in `directory` (sorted by file name; none when it is missing).
    A file that cannot be used, or that repeats a name an earlier file defined, is logged and
    skipped."""
    try:
        paths = sorted(p for p in directory.iterdir() if p.suffix == ".md" and p.is_file())
    except OSError:
        return []
    found: dict[str, AgentType] = {}
    for path in paths:
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise AgentFileError(f"the file is larger than {MAX_FILE_BYTES} bytes")
            agent_type = parse_agent_file(path.read_text(encoding="utf-8"), str(path))
        except (OSError, UnicodeDecodeError, AgentFileError) as error:
            _log.warning('subagents: skipping agent file "%s": %s', path, error)
            continue
        if (first := found.get(agent_type.name)) is not None:
            _log.warning(
                'subagents: skipping agent file "%s": name "%s" is already defined by "%s"',
                path,
                agent_type.name,
                first.source,
            )
            continue
        found[agent_type.name] = agent_type
    return list(found.values())


def _split(text: str) -> tuple[str, str]:
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise AgentFileError('no frontmatter: the file must start with a "---" line')
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise AgentFileError('the frontmatter has no closing "---" line')


def _fields(frontmatter: str) -> Mapping[str, object]:
    import yaml  # only when a file is read: it costs ~50 ms at startup

    try:
        document = yaml.safe_load(frontmatter)
    except yaml.YAMLError:
        return _loose_fields(frontmatter)
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise AgentFileError("the frontmatter must be a mapping of keys to values")
    return {str(key): value for key, value in document.items()}


def _loose_fields(frontmatter: str) -> Mapping[str, object]:
    """`key: value` lines, as Claude Code reads frontmatter that is not strict YAML."""
    fields: dict[str, str] = {}
    last: str | None = None
    for line in frontmatter.splitlines():
        match = _key_line().match(line)
        if match is not None:
            last = match.group(1)
            fields[last] = _unquote(match.group(2).strip())
        elif last is not None and line.strip() and line[:1] in " \t":
            fields[last] = f"{fields[last]} {line.strip()}".strip()
        elif line.strip() and not line.lstrip().startswith("#"):
            raise AgentFileError(f"cannot read frontmatter line {line.strip()!r}")
    return fields


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _required(fields: Mapping[str, object], key: str) -> str:
    value = fields.get(key)
    if value is None:
        raise AgentFileError(f'the frontmatter has no "{key}"')
    if not isinstance(value, str) or not value.strip():
        raise AgentFileError(f'"{key}" must be a non-empty string')
    return value.strip()


def _optional_str(fields: Mapping[str, object], key: str) -> str | None:
    value = fields.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise AgentFileError(f'"{key}" must be a non-empty string')
    return value.strip()


def _tool_list(fields: Mapping[str, object], key: str) -> tuple[str, ...] | None:
    value = fields.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        names = [part.strip() for part in value.split(",")]
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        names = [str(item).strip() for item in value]
    else:
        raise AgentFileError(f'"{key}" must be a comma-separated string or a list of tool names')
    return tether_tool_names(name for name in names if name)
