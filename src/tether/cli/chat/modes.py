"""The permission mode in the chat: what Shift+Tab does and how the mode is shown.

Owns `mode_label` (the line under the prompt and in the live status, as Claude Code words it:
`⏵⏵ accept edits on (shift+tab to cycle)`, `⏸ plan mode on (shift+tab to cycle)`; nothing in the
default mode) and `cycle_mode` (the `permissions` service's next mode in the cycle default →
acceptEdits → plan → default: `tether.plugins.permissions.modes`). Shift+Tab at the prompt is
`tether.cli.chat.input`'s binding, during a turn `tether.cli.chat.keys`'.
"""

from __future__ import annotations

from typing import Final

from ...kernel import Context
from ...plugins.permissions import Permissions
from ...plugins.permissions.modes import next_mode

__all__ = ["current_mode", "cycle_mode", "mode_label"]

_LABELS: Final = {
    "acceptEdits": "⏵⏵ accept edits on (shift+tab to cycle)",
    "plan": "⏸ plan mode on (shift+tab to cycle)",
    "bypassPermissions": "⏵⏵ bypass permissions on (shift+tab to cycle)",
    "dontAsk": "dontAsk: asks are refused (shift+tab to cycle)",
}


def mode_label(mode: str | None) -> str | None:
    """The line that shows `mode`; None for the default mode (or no permissions plugin)."""
    return None if mode is None else _LABELS.get(mode)


def current_mode(ctx: Context | None) -> str | None:
    """The mode of `ctx`'s `permissions` service; None without one."""
    permissions = None if ctx is None else ctx.get("permissions")
    return permissions.mode if isinstance(permissions, Permissions) else None


def cycle_mode(ctx: Context | None) -> str | None:
    """Switch to the next mode; the new mode, or None without a `permissions` service."""
    permissions = None if ctx is None else ctx.get("permissions")
    if not isinstance(permissions, Permissions):
        return None
    permissions.set_mode(next_mode(permissions.mode))
    return permissions.mode
