"""Subagent types: the built-in `general-purpose`, Claude Code's `.claude/agents/*.md` files read
unchanged, and types from the plugin config.

Contract (issue 16 §3; Claude Code's subagent file format): YAML frontmatter `name`,
`description`, optional `tools` (a comma list of Claude Code tool names, mapped to tether's) and
`model` (`inherit` and Claude Code's aliases mean the caller's model), other keys ignored; the
body is the system prompt. Frontmatter that is not strict YAML — the common unquoted
`description: Use this agent when ... Examples: <example>Context: ...` — is read as Claude Code
reads it. A file that cannot be used is skipped with one warning naming the file and the
problem. Precedence: config over project files over user files over the built-in type. The
`task` tool's description lists every type with its tools.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tether import AbortController, ToolOutput, define_tool
from tether.agent.subagents import (
    GENERAL_PURPOSE,
    AgentType,
    SubagentsConfig,
    build_catalog,
    load_agent_dir,
    parse_agent_file,
)
from tether.agent.subagents import plugin as subagents_plugin
from tether.kernel import Context
from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply
from tether.tools import ToolRuntime

from ._support import Rig, Router, task_call

FILES = Path(__file__).parent / "claude_agents"
REVIEWER_MD = (FILES / "code-reviewer.md").read_text()
"""Shaped like the example in Claude Code's subagent documentation (strict YAML)."""
COMMUNITY_MD = (FILES / "docs-keeper.md").read_text()
"""Shaped like the many community agent files whose unquoted description holds `: `."""


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    return path


def test_a_claude_code_agent_file_is_read_unchanged(tmp_path: Path) -> None:
    path = write(tmp_path / ".claude" / "agents", "code-reviewer.md", REVIEWER_MD)

    (loaded,) = load_agent_dir(path.parent)

    assert loaded == AgentType(
        name="code-reviewer",
        description=(
            "Expert code review specialist. Proactively reviews code for quality, security, and"
            " maintainability. Use immediately after writing or modifying code."
        ),
        system_prompt=(
            "You are a senior code reviewer ensuring high standards of code quality and"
            " security.\n\nWhen invoked:\n1. Run git diff to see recent changes\n2. Focus on"
            " modified files"
        ),
        tools=("read", "grep", "glob", "bash"),
        model=None,
        source=str(path),
    )


def test_frontmatter_that_is_not_strict_yaml_is_read_as_claude_code_reads_it() -> None:
    loaded = parse_agent_file(COMMUNITY_MD, "docs-keeper.md")

    assert loaded.name == "docs-keeper"
    assert loaded.description.startswith(
        "Use this agent when project documentation needs review or edits. Examples: <example>"
        "Context: User added a feature."
    )
    assert loaded.tools == (
        "bash",
        "glob",
        "grep",
        "LS",
        "exit_plan_mode",  # Claude Code's ExitPlanMode is tether's plan tool
        "read",
        "edit",
        "write",
        "NotebookRead",
        "web_fetch",
        "todo_write",
        "web_search",
    )
    assert loaded.system_prompt == "You keep documentation accurate."


def test_a_named_model_is_kept_and_inherit_means_the_callers() -> None:
    named = parse_agent_file("---\nname: a\ndescription: d\nmodel: deepseek-reasoner\n---\n", "a")
    aliased = parse_agent_file("---\nname: b\ndescription: d\nmodel: sonnet\n---\n", "b")

    assert (named.model, aliased.model) == ("deepseek-reasoner", None)


def test_a_file_without_tools_inherits_every_tool() -> None:
    loaded = parse_agent_file("---\nname: a\ndescription: does a\n---\nBe brief.\n", "a.md")

    assert (loaded.tools, loaded.describe_tools({"read", "bash"})) == (None, "*")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: x\n", 'no frontmatter: the file must start with a "---" line'),
        ("---\nname: x\ndescription: y\n", 'the frontmatter has no closing "---" line'),
        ("---\ndescription: y\n---\n", 'the frontmatter has no "name"'),
        ("---\nname: x\n---\n", 'the frontmatter has no "description"'),
        ("---\nname: x\ndescription: ''\n---\n", '"description" must be a non-empty string'),
        (
            "---\nname: x\ndescription: y\ntools: {a: 1}\n---\n",
            '"tools" must be a comma-separated string or a list of tool names',
        ),
        (
            "---\nname: has space\ndescription: y\n---\n",
            '"name" must be letters, digits, "-", "_", "." or ":" (e.g. code-reviewer);'
            " got 'has space'",
        ),
    ],
)
def test_a_broken_file_is_skipped_with_one_warning_naming_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, text: str, problem: str
) -> None:
    directory = tmp_path / "agents"
    broken = write(directory, "broken.md", text)
    write(directory, "good.md", "---\nname: good\ndescription: fine\n---\nHi.\n")

    with caplog.at_level(logging.WARNING, logger="tether.agent.subagents"):
        loaded = load_agent_dir(directory)

    assert [t.name for t in loaded] == ["good"]
    assert [r.getMessage() for r in caplog.records] == [
        f'subagents: skipping agent file "{broken}": {problem}'
    ]


