"""The slash commands that change what the agent may do: `/permissions` and `/add-dir`.

Owns their parsing and what they print. `/permissions` alone lists the mode, the rules and the
session grants; `/permissions add allow|ask|deny RULE` saves the rule to the workspace's
`.claude/settings.local.json` (where "don't ask again" saves, read at every start) and applies
it at once; `/permissions remove allow|ask|deny RULE` takes it out of that file and stops
applying it — unless the rule is also written elsewhere (another settings file, the tether
config), which is then named and the rule keeps holding. `/add-dir PATH` gives the model the
access to PATH it has to the workspace for the rest of the chat, as `--add-dir` does: the file
tools reach it (the `fs` plugin's `add_directory`) and it is a writable root of the sandbox (the
shell's `add_writable_root`), its protected paths read-only (add it to
`permissions.additionalDirectories` to keep it). The rules themselves are the `permissions`
plugin's.
"""

from __future__ import annotations

from typing import Final

from rich.console import Console

from ...agent.api import Agent
from ...core.errors import HarnessError
from ...plugins.permissions import Permissions
from ..visible import visible_markup

__all__ = ["add_dir", "permissions"]

_USAGE: Final = (
    "/permissions lists the rules; /permissions add allow|ask|deny RULE saves one; "
    "/permissions remove allow|ask|deny RULE takes one out (e.g. /permissions add deny "
    "Bash(git push:*))"
)


def permissions(console: Console, agent: Agent, argument: str) -> None:
    """`/permissions [add|remove KIND RULE]`: see the module note."""
    service = agent.context.get("permissions")
    if not isinstance(service, Permissions):
        console.print("[dim]no permission rules are mounted: every call runs[/dim]")
        return
    if not argument:
        _list(console, service)
        return
    action, _, rest = argument.partition(" ")
    kind, _, rule = rest.strip().partition(" ")
    rule = rule.strip()
    if action not in ("add", "remove") or kind not in ("allow", "ask", "deny") or not rule:
        console.print(f"[yellow]{visible_markup(_USAGE)}[/yellow]", highlight=False)
        return
    from ...plugins.permissions.saved import SettingsNotSaved  # saving rules: on demand (issue 36)

    try:
        if action == "add":
            path = service.add_lasting(kind, rule)
            console.print(
                f"[green]{kind} {visible_markup(rule)}[/green] "
                f"[dim]saved to {visible_markup(str(path))}[/dim]",
                highlight=False,
            )
            return
        removed, elsewhere = service.remove_lasting(kind, rule)
    except (ValueError, SettingsNotSaved) as exc:
        console.print(f"[yellow]{visible_markup(str(exc))}[/yellow]", highlight=False)
        return
    if removed is None:
        console.print(
            f"[yellow]{kind} {visible_markup(rule)} is not in "
            f"{visible_markup(str(service.settings_file))}; "
            "rules from other files or the tether config are edited there[/yellow]",
            highlight=False,
        )
    elif elsewhere:
        console.print(
            f"[yellow]removed {kind} {visible_markup(rule)} from "
            f"{visible_markup(str(removed))}, but it still "
            f"holds: it is also in {visible_markup(', '.join(elsewhere))}[/yellow]",
            highlight=False,
        )
    else:
        console.print(
            f"removed {kind} {visible_markup(rule)} [dim]from {visible_markup(str(removed))}[/dim]",
            highlight=False,
        )


def _list(console: Console, service: Permissions) -> None:
    console.print(f"mode: {visible_markup(service.mode)}", highlight=False)
    for kind, rules in service.policy.listed().items():
        shown = visible_markup(", ".join(rules)) if rules else "[dim]none[/dim]"
        console.print(f"{kind}: {shown}", highlight=False)
    saved = service.saved_rules
    if saved:
        console.print(
            f"saved (don't ask again): {visible_markup(', '.join(saved))} [dim]in "
            f"{visible_markup(str(service.settings_file))}[/dim]",
            highlight=False,
        )
    grants = service.session_rules
    console.print(
        f"session grants: {visible_markup(', '.join(grants)) if grants else '[dim]none[/dim]'}",
        highlight=False,
    )
    console.print(f"[dim]{visible_markup(_USAGE)}[/dim]", highlight=False)


def add_dir(console: Console, agent: Agent, argument: str) -> None:
    """`/add-dir PATH`: see the module note."""
    if not argument:
        console.print("[yellow]/add-dir needs a directory: /add-dir ../shared[/yellow]")
        return
    add = getattr(agent.context.get("fs"), "add_directory", None)
    if not callable(add):
        console.print("[yellow]/add-dir needs the fs plugin, and it is not mounted[/yellow]")
        return
    try:
        real = add(argument)
    except HarnessError as exc:
        console.print(f"[yellow]/add-dir: {visible_markup(str(exc))}[/yellow]", highlight=False)
        return
    writable = getattr(agent.context.get("shell"), "add_writable_root", None)
    if callable(writable):
        writable(str(real))
    console.print(
        f"[green]the model may read and write files under {visible_markup(str(real))}[/green] "
        "[dim](as in the workspace, where the sandbox allows; for this chat: add it to "
        "permissions.additionalDirectories in .claude/settings.json to keep it)[/dim]",
        highlight=False,
    )
