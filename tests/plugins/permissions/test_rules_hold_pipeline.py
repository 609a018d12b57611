"""Issue 34 item 3 on the real tool pipeline: real files, a real shell, no prompter.

Contract: under `--yolo` (`bypassPermissions`) a `Read(...)` deny refuses `cat` of the denied
file (nothing is printed), a `Bash(rm:*)` deny refuses a shell fed `rm` on stdin (the file is
still there), and an ask rule asks (nobody can answer: the call is refused, the file untouched).
"""

from __future__ import annotations

from pathlib import Path

from tether.kernel import Context
from tether.plugins.approval import Approval
from tether.plugins.permissions import Permissions
from tether.tools import ToolSuccess

from ..hooks._support import FakeAgent, call_bash, text_of

UNAVAILABLE = 'Error: tool "bash" requires approval, but no approval channel is available'


async def mount(ctx: Context, project: Path, **rules: list[str]) -> None:
    config = {"workspace": str(project), "claude_settings": False, "mode": "yolo", **rules}
    await ctx.plugin(Permissions, config)
    await ctx.plugin(Approval)


async def test_cat_of_a_file_a_read_rule_denies_is_refused_under_yolo(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    (project / "secrets").mkdir()
    (project / "secrets" / "key.txt").write_text("hunter2\n")
    await mount(ctx, project, deny=["Read(./secrets/**)"])

    result = await call_bash(ctx, "cat secrets/key.txt", agent=agent)

    assert not isinstance(result, ToolSuccess)
    assert text_of(result) == (
        'Error: denied by permission rule "Read(./secrets/**)": the command reads '
        f'"{project}/secrets/key.txt"'
    )


async def test_a_shell_fed_rm_on_stdin_is_refused_and_the_file_stays(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    (project / "x").write_text("keep me\n")
    await mount(ctx, project, deny=["Bash(rm:*)"])

    for command in ("echo 'rm -f x' | bash", "bash <<< 'rm -f x'", "echo 'rm -f x' > s; sh -s < s"):
        result = await call_bash(ctx, command, agent=agent)
        assert text_of(result).startswith('Error: denied by permission rule "Bash(rm:*)"'), command

    assert (project / "x").read_text() == "keep me\n"


async def test_an_ask_rule_asks_under_yolo_and_the_file_stays(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    (project / "x").write_text("keep me\n")
    await mount(ctx, project, ask=["Bash(rm:*)"])

    result = await call_bash(ctx, "rm -f x", agent=agent)

    assert text_of(result) == UNAVAILABLE
    assert (project / "x").read_text() == "keep me\n"
