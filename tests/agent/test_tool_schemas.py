"""The built-in tools' precomputed parameter schemas (`tether.agent.tool_schemas`, issue 36):
the checked-in file is what pydantic generates, a default boot sends exactly those schemas, and
it builds no argument model to do so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tether.agent.boot import start
from tether.agent.tool_schemas import argument_models, argument_refs, generate
from tether.tools.precomputed import TABLE_PATH
from tether.tools.schema import model_facing_schema


def test_the_checked_in_schemas_are_what_pydantic_generates() -> None:
    assert TABLE_PATH.read_text("utf-8") == generate(), (
        "an argument model changed: run `python -m tether.agent.tool_schemas`"
    )


async def test_a_default_agent_boot_sends_pydantics_schema_for_every_builtin_tool(
    tmp_path: Path,
) -> None:
    expected = [model_facing_schema(model) for model in argument_models()]
    ctx = await start(cwd=tmp_path, home=tmp_path / "home", agent=True, config_paths=[])
    try:
        sent = {name: ctx.tools.get(name) for name in ctx.tools.names()}
    finally:
        await ctx.dispose()

    assert [
        name for name, tool in sent.items() if tool is None or tool.parameters not in expected
    ] == ([])
    assert "bash" in sent


def test_a_default_agent_boot_builds_no_argument_model(tmp_path: Path) -> None:
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from tether.agent.boot import start\n"
        "from tether.plugins.fs.args import EditArgs, WriteArgs\n"
        "from tether.plugins.search.args import GlobArgs\n"
        "from tether.plugins.shell.bash import BashBackgroundParameters\n"
        "from tether.plugins.todo.tool import TodoArgs\n"
        "async def main():\n"
        "    root = Path(sys.argv[1])\n"
        "    ctx = await start(cwd=root, home=root / 'home', agent=True, config_paths=[])\n"
        "    await ctx.dispose()\n"
        "asyncio.run(main())\n"
        "models = [BashBackgroundParameters, WriteArgs, EditArgs, GlobArgs, TodoArgs]\n"
        "print([m.__name__ for m in models if m.__pydantic_complete__])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr


def test_a_default_agent_boot_imports_no_argument_module(tmp_path: Path) -> None:
    """Every built-in tool names its model with a `ModelRef` (the plan tool's model is still in
    its tool module, tether.plugins.permissions.plan)."""
    modules = sorted(
        {ref.target.partition(":")[0] for ref in argument_refs()}
        - {"tether.plugins.permissions.plan"}
    )
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from tether.agent.boot import start\n"
        "async def main():\n"
        "    root = Path(sys.argv[1])\n"
        "    ctx = await start(cwd=root, home=root / 'home', agent=True, config_paths=[])\n"
        "    await ctx.dispose()\n"
        "asyncio.run(main())\n"
        f"print([m for m in {modules!r} if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert len(modules) == 8
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr


def _refs_in_source() -> list[tuple[str, bool]]:
    """(target, is a factory) of every `ModelRef(...)` written in tether's source, outside the
    list the table is generated from."""
    import ast

    import tether

    found: list[tuple[str, bool]] = []
    for path in sorted(Path(tether.__file__).parent.rglob("*.py")):
        if path.name == "tool_schemas.py":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "ModelRef"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                found.append((str(node.args[0].value), len(node.args) > 1))
    return found


def test_every_model_ref_in_the_source_is_one_the_table_is_generated_from() -> None:
    """So the table test above covers every lazy reference: a plain one by its key, a factory
    (called with its configured value) by its target."""
    refs = argument_refs()
    keys = {ref.key for ref in refs}
    factories = {ref.factory for ref in refs if ref.factory is not None}
    in_source = _refs_in_source()

    assert len(in_source) == 15  # bash 2, jobs 3, fs 3, search 2, todo, web 2, run_code, task
    assert [
        (target, factory)
        for target, factory in in_source
        if target not in (factories if factory else keys)
    ] == []
