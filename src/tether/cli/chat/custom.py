"""Custom slash commands in Claude Code's format: `.claude/commands/*.md`, `~/.claude/commands`.

Owns finding the commands (`load_commands`), reading one (`CustomCommand`) and expanding its
prompt (`expand`). The files are Claude Code's, read unchanged:

    ---
    description: Review the current change
    argument-hint: [focus]
    allowed-tools: Bash(git diff:*), Bash(git status:*)
    model: deepseek-reasoner
    ---
    Review the diff with a focus on $ARGUMENTS (first word: $1).

    - Status: !`git status --short`
    - Diff: !`git diff HEAD`

    Our conventions are in @CONTRIBUTING.md.

`review.md` is `/review`; one in a subdirectory (`frontend/component.md`) is `/component`, its
directory named in the description (`(project:frontend)`), and `/frontend:component` also names
it. Project commands (`<workspace>/.claude/commands`) win over user commands
(`~/.claude/commands`) of the same name; built-in commands win over both. The frontmatter is
optional; `description` (else the body's first line), `argument-hint`, `allowed-tools` (a list,
or one string of comma-separated rules) and `model` are used, other keys are ignored. It is read
as Claude Code writes it (`key: value` text, `- item` lists), not as strict YAML, in which
Claude Code's own `argument-hint: [pr-number] [priority]` would not parse.

Expansion, in Claude Code's order: `$ARGUMENTS` becomes everything after the command name and
`$1`…`$9` its words (shell-quoted words stay one: `/fix "two words"`); then each
``!`command` `` is run through the bash tool as the agent — the permission rules, the
`allowed-tools` and the approval prompt apply — and replaced by its output; `@path` references
stay in the text and are attached like any `@path` the user types. Arguments given to a command
whose body has no `$ARGUMENTS` or `$N` are appended as a last line (`ARGUMENTS: ...`), so they
are never lost. A file that cannot be read or parsed is listed with
its error instead of a command, never silently dropped.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

__all__ = ["CustomCommand", "Expansion", "Loaded", "expand", "load_commands", "split_arguments"]

_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_POSITIONAL: Final = re.compile(r"\$([1-9])")
_BASH: Final = re.compile(r"!`([^`\n]+)`")
_MAX_FILE_BYTES: Final = 256 * 1024


@dataclass(frozen=True, slots=True)
class CustomCommand:
    """One command file. `name` is what follows `/`; `namespace` its subdirectory, if any."""

    name: str
    path: Path
    scope: Literal["project", "user"]
    body: str
    description: str | None = None
    argument_hint: str | None = None
    allowed_tools: tuple[str, ...] = ()
    model: str | None = None
    namespace: str | None = None

    @property
    def help(self) -> str:
        """The one line `/help` and Tab completion show."""
        where = self.scope if self.namespace is None else f"{self.scope}:{self.namespace}"
        text = self.description or _first_line(self.body) or "(no description)"
        hint = f" {self.argument_hint}" if self.argument_hint else ""
        return f"{text}{hint} ({where})"


@dataclass(frozen=True, slots=True)
class Loaded:
    """The commands found, by name (aliases `namespace:name` included), and the files that
    could not be used, with why."""

    commands: Mapping[str, CustomCommand]
    problems: tuple[tuple[Path, str], ...] = ()


def load_commands(workspace: Path, home: Path, *, reserved: frozenset[str]) -> Loaded:
    """The commands of `workspace/.claude/commands` and `home/.claude/commands` (see the module
    note); names in `reserved` (the built-ins, without `/`) are skipped with a problem."""
    found: dict[str, CustomCommand] = {}
    problems: list[tuple[Path, str]] = []
    roots: tuple[tuple[Literal["project", "user"], Path], ...] = (
        ("user", home / ".claude" / "commands"),
        ("project", workspace / ".claude" / "commands"),  # last: it wins
    )
    for scope, root in roots:
        for command in _read_tree(root, scope, problems):
            if command.name in reserved:
                problems.append((command.path, f"/{command.name} is a built-in command"))
                continue
            found[command.name] = command
            if command.namespace is not None:
                found[f"{command.namespace}:{command.name}"] = command
    return Loaded(found, tuple(problems))


def _read_tree(
    root: Path, scope: Literal["project", "user"], problems: list[tuple[Path, str]]
) -> list[CustomCommand]:
    try:
        paths = sorted(root.rglob("*.md")) if root.is_dir() else []
    except OSError as exc:
        problems.append((root, exc.strerror or str(exc)))
        return []
    commands = []
    for path in paths:
        relative = path.relative_to(root)
        name = relative.stem
        namespace = "/".join(relative.parts[:-1]) or None
        if not _NAME.fullmatch(name):
            problems.append((path, f'"{name}" is not a command name (letters, digits, - _ .)'))
            continue
        try:
            commands.append(_read(path, name, scope, namespace))
        except ValueError as exc:
            problems.append((path, str(exc)))
    return commands


def _read(
    path: Path, name: str, scope: Literal["project", "user"], namespace: str | None
) -> CustomCommand:
    try:
        if path.stat().st_size > _MAX_FILE_BYTES:
            raise ValueError(f"larger than {_MAX_FILE_BYTES // 1024} KiB")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(exc.strerror or str(exc)) from None
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    meta, body = _frontmatter(text)
    return CustomCommand(
        name=name,
        path=path,
        scope=scope,
        body=body,
        description=_text(meta, "description"),
        argument_hint=_text(meta, "argument-hint"),
        allowed_tools=_rules(meta.get("allowed-tools")),
        model=_text(meta, "model"),
        namespace=namespace,
    )


def _frontmatter(text: str) -> tuple[dict[str, object], str]:
    """The keys between a first `---` line and the next one, and the rest. Read the way Claude
    Code's files are written rather than as strict YAML (`argument-hint: [pr] [priority]` is not
    valid YAML): `key: value` lines keep their value as text (quotes around it removed), and a
    key with no value takes the `- item` lines under it as a list."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    meta: dict[str, object] = {}
    key: str | None = None
    for index in range(1, len(lines)):
        line = lines[index]
        if line.strip() == "---":
            return meta, "".join(lines[index + 1 :])
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = line.strip()
        items = meta.get(key) if key is not None else None
        if item.startswith("- ") and isinstance(items, list):
            items.append(_unquote(item[2:].strip()))
            continue
        name, colon, value = line.partition(":")
        if not colon or not name.strip() or line[:1].isspace():
            raise ValueError(f'frontmatter line {index + 1} is not "key: value": {item[:60]}')
        key = name.strip()
        meta[key] = _unquote(value.strip()) if value.strip() else []
    raise ValueError('the frontmatter has no closing "---" line')


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _text(meta: Mapping[str, object], key: str) -> str | None:
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, list):
        value = " ".join(str(v) for v in value)
    text = " ".join(str(value).split())
    return text or None


