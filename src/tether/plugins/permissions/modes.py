"""What the permission modes add to the rules: Claude Code's five modes, their Shift+Tab cycle,
and the two mode-specific readings of a call.

Owns `MODE_CYCLE` (default → acceptEdits → plan → default, as Claude Code's Shift+Tab; the
modes that skip or refuse every question are never in it), `PLAN_TOOL` (the tool the model calls
to leave plan mode, `exit_plan_mode`; Claude Code's `ExitPlanMode`), `plan_refusal` (the reason a
call that is not read-only is denied in plan mode) and `workspace_fs_command`: the common file
system commands acceptEdits runs without asking, as Claude Code does (`mkdir`, `touch`, `mv`,
`cp`, `rm`, `rmdir`), when every operand is a relative path that stays in the workspace.

A line is such a command only when it was read completely, every simple command in it is one of
those (or a read-only command: the caller's check), nothing is assigned, substituted or
redirected into a file, and no operand is absolute, starts with `~`, contains `..`, is unknown
before it runs (`$X`, a glob), or names the workspace itself. The sandbox still confines what the
command can write (a symbolic link out of the workspace leads nowhere writable).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .command_line import SimpleCommand

__all__ = ["FS_COMMANDS", "MODE_CYCLE", "PLAN_TOOL", "fs_command", "next_mode", "plan_refusal"]

MODE_CYCLE: Final = ("default", "acceptEdits", "plan")
"""The modes Shift+Tab steps through, in order (from any other mode it goes to `default`)."""

PLAN_TOOL: Final = "exit_plan_mode"

FS_COMMANDS: Final = frozenset({"mkdir", "touch", "mv", "cp", "rm", "rmdir"})


def next_mode(mode: str) -> str:
    """The mode after `mode` in `MODE_CYCLE` (`default` after any mode outside it)."""
    if mode not in MODE_CYCLE:
        return "default"
    return MODE_CYCLE[(MODE_CYCLE.index(mode) + 1) % len(MODE_CYCLE)]


def plan_refusal(tool: str) -> str:
    """Why `tool` is denied in plan mode."""
    return (
        f'permission mode "plan" allows only read-only tools, not "{tool}": explore, then '
        f"present the plan with {PLAN_TOOL} and wait for it to be accepted"
    )


def fs_command(part: SimpleCommand) -> bool:
    """Whether `part` is a common file system command on paths inside the workspace (module
    note)."""
    if part.assignments or part.substituted or len(part.words) < 2:
        return False
    if any(r.op.lstrip("0123456789") not in ("<", "<<<") for r in part.redirects):
        return False
    name, *args = part.words
    if name.value not in FS_COMMANDS:
        return False
    operands = 0
    for word in args:
        value = word.value
        if value is None or not value:
            return False
        if value.startswith("-"):
            if "=" in value:  # `--target-directory=/etc`: a path the checks below never see
                return False
            continue
        if value.startswith(("/", "~")) or ".." in value.split("/"):
            return False
        if value.strip("/") in ("", "."):
            return False
        operands += 1
    return operands > 0
