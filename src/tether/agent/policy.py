"""Policy in code for library users: `Agent(deny=[...])` and `Agent(policy=[check, ...])`.

Owns the `Agent` presets (`coding`: the CLI's defaults; `library`: no built-ins, no coding
prompt), `DenyRules` (permission rules in the settings syntax, `Bash(rm:*)`, `Read(./secrets/**)`,
matched exactly as the `permissions` plugin matches its deny rules) and `Check` (a function that
sees each call before it runs), and `install_policy`, which puts both into the agent's
`tools/pre-execute` waterfall. Does not own the permission modes, allow and ask rules or asking a
person (plugins/permissions, plugins/approval): this layer can only refuse or ask, never allow
more than the rest of the waterfall does.

A check is `(call: ToolExecution) -> PreToolDecision | None`, sync or async: `Deny(reason)`
refuses the call (the model reads the reason; nothing after it runs), `Ask(reason)` asks (the
approval service, or refused without one), `None` or `Allow()` has no objection. Anything else
is returned as it is, so the registry refuses it as a malformed decision; a check that
raises fails closed: the call ends as a tool error and never runs (the registry's rule for any
pre-execute listener).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Final, Literal, TypeAlias

from ..core.renamed import renamed_keywords
from ..kernel import Context
from ..kernel.events import Next
from ..plugins.hooks.names import ToolNames
from ..plugins.permissions.policy import PermissionPolicy
from ..tools.decisions import Allow, Ask, Deny, PreToolDecision
from ..tools.events import PRE_EXECUTE
from ..tools.execution import ToolExecution

__all__ = ["LIBRARY_PROMPT", "PRESETS", "Check", "DenyRules", "Preset", "install_policy"]

Preset: TypeAlias = Literal["coding", "library"]
"""`Agent(preset=...)`: tether's coding agent (the CLI's defaults) or an agent of your own."""
PRESETS: Final[tuple[Preset, ...]] = ("coding", "library")
LIBRARY_PROMPT: Final = (
    "You are a helpful assistant. Use the tools you are given when they help, and say plainly"
    " when a tool call was refused or failed."
)
"""The system prompt of `preset="library"` when no `instructions` are given."""

Check: TypeAlias = Callable[
    [ToolExecution], "PreToolDecision | Awaitable[PreToolDecision | None] | None"
]
"""A policy function: see the module note."""


class DenyRules:
    """Deny rules in the settings syntax; `ValueError` at construction for a rule that does not
    parse (naming it and the syntax)."""

    __slots__ = ("_policy", "rules")

    def __init__(self, rules: Sequence[str], *, workspace: Path, home: Path | None) -> None:
        if isinstance(rules, str):
            raise ValueError(f"deny takes a list of rules, not one string: deny=[{rules!r}]")
        from ..plugins.permissions.rules import parse_rule  # the grammar: deny=[...] only

        names = ToolNames()
        parsed = [parse_rule(rule, names=names, workspace=workspace, home=home) for rule in rules]
        self.rules = tuple(rules)
        self._policy = PermissionPolicy(
            deny=parsed, mode="bypassPermissions", workspace=workspace, names=names, home=home
        )

    @renamed_keywords(exec="call")
    def check(self, call: ToolExecution) -> PreToolDecision | None:
        """`Deny` with the rule's reason when a rule matches the call, else None. (`exec=`, the
        keyword of earlier releases, still works with a DeprecationWarning.)"""
        verdict = self._policy.verdict(call.name, call.arguments)
        if verdict.decision != "deny":
            return None
        return Deny(verdict.reason or "denied by a deny rule")


def install_policy(ctx: Context, checks: Sequence[Check]) -> None:
    """Register one `tools/pre-execute` listener per check, in order, owned by `ctx`'s owner."""
    for check in checks:
        if not callable(check):
            raise TypeError(
                f"policy takes functions (call) -> Deny | Ask | None, got {type(check).__name__}"
            )
        ctx.on(PRE_EXECUTE, _listener(check))


def _listener(
    check: Check,
) -> Callable[[ToolExecution, Next[PreToolDecision]], Awaitable[PreToolDecision]]:
    async def listener(call: ToolExecution, call_next: Next[PreToolDecision]) -> PreToolDecision:
        mine = check(call)
        if inspect.isawaitable(mine):
            mine = await mine
        if isinstance(mine, Deny):
            return mine
        if mine is not None and not isinstance(mine, (Allow, Ask)):
            return mine  # malformed: the registry fails it closed
        downstream = await call_next()
        if isinstance(mine, Ask) and not isinstance(downstream, Deny):
            return mine
        return downstream

    return listener
