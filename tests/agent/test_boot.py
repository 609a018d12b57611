"""The shared boot (`tether.agent.boot.start`): which built-ins an agent context gets."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tether.agent.boot import BUILTINS, builtin_entries, start
from tether.kernel.boot import resolve_plugin
from tether.kernel.config_models import is_pydantic_model

PATIENCE_S = 60.0


async def test_an_agent_context_offers_the_task_tool(tmp_path: Path) -> None:
    ctx = await start(cwd=tmp_path, home=tmp_path / "home", agent=True)
    try:
        assert ctx.tools.get("task") is not None
    finally:
        await ctx.dispose()


async def test_without_leaves_a_builtin_out(tmp_path: Path) -> None:
    ctx = await start(
        cwd=tmp_path, home=tmp_path / "home", agent=True, without=frozenset({"subagents"})
    )
    try:
        assert ctx.tools.get("task") is None
        assert ctx.tools.get("bash") is not None
    finally:
        await ctx.dispose()


def test_no_builtins_config_is_a_pydantic_model() -> None:
    """Issue 36: a built-in whose config is a pydantic model would import pydantic at every
    boot (its config is validated there); every built-in's is a `ConfigValue` (or a
    `ModelValue`), made without pydantic from plainly valid values."""
    pydantic_configs = {
        plugin_id
        for plugin_id, module in BUILTINS
        if is_pydantic_model(getattr(resolve_plugin(module, entry_points=()), "Config", None))
    }

    assert pydantic_configs == set()


VALUES = {"shell", "fs", "todo", "hooks-claude-code", "permissions", "llm", "subagents", "mcp"}


def test_these_builtins_get_their_config_as_a_value_made_for_the_workspace(
    tmp_path: Path,
) -> None:
    entries = {entry.id: entry for entry in builtin_entries(tmp_path, agent=True)}

    assert {key for key, entry in entries.items() if entry.value is not None} == VALUES
    assert all(not entries[key].config for key in VALUES)
    assert getattr(entries["permissions"].value, "workspace", None) == str(tmp_path)
    assert getattr(entries["mcp"].value, "project_dir", None) == str(tmp_path)


def test_an_override_keeps_a_builtins_config_a_mapping_to_validate(tmp_path: Path) -> None:
    overrides = {"mcp": {"mcp_json": ["/x/.mcp.json"]}}
    entries = {entry.id: entry for entry in builtin_entries(tmp_path, overrides=overrides)}

    assert (entries["mcp"].value, entries["mcp"].config) == (
        None,
        {"project_dir": str(tmp_path), "mcp_json": ["/x/.mcp.json"]},
    )


_DEFAULT_AGENT_BOOT = """
import asyncio, sys
from pathlib import Path
from tether.agent.boot import start
from tether.kernel import config_models

async def main(root):
    ctx = await start(cwd=root / "ws", home=root / "home", agent=True)
    await ctx.dispose()

root = Path(sys.argv[1])
(root / "ws").mkdir()
asyncio.run(main(root))
derived = {f"{model.__module__}:{model.__qualname__}" for model in config_models._DERIVED}
lazy = {"tether.plugins.permissions.plan", "tether.plugins.mcp.server_config"}
print(sorted(name for name in derived if name.partition(":")[0] in sys.argv[2:]))
print(sorted(lazy & set(sys.modules)))
"""


def test_a_default_agent_boot_validates_none_of_these_builtins_configs(tmp_path: Path) -> None:
    """Issue 36: no derived model (so no pydantic) for them; `exit_plan_mode`'s argument model
    and the MCP server entry model are not even imported."""
    modules = [
        "tether.plugins.todo.tool",
        "tether.plugins.hooks.loading",
        "tether.plugins.permissions.plugin",
        "tether.agent.llm.config",
        "tether.agent.llm.retry",
        "tether.agent.llm.prices",
        "tether.agent.subagents.config",
        "tether.plugins.mcp.config",
    ]
    done = subprocess.run(
        [sys.executable, "-c", _DEFAULT_AGENT_BOOT, str(tmp_path), *modules],
        cwd=tmp_path,
        env={"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert (done.returncode, done.stdout) == (0, "[]\n[]\n"), done.stderr


_DEFAULT_BOOT = """
import asyncio
from pathlib import Path
from tether.agent.boot import start
from tether.kernel.config_models import _DERIVED

async def main() -> None:
    ctx = await start(cwd=Path.cwd(), home=Path.cwd() / "home", sandbox="read-only")
    print(ctx.shell.config.sandbox.mode, ctx.fs.root == str(Path.cwd()))
    await ctx.dispose()

asyncio.run(main())
ours = {"ShellConfig", "SandboxSettings", "EnvPolicy", "FsConfig", "LocalFsConfig", "ToolFsConfig"}
print(sorted(ours & {model.__name__ for model in _DERIVED}))
"""


def test_a_default_boot_hands_the_shell_and_the_file_tools_their_configs_as_values(
    tmp_path: Path,
) -> None:
    """Issue 36: no pydantic model is built to validate the shell's, the sandbox's or the file
    tools' config (the command line's `--sandbox` included) when no file configures them."""
    done = subprocess.run(
        [sys.executable, "-c", _DEFAULT_BOOT],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )

    assert (done.returncode, done.stdout) == (0, "read-only True\n[]\n"), done.stderr