def test_config_beats_project_files_beats_user_files_beats_the_built_in(tmp_path: Path) -> None:
    user = tmp_path / "home-agents"
    project = tmp_path / "project"
    write(user, "a.md", "---\nname: general-purpose\ndescription: user gp\n---\n")
    write(user, "b.md", "---\nname: only-user\ndescription: user only\n---\n")
    write(user, "c.md", "---\nname: shared\ndescription: from user\n---\n")
    write(project / ".claude" / "agents", "c.md", "---\nname: shared\ndescription: project\n---\n")
    write(project / ".claude" / "agents", "d.md", "---\nname: both\ndescription: project\n---\n")
    config = SubagentsConfig(
        project_dir=str(project),
        user_agents_dir=str(user),
        agents={"both": {"description": "from config", "tools": "Read, Grep"}},  # type: ignore[dict-item]
    )

    catalog = build_catalog(config)

    described = {t.name: (t.description, t.tools) for t in catalog}
    assert described == {
        "both": ("from config", ("read", "grep")),
        "general-purpose": ("user gp", None),
        "only-user": ("user only", None),
        "shared": ("project", None),
    }


def test_without_discovery_only_the_built_in_and_configured_types_exist(tmp_path: Path) -> None:
    write(tmp_path / ".claude" / "agents", "x.md", "---\nname: x\ndescription: y\n---\n")
    config = SubagentsConfig(project_dir=str(tmp_path), discover=False)

    assert build_catalog(config).names() == ["general-purpose"]
    assert build_catalog(config).get("general-purpose") == GENERAL_PURPOSE


async def test_the_task_description_lists_every_type_with_its_tools(
    tmp_path: Path, server: ScriptedModelServer, router: Router
) -> None:
    write(tmp_path / "work" / ".claude" / "agents", "code-reviewer.md", REVIEWER_MD)
    rig = await Rig.start(tmp_path, server, router)
    try:
        description = rig.ctx.tools.get("task").description
    finally:
        await rig.aclose()

    lines = description.splitlines()
    start = lines.index("Available agent types and the tools they have access to:")
    assert lines[start + 1 : start + 3] == [
        "- code-reviewer: Expert code review specialist. Proactively reviews code for quality,"
        " security, and maintainability. Use immediately after writing or modifying code."
        " (Tools: read, grep, glob, bash)",
        f"- general-purpose: {GENERAL_PURPOSE.description} (Tools: *)",
    ]


def type_line(ctx: Any, name: str) -> str:
    description = ctx.tools.get("task").description
    return next(line for line in description.splitlines() if line.startswith(f"- {name}:"))


async def test_the_task_description_lists_only_tools_the_child_gets_and_follows_registrations(
    tmp_path: Path, server: ScriptedModelServer, router: Router
) -> None:
    issues = {"tools": ["read", "mcp__github__create_issue"], "disallowedTools": ["grep"]}
    rig = await Rig.start(
        tmp_path,
        server,
        router,
        subagents={"agents": {"filer": {"description": "Files issues.", **issues}}},
    )
    try:
        before = type_line(rig.ctx, "filer")
        remove = rig.ctx.tools.register(
            define_tool(
                name="mcp__github__create_issue",
                description="Create an issue.",
                parameters={"type": "object", "properties": {}},
                output=ToolOutput(),
                execute=lambda args, exec: "ok",
            )
        )
        after = type_line(rig.ctx, "filer")
        remove()
        gone = type_line(rig.ctx, "filer")
    finally:
        await rig.aclose()

    assert before == "- filer: Files issues. (Tools: read)"
    assert after == "- filer: Files issues. (Tools: read, mcp__github__create_issue)"
    assert gone == before


async def test_in_code_mode_the_task_description_says_children_get_run_code(
    tmp_path: Path, server: ScriptedModelServer, router: Router
) -> None:
    ctx = Context()
    await ctx.plugin(ToolRuntime, {"mode": "code"})
    await ctx.plugin(subagents_plugin, {"project_dir": str(tmp_path), "discover": False})
    try:
        line = type_line(ctx, "general-purpose")
    finally:
        await ctx.dispose()

    assert line.endswith("(Tools: run_code, whose programs call: *)")


@pytest.mark.slow
async def test_a_project_agent_file_drives_a_child_with_its_prompt_and_tools(
    tmp_path: Path,
    server: ScriptedModelServer,
    router: Router,
    caplog: pytest.LogCaptureFixture,
) -> None:
    write(tmp_path / "work" / ".claude" / "agents", "docs-keeper.md", COMMUNITY_MD)
    rig = await Rig.start(tmp_path, server, router)
    try:
        router.script(
            "parent task",
            tool_calls_reply(task_call("t1", "fix the docs", "docs-keeper")),
            text_reply("ok"),
        )
        router.script("fix the docs", text_reply("docs fixed"))
        parent = rig.parent()
        with caplog.at_level(logging.WARNING, logger="tether.agent.subagents"):
            outcome = await parent.run_turn("parent task", signal=AbortController().signal)
    finally:
        await rig.aclose()

    assert outcome.completed
    request: Any = router.seen["fix the docs"][0]
    tools = [tool["function"]["name"] for tool in request.body["tools"]]
    assert tools == ["bash", "read", "write", "edit", "grep", "glob"]  # registration order
    assert request.messages[0]["content"].startswith("You keep documentation accurate.")
    assert [r.getMessage() for r in caplog.records] == [
        'subagents: type "docs-keeper" ('
        + str(tmp_path / "work" / ".claude" / "agents" / "docs-keeper.md")
        + ") names tool(s) this agent does not have: LS, exit_plan_mode, NotebookRead,"
        " web_fetch, todo_write, web_search; its children run without them"
    ]
