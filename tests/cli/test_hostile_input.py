"""The `tether` command line with hostile input, as a user runs it: real subprocesses.

Contract (issue 11 §7, issue 18 §7): a `tether.yml` or `$TETHER_HOME/config.yml` nested 5,000
deep fails boot with the usual one line naming the file (exit 2, no traceback); a Claude Code
`.claude/settings.json` nested 5,000 deep is logged in one line naming the file and skipped.
Output never loses a result: a character the stream cannot encode (a lone surrogate) is printed
as a backslash escape (by `tools call`, and by `run` in the tool status lines and the final
answer), and the spill file a truncated `tools call` output names still exists
when the command has returned.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ._support import Cli

pytestmark = pytest.mark.slow

NO_MODEL = "http://127.0.0.1:9/v1"  # nothing here asks a model


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path, NO_MODEL)


async def test_a_tether_yml_nested_5000_deep_fails_with_one_line_naming_the_file(
    cli: Cli,
) -> None:
    path = cli.work / "tether.yml"
    path.write_text("a: " + "[" * 5000 + "]" * 5000 + "\n")

    done = await cli.run("tools", "list")

    assert (done.code, done.stdout, done.stderr) == (
        2,
        "",
        f"tether: {path}: line 1, column 103: nested more than 100 levels deep; simplify the"
        " file\n",
    )


async def test_a_user_config_mapping_nested_5000_deep_fails_with_one_line_naming_the_file(
    cli: Cli,
) -> None:
    cli.home.mkdir()
    path = cli.home / "config.yml"
    path.write_text(
        "".join("  " * level + "k:\n" for level in range(5000)) + "  " * 5000 + "x: 1\n"
    )

    done = await cli.run("tools", "call", "bash", '{"command": "echo hi", "description": "x"}')

    assert (done.code, done.stdout, done.stderr) == (
        2,
        "",
        f"tether: {path}: line 101, column 201: nested more than 100 levels deep; simplify the"
        " file\n",
    )


async def test_a_claude_settings_file_nested_5000_deep_stops_the_command_in_one_line(
    cli: Cli,
) -> None:
    settings = cli.work / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": ' + "[" * 5000 + "]" * 5000 + "}")

    done = await cli.run("tools", "call", "bash", '{"command": "echo hi", "description": "x"}')

    assert (done.code, done.stdout, done.stderr) == (
        2,
        "",
        f"tether: {settings}: not valid JSON (JSON nested too deeply to read; simplify the "
        "file); fix the file or move it away (tether does not run without the permission rules "
        "and hooks it may hold)\n",
    )


async def test_tools_call_prints_a_lone_surrogate_as_an_escape(cli: Cli) -> None:
    done = await cli.run("tools", "call", "web_fetch", '{"url": "\\ud800"}')

    assert (done.code, done.stdout, done.stderr) == (
        1,
        "Error: invalid URL: \\ud800\n",
        "tether: WEB_INVALID_URL: invalid URL: \\ud800\n",
    )


async def test_the_spill_file_tools_call_names_exists_after_it_returns(cli: Cli) -> None:
    done = await cli.run("tools", "call", "bash", '{"command": "seq 100000", "description": "x"}')

    assert done.code == 0
    notice = done.stdout.splitlines()[-1]
    found = re.fullmatch(r"\[output truncated; full output: (/.+)\]", notice)
    assert found is not None, notice
    spill = Path(found[1])
    try:
        assert spill.read_text() == "".join(f"{n}\n" for n in range(1, 100001))
    finally:
        shutil.rmtree(spill.parent)


async def test_run_prints_a_final_answer_with_a_lone_surrogate_as_an_escape(tmp_path: Path) -> None:
    async with ScriptedModelServer() as server:
        cli = Cli(tmp_path, server.base_url)
        server.push(
            tool_calls_reply(("w1", "web_fetch", '{"url": "\\ud800"}')),
            text_reply("odd \ud800 text"),
        )

        done = await cli.run("run", "--yolo", "fetch it")

    assert (done.code, done.stdout) == (0, "odd \\ud800 text\n")
    assert "✗ web_fetch WEB_INVALID_URL" in done.stderr
    assert "invalid URL: \\ud800" in done.stderr
