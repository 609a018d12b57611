"""Issue 34 item 3 under `tether run`: rules mean what they say, end to end.

Contract: under `--yolo` an ask rule still asks — nobody can answer in `tether run`, so the call
is refused (the file untouched) and the model is pointed to `tether chat`, naming the rule; a
`Read(...)` deny refuses `cat` of the denied file; a `Bash(rm:*)` deny refuses a shell fed `rm`
on stdin. `tether` runs as a real subprocess against a `ScriptedModelServer`.
"""

from __future__ import annotations

import json

import pytest

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ._support import Cli

pytestmark = pytest.mark.slow


def bash(command: str) -> tuple[str, str, str]:
    return ("t1", "bash", json.dumps({"command": command, "description": "a test command"}))


def permissions(cli: Cli, **rules: list[str]) -> None:
    claude = cli.work / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"permissions": rules}))


def tool_result(server: ScriptedModelServer) -> object:
    (message,) = [m for m in server.requests[1].messages if m["role"] == "tool"]
    return message["content"]


async def test_an_ask_rule_asks_under_yolo_and_tether_run_refuses_the_call(
    cli: Cli, server: ScriptedModelServer
) -> None:
    permissions(cli, ask=["Bash(rm:*)"])
    (cli.work / "notes.txt").write_text("keep\n")
    server.push(tool_calls_reply(bash("rm notes.txt")), text_reply("could not"))

    done = await cli.run("run", "--yolo", "remove the notes")

    assert (done.code, done.stdout) == (0, "could not\n")
    assert (cli.work / "notes.txt").read_text() == "keep\n"
    assert tool_result(server) == (
        'Error: tool "bash" requires approval, but no approval channel is available (tether run '
        'is non-interactive and the rule "Bash(rm:*)" asks in every mode; answer it in tether '
        "chat)"
    )


async def test_cat_of_a_file_a_read_rule_denies_is_refused_under_yolo(
    cli: Cli, server: ScriptedModelServer
) -> None:
    permissions(cli, deny=["Read(./secrets/**)"])
    (cli.work / "secrets").mkdir()
    (cli.work / "secrets" / "key.txt").write_text("hunter2\n")
    server.push(tool_calls_reply(bash("cat secrets/key.txt")), text_reply("denied"))

    done = await cli.run("run", "--yolo", "show the key")

    assert (done.code, done.stdout) == (0, "denied\n")
    result = tool_result(server)
    assert isinstance(result, str)
    assert result.startswith('Error: denied by permission rule "Read(./secrets/**)"')
    assert "hunter2" not in result


async def test_a_shell_fed_rm_on_stdin_is_refused_under_a_deny_rule(
    cli: Cli, server: ScriptedModelServer
) -> None:
    permissions(cli, deny=["Bash(rm:*)"])
    (cli.work / "x").write_text("keep\n")
    server.push(tool_calls_reply(bash("echo 'rm -f x' | bash")), text_reply("denied"))

    done = await cli.run("run", "--yolo", "remove x")

    assert (done.code, done.stdout) == (0, "denied\n")
    assert (cli.work / "x").read_text() == "keep\n"
    assert tool_result(server) == (
        'Error: denied by permission rule "Bash(rm:*)" (part of the command cannot be read: '
        '"bash" reads the commands it runs from its standard input; the rule is assumed to match)'
    )
