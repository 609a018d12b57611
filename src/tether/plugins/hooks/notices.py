"""What a person running the agent should see about a hook run, and how it reaches them.

Owns `hook_name` (how a person recognizes a hook: its script's file name), `run_notices` (why a
run failed — it never blocks then —, what it wrote to stderr on success, its `systemMessage`,
what tether ignored) and `tell` (through `agent.notify`, the front end's screen; without a front
end, a log warning). Does not run hooks (`runner`) nor decide anything from them (`merge`).
"""

from __future__ import annotations

import logging
import os
import shlex

from ...core.timeout import format_ms
from .runner import HookRun

__all__ = ["hook_name", "run_notices", "tell"]

_log = logging.getLogger("tether.plugins.hooks")

_APPLIES_UPDATED_INPUT = frozenset({"PreToolUse", "PermissionRequest"})


def short_command(command: str) -> str:
    line = " ".join(command.split())
    return line if len(line) <= 200 else line[:199] + "…"


def hook_name(command: str) -> str:
    """How a person recognizes a hook: its script's file name (`lint.sh` for
    `"$CLAUDE_PROJECT_DIR"/.claude/hooks/lint.sh --fix`), else the command's first word."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    script = next((w for w in words if "/" in w), None)
    if script is not None:
        return os.path.basename(script.rstrip("/")) or script
    return words[0] if words else short_command(command)


def run_notices(run: HookRun, limit_ms: float, point: str = "") -> list[str]:
    """What the person running the agent should see about one hook run at `point`: why it
    failed (it never blocks then), what it wrote to stderr on success (its warnings), its
    `systemMessage`, and what tether ignored (an `updatedInput` of another event than
    PermissionRequest and PreToolUse, a PreToolUse one without allow or ask)."""
    output = run.output
    notices: list[str] = []
    if run.timed_out:
        notices.append(f"timed out after {format_ms(limit_ms)}ms and was killed (non-blocking)")
    elif run.aborted:
        return []
    elif run.killed_by is not None:
        notices.append(f"was killed by {run.killed_by} (non-blocking)")
    elif output.exit_code is None:
        notices.append(f"could not run (non-blocking): {output.stderr}")
    elif output.exit_code not in (0, 2):
        first = output.stderr.splitlines()[0] if output.stderr else "no stderr"
        notices.append(f"exited {output.exit_code} (non-blocking): {first}")
    elif output.exit_code == 0 and output.stderr:
        notices.append(first_lines(output.stderr))
    if output.system_message is not None:
        notices.append(output.system_message)
    if output.updated_input is not None and point not in _APPLIES_UPDATED_INPUT:
        notices.append("requested updatedInput, which tether does not honour yet (ignored)")
    elif (
        point == "PreToolUse"
        and output.updated_input is not None
        and output.decision not in ("allow", "ask")
    ):
        notices.append(
            "requested updatedInput without permissionDecision allow or ask (ignored, as in "
            "Claude Code)"
        )
    return notices


def first_lines(text: str, limit: int = 5) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    more = len(lines) - limit
    return "\n".join(lines[:limit] + ([f"… {more} more lines"] if more > 0 else []))


def tell(agent: object | None, source: str, notices: list[str]) -> None:
    """Show `notices` to the person running `agent` (`agent.notify`: the front end's screen);
    without a front end, log them."""
    notify = getattr(agent, "notify", None)
    for text in notices:
        if callable(notify):
            notify(source, text)
        else:
            _log.warning("hooks-claude-code: %s: %s", source, text)
