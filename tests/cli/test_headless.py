"""`tether run` honours the same policy as `tether chat` (issue 12 §1).

Contract: `tether run` mounts the permission rules, the Claude Code hooks and the approval service,
like `chat`. Deny rules always hold — under `--yolo` too, and whatever path or wrapper runs the
program (`/bin/rm`, `bash -c 'rm …'`). Hooks run. A call the rules would ask about is refused,
because nobody can answer, with a tool result that tells the model so (and the user, on stderr, how
to allow it) — unless `--yolo` or an `--allow` rule (Claude Code syntax, repeatable) permits it.
`--yolo` says so in one line on stderr. Each test checks the filesystem — whether the bash command
ran — and the exact tool result the model received.

The model is a `ScriptedModelServer` on 127.0.0.1; `tether` runs as a real subprocess with no
terminal (stdin is /dev/null).
"""

from __future__ import annotations

import json

import pytest

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ._support import Cli

pytestmark = pytest.mark.slow

NEEDS_APPROVAL = (
    'Error: tool "bash" requires approval, but no approval channel is available (tether run is '
    "non-interactive; allow it with --allow 'Bash(rm new.txt)' or --yolo)"
)


def bash(command: str) -> tuple[str, str, str]:
    return ("t1", "bash", json.dumps({"command": command, "description": "a test command"}))


def deny_touch(cli: Cli) -> None:
    claude = cli.work / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text('{"permissions": {"deny": ["Bash(touch:*)"]}}')


def tool_result(server: ScriptedModelServer) -> object:
    """The content of the one tool message in the model's second request."""
    (message,) = [m for m in server.requests[1].messages if m["role"] == "tool"]
    return message["content"]


async def test_a_deny_rule_stops_the_call(cli: Cli, server: ScriptedModelServer) -> None:
    deny_touch(cli)
    server.push(tool_calls_reply(bash("touch x")), text_reply("denied"))

    done = await cli.run("run", "touch x")

    assert (done.code, done.stdout) == (0, "denied\n")
    assert not (cli.work / "x").exists()
    assert tool_result(server) == 'Error: denied by permission rule "Bash(touch:*)"'


async def test_a_deny_rule_holds_under_yolo(cli: Cli, server: ScriptedModelServer) -> None:
    deny_touch(cli)
    server.push(tool_calls_reply(bash("touch x")), text_reply("denied"))

    done = await cli.run("run", "--yolo", "touch x")

    assert (done.code, done.stdout) == (0, "denied\n")
    assert not (cli.work / "x").exists()
    assert tool_result(server) == 'Error: denied by permission rule "Bash(touch:*)"'
    assert done.stderr.startswith(
        "tether: --yolo: tool calls run without asking; deny rules still hold\n"
    )


@pytest.mark.parametrize(
    "command",
    ["/bin/rm keep.txt", "bash -c 'rm keep.txt'", "command rm keep.txt", "env rm keep.txt"],
)
async def test_a_deny_rule_holds_under_yolo_whatever_path_or_wrapper_runs_the_program(
    cli: Cli, server: ScriptedModelServer, command: str
) -> None:
    (cli.work / ".claude").mkdir()
    (cli.work / ".claude" / "settings.json").write_text('{"permissions":{"deny":["Bash(rm:*)"]}}')
    (cli.work / "keep.txt").write_text("still here\n")
    server.push(tool_calls_reply(bash(command)), text_reply("denied"))

    done = await cli.run("run", "--yolo", "remove keep.txt")

    assert (done.code, done.stdout) == (0, "denied\n")
    assert (cli.work / "keep.txt").read_text() == "still here\n"
    assert tool_result(server) == 'Error: denied by permission rule "Bash(rm:*)"'


