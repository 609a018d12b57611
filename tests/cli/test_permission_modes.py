"""The five permission modes, headless (issue 34 item 2): `tether run --permission-mode MODE`.

Contract: `default` refuses (nobody to ask) a call that would ask; `acceptEdits` runs the file
tools' edits and the common file system commands on workspace paths, and still refuses others;
`plan` runs read-only tools only, refuses the rest with the reason, and the plan the model presents
with `exit_plan_mode` is the run's result (the mode stays `plan`: nothing is changed);
`bypassPermissions` runs what no deny rule forbids; `dontAsk` denies whatever would ask. Each
test checks the filesystem and the exact tool result the model received.
"""

from __future__ import annotations

import json

import pytest

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ._support import Cli

pytestmark = pytest.mark.slow


def call(name: str, **arguments: object) -> tuple[str, str, str]:
    return ("t1", name, json.dumps(arguments))


def bash(command: str) -> tuple[str, str, str]:
    return call("bash", command=command, description="a test command")


def tool_result(server: ScriptedModelServer) -> object:
    (message,) = [m for m in server.requests[1].messages if m["role"] == "tool"]
    return message["content"]


def needs_approval(rule: str) -> str:
    return (
        'Error: tool "bash" requires approval, but no approval channel is available (tether run '
        f"is non-interactive; allow it with --allow '{rule}' or --yolo)"
    )


async def test_default_refuses_a_command_that_would_ask(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash("touch made")), text_reply("no"))

    done = await cli.run("run", "--permission-mode", "default", "make it")

    assert done.code == 0
    assert not (cli.work / "made").exists()
    assert tool_result(server) == needs_approval("Bash(touch made)")


async def test_accept_edits_runs_the_write_tool(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(
        tool_calls_reply(call("write", file_path="new.txt", content="hi\n")), text_reply("ok")
    )

    done = await cli.run("run", "--permission-mode", "acceptEdits", "write it")

    assert done.code == 0
    assert (cli.work / "new.txt").read_text() == "hi\n"


async def test_accept_edits_runs_fs_commands_on_workspace_paths(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(
        tool_calls_reply(bash("mkdir sub && touch sub/x && cp notes.txt sub/")), text_reply("ok")
    )

    done = await cli.run("run", "--permission-mode", "acceptEdits", "make them")

    assert done.code == 0
    assert sorted(p.name for p in (cli.work / "sub").iterdir()) == ["notes.txt", "x"]


async def test_accept_edits_still_refuses_other_commands(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash('python3 -c \'open("made", "w")\'')), text_reply("no"))

    done = await cli.run("run", "--permission-mode", "acceptEdits", "make it")

    assert done.code == 0
    assert not (cli.work / "made").exists()
    assert str(tool_result(server)).startswith('Error: tool "bash" requires approval')


async def test_plan_denies_a_command_that_changes_something(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash("touch made")), text_reply("planned"))

    done = await cli.run("run", "--permission-mode", "plan", "make it")

    assert done.code == 0
    assert not (cli.work / "made").exists()
    assert tool_result(server) == (
        'Error: permission mode "plan" allows only read-only tools, not "bash": explore, then '
        "present the plan with exit_plan_mode and wait for it to be accepted"
    )


async def test_plan_runs_read_only_tools(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(tool_calls_reply(bash("cat notes.txt")), text_reply("read"))

    done = await cli.run("run", "--permission-mode", "plan", "read it")

    assert done.code == 0
    assert "hello from the workspace" in str(tool_result(server))


async def test_plan_headless_the_presented_plan_is_the_result(
    cli: Cli, server: ScriptedModelServer
) -> None:
    plan = "1. add the test\n2. fix the bug"
    server.push(tool_calls_reply(call("exit_plan_mode", plan=plan)))

    done = await cli.run("run", "--permission-mode", "plan", "--output-format", "json", "plan it")

    assert done.code == 0
    result = json.loads(done.stdout)
    assert (result["subtype"], result["result"]) == ("success", plan)
    assert len(server.requests) == 1


async def test_plan_headless_text_prints_the_plan(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(tool_calls_reply(call("exit_plan_mode", plan="the plan")))

    done = await cli.run("-p", "--permission-mode", "plan", "plan it")

    assert (done.code, done.stdout) == (0, "the plan\n")


async def test_bypass_permissions_runs_what_no_deny_rule_forbids(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash("touch made")), text_reply("ok"))

    done = await cli.run("run", "--permission-mode", "bypassPermissions", "make it")

    assert done.code == 0
    assert (cli.work / "made").exists()


async def test_dont_ask_denies_what_would_ask(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(tool_calls_reply(bash("touch made")), text_reply("no"))

    done = await cli.run("run", "--permission-mode", "dontAsk", "make it")

    assert done.code == 0
    assert not (cli.work / "made").exists()
    assert tool_result(server) == (
        'Error: permission mode "dontAsk" asks before "bash" runs — refused: permission mode '
        '"dontAsk" never asks'
    )


async def test_default_mode_in_settings_is_the_mode(cli: Cli, server: ScriptedModelServer) -> None:
    (cli.work / ".claude").mkdir()
    (cli.work / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"defaultMode": "dontAsk"}})
    )
    server.push(tool_calls_reply(bash("touch made")), text_reply("no"))

    done = await cli.run("run", "--output-format", "stream-json", "--verbose", "make it")

    assert done.code == 0
    assert json.loads(done.stdout.splitlines()[0])["permissionMode"] == "dontAsk"
    assert not (cli.work / "made").exists()


async def test_bypass_as_default_mode_in_a_project_file_is_ignored(
    cli: Cli, server: ScriptedModelServer
) -> None:
    (cli.work / ".claude").mkdir()
    (cli.work / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"defaultMode": "bypassPermissions"}})
    )
    server.push(tool_calls_reply(bash("touch made")), text_reply("no"))

    done = await cli.run("run", "make it")

    assert done.code == 0
    assert not (cli.work / "made").exists()
