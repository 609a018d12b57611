"""One call the permission policy decides (`tether.plugins.permissions.policy`).

Owns `Call` — the tool and its arguments; for bash, the command, the programs it runs, read once
(`commands.py`, imported at the first bash call), and the forms deny and ask rules are matched
against (`command_forms`) — and `Reading`, a `Read(...)` rule a bash line reads a path of. Does
not own the precedence (the policy). Imported at the policy's first check (issue 36): a boot
checks no call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...core.json import JsonValue

if TYPE_CHECKING:
    from .commands import Programs
    from .rules import PermissionRule

__all__ = ["Call", "Reading", "command_forms"]


@dataclass(frozen=True, slots=True)
class Call:
    """One call being decided; for bash, its command and the programs it runs, read once, and
    the forms deny and ask rules are matched against (`command_forms`)."""

    tool: str
    arguments: JsonValue | None
    command: str | None = None
    programs: Programs | None = None
    forms: frozenset[str] = frozenset()

    @classmethod
    def of(cls, tool: str, arguments: JsonValue | None) -> Call:
        if tool != "bash":
            return cls(tool, arguments)
        command = arguments.get("command") if isinstance(arguments, dict) else None
        if not isinstance(command, str):
            return cls(tool, arguments)
        from .commands import programs_of  # reading a bash line: at the first one (issue 36)

        programs = programs_of(command)
        return cls(tool, arguments, command, programs, command_forms(command, programs))

    def matching_command_rule(self, rules: list[PermissionRule]) -> PermissionRule | None:
        """The first deny/ask rule matching a form; when part of the line cannot be read, the
        first rule, since it may match (fail closed)."""
        hit = next((r for r in rules if any(map(r.matches_command, self.forms))), None)
        if hit is None and self.programs is not None and self.programs.problem is not None:
            return rules[0]
        return hit

    def assumed(self, rule: PermissionRule) -> str:
        """The reason's tail when `rule` was assumed to match an unreadable command."""
        problem = None if self.programs is None else self.programs.problem
        if problem is None or any(map(rule.matches_command, self.forms)):
            return ""
        return f" (part of the command cannot be read: {problem}; the rule is assumed to match)"


@dataclass(frozen=True, slots=True)
class Reading:
    """A `Read(...)` rule a bash line reads a path of (`sure`), or may read one of, and why."""

    rule: PermissionRule
    sure: bool
    why: str


def command_forms(command: str, programs: Programs) -> frozenset[str]:
    """The whole line, each simple command as written (with and without its assignments and
    redirections), and each program it runs under its resolved name (`/bin/rm -f x` and
    `sudo rm -f x` are also `rm -f x`)."""
    forms = {" ".join(command.split())}
    for part in programs.line.commands:
        forms.add(part.text)
        forms.add(" ".join(w.text for w in part.words))
    for program in programs.programs:
        forms.add(program.words)
        forms.add(program.values)
    return frozenset(forms)