async def test_a_settings_file_that_cannot_be_read_stops_the_run_in_one_line(
    cli: Cli, server: ScriptedModelServer
) -> None:
    settings = cli.work / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"permissions": {"deny": ["Bash(rm:*)"]')
    server.push(tool_calls_reply(bash("rm notes.txt")), text_reply("removed"))

    done = await cli.run("run", "--yolo", "remove notes.txt")

    assert (done.code, done.stdout) == (2, "")
    assert done.stderr == (
        f"tether: {settings}: not valid JSON (Expecting ',' delimiter: line 1 column 40 (char "
        "39)); fix the file or move it away (tether does not run without the permission rules "
        "and hooks it may hold)\n"
    )
    assert (cli.work / "notes.txt").exists()
    assert server.requests == []


async def test_a_call_that_needs_approval_is_refused_and_the_model_is_told_why(
    cli: Cli, server: ScriptedModelServer
) -> None:
    (cli.work / "new.txt").write_text("keep me\n")
    server.push(tool_calls_reply(bash("rm new.txt")), text_reply("could not"))

    done = await cli.run("run", "remove new.txt")

    assert (done.code, done.stdout) == (0, "could not\n")
    assert (cli.work / "new.txt").read_text() == "keep me\n"
    assert tool_result(server) == NEEDS_APPROVAL
    assert (
        'tether: "bash" needs approval: tether run is non-interactive; allow it with '
        "--allow 'Bash(rm new.txt)' or --yolo\n"
    ) in done.stderr


async def test_a_call_of_an_unknown_tool_gets_unknown_tool_not_an_approval_refusal(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(("t1", "frobnicate", "{}")), text_reply("no such tool"))

    done = await cli.run("run", "frobnicate")

    assert (done.code, done.stdout) == (0, "no such tool\n")
    assert tool_result(server) == 'Error: unknown tool "frobnicate"'
    assert "needs approval" not in done.stderr
    assert "--allow" not in done.stderr


async def test_arguments_that_are_not_json_are_answered_before_any_approval(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(
        tool_calls_reply(("t1", "bash", '{"command": "touch x", "description": "d"')),
        text_reply("fixed"),
    )

    done = await cli.run("run", "touch x")

    assert (done.code, done.stdout) == (0, "fixed\n")
    assert not (cli.work / "x").exists()
    assert tool_result(server) == (
        "Error: invalid arguments: arguments are not valid JSON: Expecting ',' delimiter "
        '(line 1, column 42); call "bash" again with its arguments as one JSON object'
    )
    assert "needs approval" not in done.stderr
    (summary,) = cli.sessions()
    assert not [e for e in cli.store.load(summary.id).events if e.type.startswith("approval/")]


async def test_invalid_arguments_for_a_typed_tool_name_no_internal_class_and_ask_nobody(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(("t1", "bash", '"touch x"')), text_reply("fixed"))

    done = await cli.run("run", "touch x")

    assert (done.code, done.stdout) == (0, "fixed\n")
    assert tool_result(server) == "Error: invalid arguments: arguments: must be a JSON object"
    assert "needs approval" not in done.stderr


async def test_the_refusal_is_in_the_session_log_as_an_unavailable_approval(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash("rm new.txt")), text_reply("could not"))

    await cli.run("run", "remove new.txt")

    (summary,) = cli.sessions()
    events = cli.store.load(summary.id).events
    approvals = [(e.type, dict(e.data)) for e in events if e.type.startswith("approval/")]
    assert [(kind, data.get("outcome"), data.get("answered_by")) for kind, data in approvals] == [
        ("approval/asked", None, None),
        ("approval/decided", "unavailable", "policy"),
    ]


async def test_yolo_runs_a_call_that_needs_approval(cli: Cli, server: ScriptedModelServer) -> None:
    (cli.work / "new.txt").write_text("remove me\n")
    server.push(tool_calls_reply(bash("rm new.txt")), text_reply("removed"))

    done = await cli.run("run", "--yolo", "remove new.txt")

    assert (done.code, done.stdout) == (0, "removed\n")
    assert not (cli.work / "new.txt").exists()
    assert tool_result(server) == "(no output)"


async def test_an_allow_rule_runs_a_call_that_needs_approval(
    cli: Cli, server: ScriptedModelServer
) -> None:
    (cli.work / "new.txt").write_text("remove me\n")
    server.push(tool_calls_reply(bash("rm new.txt")), text_reply("removed"))

    done = await cli.run("run", "--allow", "Bash(ls:*)", "--allow", "Bash(rm:*)", "rm new.txt")

    assert (done.code, done.stdout) == (0, "removed\n")
    assert not (cli.work / "new.txt").exists()
    assert "--yolo" not in done.stderr


async def test_an_allow_rule_does_not_outrank_a_deny_rule(
    cli: Cli, server: ScriptedModelServer
) -> None:
    deny_touch(cli)
    server.push(tool_calls_reply(bash("touch x")), text_reply("denied"))

    done = await cli.run("run", "--allow", "Bash(touch:*)", "touch x")

    assert done.code == 0
    assert not (cli.work / "x").exists()
    assert tool_result(server) == 'Error: denied by permission rule "Bash(touch:*)"'


async def test_an_allow_rule_covers_only_what_it_names(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash("touch x && rm notes.txt")), text_reply("could not"))

    done = await cli.run("run", "--allow", "Bash(touch:*)", "do both")

    assert done.code == 0
    assert not (cli.work / "x").exists()
    assert (cli.work / "notes.txt").exists()
    assert tool_result(server) == (
        'Error: tool "bash" requires approval, but no approval channel is available (tether run '
        "is non-interactive; allow it with --allow 'Bash(touch x && rm notes.txt)' or --yolo)"
    )


async def test_a_malformed_allow_rule_is_one_line_and_exit_2(
    cli: Cli, server: ScriptedModelServer
) -> None:
    done = await cli.run("run", "--allow", "Bash(npm test", "do it")

    assert (done.code, done.stdout) == (2, "")
    assert done.stderr == (
        'tether: --allow: "Bash(npm test" is not a permission rule: write Tool or '
        'Tool(specifier), e.g. "Bash(git status:*)" or "Read(./src/**)"\n'
    )
    assert server.requests == []


async def test_a_pre_tool_use_hook_blocks_the_call_in_run(
    cli: Cli, server: ScriptedModelServer
) -> None:
    claude = cli.work / ".claude"
    claude.mkdir()
    hook = {"type": "command", "command": "echo 'no files today' >&2; exit 2"}
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}
    (claude / "settings.json").write_text(json.dumps(settings))
    server.push(tool_calls_reply(bash("touch x")), text_reply("blocked"))

    done = await cli.run("run", "--yolo", "touch x")

    assert (done.code, done.stdout) == (0, "blocked\n")
    assert not (cli.work / "x").exists()
    assert tool_result(server) == "Error: no files today"


async def test_a_hook_that_asks_is_refused_even_under_yolo_and_the_model_is_pointed_to_chat(
    cli: Cli, server: ScriptedModelServer
) -> None:
    claude = cli.work / ".claude"
    claude.mkdir()
    output = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": "touching files needs a human",
        }
    }
    hook = {"type": "command", "command": f"echo '{json.dumps(output)}'"}
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}
    (claude / "settings.json").write_text(json.dumps(settings))
    server.push(tool_calls_reply(bash("touch x")), text_reply("could not"))

    done = await cli.run("run", "--yolo", "touch x")

    assert (done.code, done.stdout) == (0, "could not\n")
    assert not (cli.work / "x").exists()
    assert tool_result(server) == (
        'Error: tool "bash" requires approval, but no approval channel is available (tether run '
        "is non-interactive; answer it in tether chat)"
    )
