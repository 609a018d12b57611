"""The `permissions` plugin on the real pipeline, next to hooks and the approval service.

Contract: the plugin's `tools/pre-execute` listener returns a deny at once and otherwise merges
its decision with the rest of the waterfall (deny > ask > allow), so — in either registration
order — a deny rule beats an allow rule and a hook's allow, a hook's deny beats an allow rule,
and a hook's allow pre-approves nothing (the default mode still asks). An ask goes to the
`approval` service; without a prompter it answers `unavailable` (or the configured
`non_interactive` answer). Claude Code settings files contribute their `permissions` rules; a bad
allow rule there is logged and skipped, while a settings file that cannot be read or a bad deny
or ask rule fails the mount with one line naming the file (fail closed), as does a bad rule in
tether's own config. Session rules allow from then on.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from tether.kernel import ConfigError, Context, InvalidPluginConfig
from tether.plugins.approval import Approval
from tether.plugins.hooks import claude_code
from tether.plugins.permissions import Permissions
from tether.tools import ToolSuccess

from ..hooks._support import FakeAgent, call_bash, python_hook, text_of, write_settings

UNAVAILABLE = 'Error: tool "bash" requires approval, but no approval channel is available'


def hook_decision(project: Path, decision: str, reason: str) -> None:
    output = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }
    script = python_hook(
        project / "hooks",
        f"{decision}.py",
        f"import sys\nsys.stdin.read()\nprint({json.dumps(output)!r})",
    )
    write_settings(
        project,
        {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": str(script)}]}
            ]
        },
    )


async def mount(ctx: Context, project: Path, order: str, **rules: Any) -> None:
    """Mount the hook bridge and the permissions plugin in `order` ("hooks-first" or not)."""
    config = {"workspace": str(project), "claude_settings": False, **rules}
    if order == "hooks-first":
        await ctx.plugin(claude_code, {"project_dir": str(project)})
        await ctx.plugin(Permissions, config)
    else:
        await ctx.plugin(Permissions, config)
        await ctx.plugin(claude_code, {"project_dir": str(project)})
    await ctx.plugin(Approval)


ORDERS = pytest.mark.parametrize("order", ["hooks-first", "permissions-first"])


@ORDERS
async def test_a_deny_rule_beats_an_allow_rule_and_a_hooks_allow(
    ctx: Context, project: Path, agent: FakeAgent, order: str
) -> None:
    hook_decision(project, "allow", "the hook says yes")
    await mount(ctx, project, order, allow=["Bash"], deny=["Bash(rm:*)"])

    result = await call_bash(ctx, "rm -rf build", agent=agent)

    assert text_of(result) == 'Error: denied by permission rule "Bash(rm:*)"'


@ORDERS
async def test_a_hooks_deny_beats_an_allow_rule(
    ctx: Context, project: Path, agent: FakeAgent, order: str
) -> None:
    hook_decision(project, "deny", "the hook says no")
    await mount(ctx, project, order, allow=["Bash"])

    result = await call_bash(ctx, "echo hi", agent=agent)

    assert text_of(result) == "Error: the hook says no"


@ORDERS
async def test_a_hooks_allow_pre_approves_nothing(
    ctx: Context, project: Path, agent: FakeAgent, order: str
) -> None:
    hook_decision(project, "allow", "the hook says yes")
    await mount(ctx, project, order)

    result = await call_bash(ctx, "touch ran", agent=agent)

    assert text_of(result) == UNAVAILABLE
    assert not (project / "ran").exists()


@ORDERS
async def test_a_hooks_ask_beats_an_allow_rule(
    ctx: Context, project: Path, agent: FakeAgent, order: str
) -> None:
    hook_decision(project, "ask", "the hook wants a human")
    await mount(ctx, project, order, allow=["Bash"])

    result = await call_bash(ctx, "touch ran", agent=agent)

    assert text_of(result) == UNAVAILABLE


async def test_an_allow_rule_runs_the_call_without_asking(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    await mount(ctx, project, "permissions-first", allow=["Bash(echo:*)"])

    result = await call_bash(ctx, "echo allowed", agent=agent)

    assert isinstance(result, ToolSuccess)
    assert text_of(result).startswith("allowed")


async def test_a_configured_non_interactive_answer_replaces_unavailable(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    await ctx.plugin(Permissions, {"workspace": str(project), "claude_settings": False})
    await ctx.plugin(Approval, {"non_interactive": "deny"})

    result = await call_bash(ctx, "touch ran", agent=agent)

    assert text_of(result) == 'Error: the user rejected tool "bash"'


async def test_a_session_rule_allows_the_next_identical_call(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    await ctx.plugin(Permissions, {"workspace": str(project), "claude_settings": False})
    await ctx.plugin(Approval)
    permissions: Permissions = ctx.permissions

    assert text_of(await call_bash(ctx, "/bin/echo again", agent=agent)) == UNAVAILABLE
    rule = permissions.suggest_rule("bash", {"command": "/bin/echo again", "description": "x"})
    assert rule == "Bash(/bin/echo again)"
    permissions.allow_for_session(rule)

    result = await call_bash(ctx, "/bin/echo again", agent=agent, call_id="c2")
    assert text_of(result).startswith("again")
    assert permissions.session_rules == ("Bash(/bin/echo again)",)


async def test_claude_code_settings_contribute_their_rules_and_bad_allow_rules_are_skipped(
    ctx: Context, project: Path, agent: FakeAgent, caplog: pytest.LogCaptureFixture
) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(
        json.dumps({"permissions": {"allow": ["Bash(echo:*)", "Bash("], "deny": ["Bash(rm:*)"]}})
    )

    with caplog.at_level(logging.WARNING, logger="tether.plugins.permissions"):
        await ctx.plugin(Permissions, {"workspace": str(project)})

    assert [r.getMessage() for r in caplog.records] == [
        f'permissions: skipping permissions.allow[1] in "{settings}": "Bash(" is not a permission '
        'rule: write Tool or Tool(specifier), e.g. "Bash(git status:*)" or "Read(./src/**)"'
    ]
    assert isinstance(await call_bash(ctx, "echo ok", agent=agent), ToolSuccess)
    denied = await call_bash(ctx, "rm x", agent=agent, call_id="c2")
    assert text_of(denied) == 'Error: denied by permission rule "Bash(rm:*)"'


def unusable(path: Path, problem: str) -> str:
    return (
        f"{path}: {problem}; fix the file or move it away (tether does not run without the "
        "permission rules and hooks it may hold)"
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            '{"permissions": ' + "[" * 5000 + "]" * 5000 + "}",
            "not valid JSON (JSON nested too deeply to read; simplify the file)",
        ),
        (
            '{"permissions": {"deny": ["Bash(rm:*)"]',
            "not valid JSON (Expecting ',' delimiter: line 1 column 40 (char 39))",
        ),
        ("[]", "not a JSON object"),
        ('{"permissions": []}', '"permissions" is not an object'),
        ('{"permissions": {"deny": "Bash(rm:*)"}}', '"permissions.deny" is not a list of rules'),
        (
            '{"permissions": {"deny": ["Bash("]}}',
            'permissions.deny[0]: "Bash(" is not a '
            'permission rule: write Tool or Tool(specifier), e.g. "Bash(git status:*)" or '
            '"Read(./src/**)"',
        ),
        (
            '{"permissions": {"ask": [7]}}',
            "permissions.ask[0]: a permission rule is a string, got int",
        ),
    ],
    ids=["too deep", "not JSON", "not an object", "section", "deny a string", "bad deny", "ask"],
)
async def test_a_settings_file_that_cannot_be_read_fails_the_mount_naming_it(
    ctx: Context, project: Path, text: str, problem: str
) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(text)

    with pytest.raises(ConfigError) as raised:
        await ctx.plugin(Permissions, {"workspace": str(project), "allow": ["Bash(echo:*)"]})

    assert str(raised.value) == unusable(settings, problem)


async def test_ignored_rules_are_logged_once_at_mount(
    ctx: Context, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="tether.plugins.permissions"):
        await ctx.plugin(
            Permissions,
            {
                "workspace": str(project),
                "claude_settings": False,
                "allow": ["mcp__github__create_issue(x)"],
            },
        )

    assert [r.getMessage() for r in caplog.records] == [
        'permissions: ignoring rule "mcp__github__create_issue(x)" (MCP rules take no specifier)'
    ]


async def test_a_bad_rule_in_the_config_fails_the_mount_with_one_line(ctx: Context) -> None:
    with pytest.raises(InvalidPluginConfig) as raised:
        await ctx.plugin(Permissions, {"deny": ["Read(./.env)", "Bash("]})

    assert 'deny[1]: "Bash(" is not a permission rule' in str(raised.value)


async def test_yolo_mode_is_explicit_and_switchable(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    await ctx.plugin(
        Permissions,
        {"workspace": str(project), "claude_settings": False, "deny": ["Bash(rm:*)"]},
    )
    await ctx.plugin(Approval)
    permissions: Permissions = ctx.permissions
    assert permissions.mode == "default"

    permissions.set_mode("yolo")

    assert permissions.mode == "bypassPermissions"
    assert isinstance(await call_bash(ctx, "echo free", agent=agent), ToolSuccess)
    denied = await call_bash(ctx, "rm x", agent=agent, call_id="c2")
    assert text_of(denied) == 'Error: denied by permission rule "Bash(rm:*)"'
