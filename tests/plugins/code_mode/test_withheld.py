"""The `tools:sdk` section leaves out the tools a whole-tool deny rule withholds from the model
(issue 34: the model is not sent them natively, and Code Mode's stubs do not advertise them
either); a rule with a pattern keeps the tool, as in the native tool list."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.kernel import Context
from tether.plugins.code_mode import plugin as code_mode
from tether.plugins.fs import plugin as fs_plugin
from tether.plugins.permissions import Permissions
from tether.plugins.shell import bash as bash_plugin
from tether.plugins.shell import plugin as shell_plugin
from tether.tools import ToolRuntime


async def sdk_section(workspace: Path, deny: list[str]) -> str:
    ctx = Context()
    try:
        await ctx.plugin(ToolRuntime, {"mode": "code"})
        await ctx.plugin(shell_plugin, {"cwd": str(workspace)})
        await ctx.plugin(bash_plugin)
        await ctx.plugin(fs_plugin, {"root": str(workspace)})
        config = {"workspace": str(workspace), "claude_settings": False, "deny": deny}
        await ctx.plugin(Permissions, config)
        await ctx.plugin(code_mode)
        sections: list[str] = ctx.prompt_sections.sections()
    finally:
        await ctx.dispose()
    return sections[1]


async def test_a_tool_a_deny_rule_names_whole_has_no_stub(project: Path) -> None:
    sdk = await sdk_section(project, ["Bash"])

    assert "async def bash(" not in sdk
    assert "async def read(" in sdk


async def test_a_deny_rule_with_a_pattern_keeps_the_tools_stub(project: Path) -> None:
    sdk = await sdk_section(project, ["Bash(rm:*)"])

    assert "async def bash(" in sdk


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh `~` so that the user's own settings are never read."""
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
