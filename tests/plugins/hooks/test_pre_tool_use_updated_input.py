"""A PreToolUse hook's `updatedInput` (Claude Code's `hookSpecificOutput.updatedInput`) with a
real hook script and the real `bash` tool.

Contract: with `permissionDecision` `allow` or `ask`, the last such hook's `updatedInput`
(Claude Code's names mapped back) is the call's arguments for the rest of the chain: the call
runs with it; it is validated as the model's arguments are (a bad one is `INVALID_ARGS`, the body
never runs); the permission rules judge it (a deny rule that names the changed command refuses
it); the approval question shows it, and what is approved is what runs. Without `allow` or
`ask` it is ignored, and the person running the agent is told so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tether.kernel import Context
from tether.plugins.approval import Approval, ApprovalQuestion
from tether.plugins.hooks import claude_code
from tether.plugins.permissions import Permissions
from tether.tools import ToolFailure, ToolSuccess

from ._support import FakeAgent, call_bash, python_hook, text_of, write_settings


def changing_hook(project: Path, updated: dict[str, Any], decision: str | None) -> None:
    """A PreToolUse hook on Bash that answers `decision` with `updatedInput: updated`."""
    specific: dict[str, Any] = {"hookEventName": "PreToolUse", "updatedInput": updated}
    if decision is not None:
        specific["permissionDecision"] = decision
    answer = {"hookSpecificOutput": specific}
    body = f"import json, sys\nsys.stdin.read()\nprint(json.dumps({answer!r}))"
    hook = python_hook(project / ".claude" / "hooks", "change.py", body)
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": str(hook)}]}]
    }
    write_settings(project, hooks)


async def mount(ctx: Context, project: Path) -> None:
    await ctx.plugin(claude_code, {"project_dir": str(project)})


def touch(name: str) -> dict[str, str]:
    return {"command": f"touch {name}", "description": "make a file"}


def names(project: Path) -> list[str]:
    return sorted(p.name for p in project.iterdir() if p.name != ".claude")


async def test_an_allow_with_updated_input_runs_the_changed_command(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    changing_hook(project, touch("changed.txt"), "allow")
    await mount(ctx, project)

    result = await call_bash(ctx, "touch asked.txt", agent=agent)

    assert isinstance(result, ToolSuccess)
    assert names(project) == ["changed.txt"]


async def test_an_invalid_updated_input_is_invalid_args_and_the_command_never_runs(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    changing_hook(project, {"command": ["touch", "changed.txt"]}, "allow")
    await mount(ctx, project)

    result = await call_bash(ctx, "touch asked.txt", agent=agent)

    assert isinstance(result, ToolFailure)
    assert result.code == "INVALID_ARGS"
    assert text_of(result).startswith("Error: invalid arguments")
    assert names(project) == []


async def test_a_deny_rule_judges_the_changed_input_not_the_models(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    (project / "keep.txt").write_text("kept\n")
    changing_hook(project, {"command": "rm keep.txt", "description": "d"}, "allow")
    await mount(ctx, project)
    config = {"workspace": str(project), "claude_settings": False, "mode": "yolo"}
    await ctx.plugin(Permissions, {**config, "deny": ["Bash(rm:*)"]})
    await ctx.plugin(Approval)

    result = await call_bash(ctx, "ls", agent=agent)

    assert isinstance(result, ToolFailure)
    assert result.code == "DENIED"
    assert names(project) == ["keep.txt"]


class Recorder:
    def __init__(self) -> None:
        self.asked: list[object] = []

    async def ask(self, question: ApprovalQuestion) -> str:
        self.asked.append(question.arguments)
        return "allow-once"


async def test_an_ask_with_updated_input_asks_about_the_changed_input_and_runs_it(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    changing_hook(project, touch("changed.txt"), "ask")
    await mount(ctx, project)
    await ctx.plugin(Approval)
    prompter = Recorder()
    ctx.approval.attach(prompter)

    result = await call_bash(ctx, "touch asked.txt", agent=agent)

    assert isinstance(result, ToolSuccess)
    assert prompter.asked == [touch("changed.txt")]
    assert names(project) == ["changed.txt"]


async def test_an_updated_input_without_allow_or_ask_is_ignored_with_a_notice(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    notices: list[tuple[str, str]] = []
    agent.notify = lambda source, text: notices.append((source, text))  # type: ignore[attr-defined]
    changing_hook(project, touch("changed.txt"), None)
    await mount(ctx, project)

    result = await call_bash(ctx, "touch asked.txt", agent=agent)

    assert isinstance(result, ToolSuccess)
    assert names(project) == ["asked.txt"]
    assert notices == [
        (
            "PreToolUse hook change.py",
            "requested updatedInput without permissionDecision allow or ask (ignored, as in "
            "Claude Code)",
        )
    ]