def _rules(value: object) -> tuple[str, ...]:
    """`allowed-tools`: a list of rules, or one string of comma-separated rules (commas inside
    parentheses belong to the rule)."""
    if value is None:
        return ()
    if isinstance(value, list):
        return tuple(str(v).strip() for v in value if str(v).strip())
    value = str(value).strip()
    if value.startswith("[") and value.endswith("]"):  # a flow list: [Bash(a), Read]
        value = value[1:-1]
    rules: list[str] = []
    current: list[str] = []
    depth = 0
    for char in str(value):
        if char == "," and depth == 0:
            rules.append("".join(current).strip())
            current = []
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current.append(char)
    rules.append("".join(current).strip())
    return tuple(rule for rule in rules if rule)


def _first_line(body: str) -> str:
    for line in body.splitlines():
        if line.strip():
            text = line.strip().lstrip("#").strip()
            return text if len(text) <= 60 else text[:59] + "…"
    return ""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def split_arguments(arguments: str) -> list[str]:
    """The words of the arguments, shell-quoted ones kept together (whitespace split when the
    quoting does not close)."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


@dataclass(frozen=True, slots=True)
class Expansion:
    """The prompt a command expands to, and each `!` command it ran with its output."""

    prompt: str
    ran: tuple[tuple[str, str], ...] = ()


async def expand(
    command: CustomCommand, arguments: str, run: Callable[[str], Awaitable[str]]
) -> Expansion:
    """The prompt of `command` with `arguments` (see the module note); `run(cmd)` runs one `!`
    command and returns the text that replaces it."""
    body = command.body
    words = split_arguments(arguments)
    used = "$ARGUMENTS" in body or _POSITIONAL.search(body) is not None
    body = body.replace("$ARGUMENTS", arguments)

    def positional(match: re.Match[str]) -> str:
        index = int(match.group(1))
        return words[index - 1] if index <= len(words) else ""

    body = _POSITIONAL.sub(positional, body)
    if arguments.strip() and not used:
        body = body.rstrip("\n") + f"\n\nARGUMENTS: {arguments}"
    ran: list[tuple[str, str]] = []
    parts: list[str] = []
    position = 0
    for match in _BASH.finditer(body):
        parts.append(body[position : match.start()])
        output = await run(match.group(1))
        ran.append((match.group(1), output))
        parts.append(output)
        position = match.end()
    parts.append(body[position:])
    return Expansion("".join(parts).strip(), tuple(ran))
