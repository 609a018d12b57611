"""Issue 34 item 3 on the real tool pipeline: real files, a real shell, no prompter.

Contract: under `--yolo` (`bypassPermissions`) a `Read(...)` deny refuses `cat` of the denied
file (nothing is printed), a `Bash(rm:*)` deny refuses a shell fed `rm` on stdin (the file is
still there), and an ask rule asks (nobody can answer: the call is refused, the file untouched);
the `grep` and `glob` tools leave out the files a `Read(...)` deny denies when they search a
directory that holds them, as Claude Code's Grep and Glob do.
"""

from __future__ import annotations

from pathlib import Path

from tether import AbortController
from tether.kernel import Context
from tether.plugins.approval import Approval
from tether.plugins.permissions import Permissions
from tether.plugins.search import tools as search_tools
from tether.tools import ToolExecutionInput, ToolSuccess

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


async def test_grep_and_glob_leave_out_the_files_a_read_rule_denies(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    (project / "secrets").mkdir()
    (project / "secrets" / "key.txt").write_text("password=hunter2\n")
    (project / "notes.txt").write_text("password=see the vault\n")
    await ctx.plugin(search_tools, {"root": str(project)})
    await mount(ctx, project, deny=["Read(./secrets/**)"])

    async def call(name: str, arguments: dict[str, str]) -> str:
        result = await ctx.tools.execute(
            ToolExecutionInput(
                call_id=name,
                name=name,
                arguments=arguments,
                signal=AbortController().signal,
                agent=agent,
            )
        )
        assert isinstance(result, ToolSuccess), text_of(result)
        return text_of(result)

    found = await call("grep", {"pattern": "password", "output_mode": "content"})
    listed = await call("glob", {"pattern": "**/*.txt"})

    assert "notes.txt" in found
    assert "hunter2" not in found
    assert "key.txt" not in found
    assert "notes.txt" in listed
    assert "key.txt" not in listed
