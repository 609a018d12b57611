"""An agent with nobody to ask: the policy flags, and what it says when a call needs approval.

Owns `--yolo` and `--allow` (applied to a booted context's `permissions` service) and the note
the `approval` service gives for a call nobody can approve — used by `tether run` and by
`tether worker` (the Temporal worker), which is why it lives below both. `tether run` and
`tether chat` mount the same policy — deny rules, hooks, permission modes; they differ only in
who answers an ask: the user at the terminal in `chat`; nobody in `run`, where the call is
refused and the model is told

    tool "bash" requires approval, but no approval channel is available (tether run is
    non-interactive; allow it with --allow 'Bash(npm test)' or --yolo)

so it can try something else. The rule shown is the narrowest that would allow the call; when
an ask rule matched neither flag helps (an ask rule asks in every mode), nor when the permission
rules would not ask at all (a hook asked): `tether chat` is suggested then. The same hint goes to
stderr for the user.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from ..core.visible import visible
from ..kernel import Context
from ..plugins.approval import Approval
from ..plugins.permissions import Permissions

if TYPE_CHECKING:
    from ..plugins.approval import ApprovalQuestion

__all__ = ["YOLO_NOTICE", "apply_flags", "refuse_unattended", "unattended_note"]

YOLO_NOTICE: Final = "tether: --yolo: tool calls run without asking; deny rules still hold"


def apply_flags(ctx: Context, *, yolo: bool, allow: Sequence[str]) -> None:
    """Switch to `bypassPermissions` for `--yolo` (with its notice on stderr) and add each
    `--allow` rule. Raises ValueError (one line) for a bad rule, or for `--allow` when the
    config has no `permissions` plugin."""
    permissions = ctx.get("permissions")
    if not isinstance(permissions, Permissions):
        if allow:
            raise ValueError(
                "--allow needs the permissions plugin, and the configuration does not mount it"
            )
    else:
        for rule in allow:
            try:
                permissions.allow(rule)
            except ValueError as exc:
                raise ValueError(f"--allow: {exc}") from None
        if yolo:
            permissions.set_mode("bypassPermissions")
    if yolo:
        sys.stderr.write(YOLO_NOTICE + "\n")
        sys.stderr.flush()


def unattended_note(
    question: ApprovalQuestion, *, rules_ask: bool, asking_rule: str | None = None
) -> str:
    """What `tether run` appends to the `unavailable` denial; `rules_ask` is whether the
    permission mode asks about the call (so `--yolo` would allow it); `asking_rule` the ask
    rule that asks instead (it asks in every mode: no flag helps)."""
    if asking_rule is not None:
        return (
            f'tether run is non-interactive and the rule "{asking_rule}" asks in every mode; '
            "answer it in tether chat"
        )
    if not rules_ask:
        return "tether run is non-interactive; answer it in tether chat"
    if question.session_rule is None:
        return "tether run is non-interactive; allow it with --yolo"
    rule = shlex.quote(question.session_rule)
    return f"tether run is non-interactive; allow it with --allow {rule} or --yolo"


def refuse_unattended(ctx: Context) -> None:
    """Make `ctx`'s `approval` service refuse asks with the note, also written to stderr (for
    the context's lifetime; nothing when the configuration has no approval service)."""
    approval = ctx.get("approval")
    if not isinstance(approval, Approval):
        return
    permissions = ctx.get("permissions")

    def note(question: ApprovalQuestion) -> str:
        verdict = (
            permissions.policy.verdict(question.tool_name, question.arguments)
            if isinstance(permissions, Permissions)
            else None
        )
        asking = verdict is not None and verdict.decision == "ask"
        rule = verdict.rule if verdict is not None and asking else None
        text = unattended_note(question, rules_ask=asking, asking_rule=rule)
        shown = visible(f'"{question.tool_name}" needs approval: {text}')
        sys.stderr.write(f"tether: {shown}\n")
        sys.stderr.flush()
        return text

    approval.refuse_unattended(note)
