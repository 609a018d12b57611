"""Claude Code's permission modes in the policy (issue 34 item 2; `permissions.modes`).

Contract: Shift+Tab's cycle is default → acceptEdits → plan → default (any other mode goes to
default). acceptEdits allows the edit tools and a bash line of common fs commands (`mkdir`,
`touch`, `mv`, `cp`, `rm`, `rmdir`) whose operands are relative paths in the workspace; an
absolute path, `~`, `..`, an option carrying a path (`--target-directory=/x`), the workspace
itself, a variable, or a write redirection makes it ask. plan allows read-only tools and
read-only commands, denies everything else (deny rules still first) with the reason, and asks
before `exit_plan_mode` — or allows it where nobody can accept (`plan_needs_approval` off);
outside plan mode `exit_plan_mode` is allowed (its body says there is nothing to leave). The
plugin registers `exit_plan_mode` once the mode is plan; an accepted plan switches to default.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.core.json import JsonValue
from tether.core.signals import AbortController
from tether.kernel import Context
from tether.plugins.approval import Approval, ApprovalQuestion
from tether.plugins.hooks import ToolNames
from tether.plugins.permissions import PermissionPolicy, Permissions, canonical_mode, parse_rule
from tether.plugins.permissions.modes import next_mode
from tether.tools import Allow, Ask, Deny, ToolExecutionInput, ToolRuntime, ToolSuccess

from ..hooks._support import FakeAgent

WS = Path("/work/project")


def policy(mode: str, *, deny: tuple[str, ...] = ()) -> PermissionPolicy:
    rules = [parse_rule(t, names=ToolNames(), workspace=WS) for t in deny]
    return PermissionPolicy(deny=rules, mode=canonical_mode(mode), workspace=WS)


def bash(command: str) -> dict[str, JsonValue]:
    return {"command": command, "description": "d"}


@pytest.mark.parametrize(
    ("mode", "after"),
    [
        ("default", "acceptEdits"),
        ("acceptEdits", "plan"),
        ("plan", "default"),
        ("dontAsk", "default"),
        ("bypassPermissions", "default"),
    ],
)
def test_shift_tab_cycles_default_accept_edits_plan(mode: str, after: str) -> None:
    assert next_mode(mode) == after


@pytest.mark.parametrize(
    "command",
    [
        "mkdir -p src/new",
        "touch a.txt b.txt",
        "mv old.txt new.txt",
        "cp -r src dst && rm -rf dst/tmp",
        "mkdir out && ls out",
        "rmdir empty",
    ],
)
def test_accept_edits_allows_fs_commands_on_workspace_paths(command: str) -> None:
    assert isinstance(policy("acceptEdits").decide("bash", bash(command)), Allow)


@pytest.mark.parametrize(
    "command",
    [
        "touch /etc/x",
        "rm ~/x",
        "rm ../x",
        "cp --target-directory=/etc a",
        "rm -rf .",
        "rm $X",
        "touch *.txt",
        "mkdir a > log",
        "X=1 touch a",
        "chmod +x a",
    ],
)
def test_accept_edits_asks_for_anything_else(command: str) -> None:
    assert isinstance(policy("acceptEdits").decide("bash", bash(command)), Ask)


def test_default_asks_for_fs_commands() -> None:
    assert isinstance(policy("default").decide("bash", bash("mkdir out")), Ask)


def test_plan_allows_read_only_tools_and_commands() -> None:
    plan = policy("plan")

    assert isinstance(plan.decide("read", {"file_path": "a.txt"}), Allow)
    assert isinstance(plan.decide("bash", bash("git status && cat a.txt")), Allow)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [("bash", bash("touch x")), ("write", {"file_path": "a", "content": ""}), ("web_fetch", {})],
)
def test_plan_denies_what_is_not_read_only_with_the_reason(tool: str, arguments: object) -> None:
    decision = policy("plan").decide(tool, arguments)  # type: ignore[arg-type]

    assert decision == Deny(
        f'permission mode "plan" allows only read-only tools, not "{tool}": explore, then '
        "present the plan with exit_plan_mode and wait for it to be accepted"
    )


def test_a_deny_rule_comes_first_in_plan_mode() -> None:
    decision = policy("plan", deny=("Read",)).decide("read", {"file_path": "a.txt"})

    assert decision == Deny('denied by permission rule "Read"')


def test_presenting_the_plan_asks() -> None:
    assert isinstance(policy("plan").decide("exit_plan_mode", {"plan": "p"}), Ask)


def test_presenting_the_plan_is_allowed_where_nobody_can_accept_it() -> None:
    plan = policy("plan")
    plan.plan_needs_approval = False

    assert isinstance(plan.decide("exit_plan_mode", {"plan": "p"}), Allow)


def test_exit_plan_mode_outside_plan_mode_is_allowed() -> None:
    assert isinstance(policy("default").decide("exit_plan_mode", {"plan": "p"}), Allow)


async def call(
    ctx: Context, name: str, arguments: dict[str, JsonValue], agent: object | None = None
) -> object:
    return await ctx.tools.execute(
        ToolExecutionInput(
            call_id="c1",
            name=name,
            arguments=arguments,
            signal=AbortController().signal,
            agent=agent,
        )
    )


async def test_the_plan_tool_is_registered_once_the_mode_is_plan(tmp_path: Path) -> None:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(Permissions, {"workspace": str(tmp_path), "claude_settings": False})
    try:
        before = ctx.tools.get("exit_plan_mode")
        ctx.permissions.set_mode("plan")

        assert before is None
        assert ctx.tools.get("exit_plan_mode") is not None
    finally:
        await ctx.dispose()


async def test_an_accepted_plan_switches_to_default(tmp_path: Path, agent: FakeAgent) -> None:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(
        Permissions, {"workspace": str(tmp_path), "claude_settings": False, "mode": "plan"}
    )
    await ctx.plugin(Approval)
    questions: list[ApprovalQuestion] = []

    class Yes:
        async def ask(self, question: ApprovalQuestion) -> str:
            questions.append(question)
            return "allow-once"

    ctx.approval.attach(Yes())
    try:
        result = await call(ctx, "exit_plan_mode", {"plan": "1. do it"}, agent)

        assert isinstance(result, ToolSuccess)
        assert [q.tool_name for q in questions] == ["exit_plan_mode"]
        assert ctx.permissions.mode == "default"
    finally:
        await ctx.dispose()


async def test_a_plan_nobody_can_accept_goes_to_on_plan_and_the_mode_stays(
    tmp_path: Path,
) -> None:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(
        Permissions, {"workspace": str(tmp_path), "claude_settings": False, "mode": "plan"}
    )
    plans: list[str] = []
    ctx.permissions.on_plan = plans.append
    try:
        result = await call(ctx, "exit_plan_mode", {"plan": "1. do it"})

        assert isinstance(result, ToolSuccess)
        assert (plans, ctx.permissions.mode) == (["1. do it"], "plan")
    finally:
        await ctx.dispose()
