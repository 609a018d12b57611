"""Claude Code's flags on `tether run`, `tether -p` and `tether "prompt"` (issue 34 item 1).

Contract: each flag has its effect on a real run — `--max-turns` ends the turn `error_max_turns`,
`--disallowedTools` refuses the model's call, `--allowedTools` allows one that would ask,
`--system-prompt` / `--append-system-prompt` reach the model's request, `--add-dir` lets the file
tools read another directory, `--settings` (a file or a JSON string) applies its rules,
`--mcp-config --strict-mcp-config` mounts only the given servers, `--tools` denies the others;
the flags tether cannot honour yet are refused by name with the reason; an unknown option is
named with the nearest real one. The model is a `ScriptedModelServer`; `tether` a subprocess.
"""

from __future__ import annotations

import json
import sys

import pytest

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ..plugins.mcp._support import TOOLBOX
from ._support import Cli

pytestmark = pytest.mark.slow


def bash(command: str) -> tuple[str, str, str]:
    return ("t1", "bash", json.dumps({"command": command, "description": "a test command"}))


def read(path: str) -> tuple[str, str, str]:
    return ("t1", "read", json.dumps({"file_path": path}))


def tool_result(server: ScriptedModelServer) -> object:
    """The content of the one tool message in the model's second request."""
    (message,) = [m for m in server.requests[1].messages if m["role"] == "tool"]
    return message["content"]


def offered(server: ScriptedModelServer, index: int = 0) -> list[str]:
    """The tool names the model was sent in request `index`."""
    body = server.requests[index].body
    return sorted(tool["function"]["name"] for tool in body.get("tools") or ())


def system_prompt(server: ScriptedModelServer) -> str:
    (message,) = [m for m in server.requests[0].messages if m["role"] == "system"]
    content = message["content"]
    assert isinstance(content, str)
    return content


async def test_an_unknown_option_is_named_with_the_nearest_real_one(cli: Cli) -> None:
    done = await cli.run("run", "--max-turn", "2", "hi")

    assert done.code == 2
    assert done.stderr == (
        'tether run: unknown option "--max-turn" (did you mean "--max-turns"?); '
        "`tether run --help` lists the options\n"
    )


async def test_bogus_is_named_in_the_error(cli: Cli) -> None:
    done = await cli.run("run", "--bogus", "hi")

    assert done.code == 2
    assert done.stderr.startswith('tether run: unknown option "--bogus"')


async def test_print_answers_the_prompt_and_exits(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(text_reply("four"))

    done = await cli.run("-p", "what is 2+2?")

    assert (done.code, done.stdout) == (0, "four\n")
    assert server.requests[0].messages[-1] == {"role": "user", "content": "what is 2+2?"}


async def test_max_turns_ends_the_turn_with_error_max_turns(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash("ls")), text_reply("never asked"))

    done = await cli.run("-p", "--max-turns", "1", "--output-format", "json", "list")

    assert done.code == 1
    assert json.loads(done.stdout)["subtype"] == "error_max_turns"
    assert len(server.requests) == 1


async def test_disallowed_tools_refuses_the_models_bash_call(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash("touch made")), text_reply("refused"))

    done = await cli.run("run", "--yolo", "--disallowedTools", "Bash", "make it")

    assert (done.code, done.stdout) == (0, "refused\n")
    assert not (cli.work / "made").exists()
    assert tool_result(server) == 'Error: denied by permission rule "Bash"'


async def test_allowed_tools_allows_a_call_that_would_ask(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash("touch made")), text_reply("made"))

    done = await cli.run("run", "--allowedTools", "Bash(touch:*) Read", "make it")

    assert (done.code, done.stdout) == (0, "made\n")
    assert (cli.work / "made").exists()


async def test_system_prompt_replaces_tethers_prompt(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(text_reply("ok"))

    done = await cli.run("run", "--system-prompt", "You are a pirate.", "hi")

    assert done.code == 0
    assert system_prompt(server).startswith("You are a pirate.")
    assert "You are tether" not in system_prompt(server)


async def test_append_system_prompt_follows_tethers_prompt(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("ok"))

    done = await cli.run("run", "--append-system-prompt", "Always answer in French.", "hi")

    assert done.code == 0
    prompt = system_prompt(server)
    assert prompt.startswith("You are tether")
    assert "\n\nAlways answer in French." in prompt


async def test_add_dir_lets_the_read_tool_read_another_directory(
    cli: Cli, server: ScriptedModelServer
) -> None:
    other = cli.work.parent / "other"
    other.mkdir()
    (other / "lib.txt").write_text("from the other directory\n")
    server.push(tool_calls_reply(read(str(other / "lib.txt"))), text_reply("read it"))

    done = await cli.run("run", "--add-dir", str(other), "read it")

    assert done.code == 0
    assert "from the other directory" in str(tool_result(server))


async def test_add_dir_lets_the_write_tool_and_bash_write_in_another_directory(
    cli: Cli, server: ScriptedModelServer
) -> None:
    other = cli.work.parent / "other"
    other.mkdir()
    write = ("t1", "write", json.dumps({"file_path": str(other / "w.txt"), "content": "w\n"}))
    touch = ("t2", "bash", json.dumps({"command": f"touch {other}/b.txt", "description": "d"}))
    server.push(tool_calls_reply(write, touch), text_reply("done"))

    done = await cli.run("run", "--yolo", "--add-dir", str(other), "write there")

    assert (done.code, done.stdout) == (0, "done\n")
    assert (other / "w.txt").read_text() == "w\n"
    assert (other / "b.txt").exists()


async def test_add_dir_keeps_the_protected_paths_of_the_directory_read_only(
    cli: Cli, server: ScriptedModelServer
) -> None:
    other = cli.work.parent / "other"
    (other / ".claude").mkdir(parents=True)
    target = other / ".claude" / "settings.json"
    write = ("t1", "write", json.dumps({"file_path": str(target), "content": "{}"}))
    server.push(tool_calls_reply(write), text_reply("refused"))

    done = await cli.run("run", "--yolo", "--add-dir", str(other), "write there")

    assert done.code == 0
    assert "is protected by the sandbox" in str(tool_result(server))
    assert not target.exists()


async def test_without_add_dir_the_other_directory_is_refused(
    cli: Cli, server: ScriptedModelServer
) -> None:
    other = cli.work.parent / "other"
    other.mkdir()
    (other / "lib.txt").write_text("from the other directory\n")
    server.push(tool_calls_reply(read(str(other / "lib.txt"))), text_reply("no"))

    done = await cli.run("run", "read it")

    assert done.code == 0
    assert "from the other directory" not in str(tool_result(server))


async def test_additional_directories_in_settings_are_readable(
    cli: Cli, server: ScriptedModelServer
) -> None:
    other = cli.work.parent / "other"
    other.mkdir()
    (other / "lib.txt").write_text("from the other directory\n")
    (cli.work / ".claude").mkdir()
    (cli.work / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"additionalDirectories": ["../other"]}})
    )
    server.push(tool_calls_reply(read(str(other / "lib.txt"))), text_reply("read it"))

    done = await cli.run("run", "read it")

    assert done.code == 0
    assert "from the other directory" in str(tool_result(server))


async def test_additional_directories_in_settings_are_writable(
    cli: Cli, server: ScriptedModelServer
) -> None:
    other = cli.work.parent / "other"
    other.mkdir()
    (cli.work / ".claude").mkdir()
    (cli.work / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"additionalDirectories": ["../other"]}})
    )
    write = ("t1", "write", json.dumps({"file_path": str(other / "w.txt"), "content": "w\n"}))
    server.push(tool_calls_reply(write), text_reply("written"))

    done = await cli.run("run", "--yolo", "write it")

    assert (done.code, done.stdout) == (0, "written\n")
    assert (other / "w.txt").read_text() == "w\n"


async def test_settings_as_a_json_string_applies_its_deny_rules(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash("touch made")), text_reply("refused"))
    settings = json.dumps({"permissions": {"deny": ["Bash(touch:*)"]}})

    done = await cli.run("run", "--yolo", "--settings", settings, "make it")

    assert done.code == 0
    assert not (cli.work / "made").exists()
    assert tool_result(server) == 'Error: denied by permission rule "Bash(touch:*)"'


async def test_settings_as_a_file_sets_the_default_mode(
    cli: Cli, server: ScriptedModelServer
) -> None:
    path = cli.work.parent / "settings.json"
    path.write_text(json.dumps({"permissions": {"defaultMode": "acceptEdits"}}))
    write = ("t1", "write", json.dumps({"file_path": "new.txt", "content": "hi\n"}))
    server.push(tool_calls_reply(write), text_reply("written"))

    done = await cli.run("run", "--settings", str(path), "write it")

    assert (done.code, done.stdout) == (0, "written\n")
    assert (cli.work / "new.txt").read_text() == "hi\n"


async def test_tools_denies_the_tools_not_listed(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(tool_calls_reply(bash("ls")), text_reply("refused"))

    done = await cli.run("run", "--yolo", "--tools", "Read,Grep", "list")

    assert done.code == 0
    assert tool_result(server) == 'Error: denied by permission rule "bash"'


async def test_tools_sends_the_model_only_the_schemas_of_the_tools_listed(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("ok"))

    done = await cli.run("run", "--tools", "Read,Grep", "list")

    assert done.code == 0
    assert offered(server) == ["grep", "read"]


async def test_tools_empty_sends_the_model_no_tools(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(text_reply("ok"))

    done = await cli.run("run", "--tools", "", "list")

    assert done.code == 0
    assert offered(server) == []


async def test_a_tool_disallowed_by_name_is_not_sent_to_the_model(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("ok"))

    done = await cli.run("run", "--disallowedTools", "Bash,WebFetch", "list")

    assert done.code == 0
    assert "bash" not in offered(server)
    assert "web_fetch" not in offered(server)
    assert "read" in offered(server)


async def test_a_tool_disallowed_by_name_has_no_code_mode_stub(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("ok"))
    cli.env["TETHER_TOOLS_MODE"] = "code"

    done = await cli.run("run", "--disallowedTools", "Bash", "list")

    assert done.code == 0
    assert offered(server) == ["run_code"]
    assert "async def read(" in system_prompt(server)
    assert "async def bash(" not in system_prompt(server)


async def test_a_disallowed_rule_with_a_pattern_keeps_the_tool_offered(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("ok"))

    done = await cli.run("run", "--disallowedTools", "Bash(rm:*)", "list")

    assert done.code == 0
    assert "bash" in offered(server)


async def test_a_settings_deny_naming_a_whole_tool_keeps_it_from_the_model(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("ok"))
    settings = json.dumps({"permissions": {"deny": ["Edit"]}})

    done = await cli.run("run", "--settings", settings, "list")

    assert done.code == 0
    assert [t for t in offered(server) if t in ("edit", "write", "read")] == ["read"]


async def test_the_init_record_lists_only_the_tools_offered(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("ok"))

    done = await cli.run("-p", "--output-format", "stream-json", "--tools", "Bash", "hi")

    init = json.loads(done.stdout.splitlines()[0])
    assert (init["subtype"], init["tools"]) == ("init", ["Bash"])


async def test_strict_mcp_config_mounts_only_the_given_servers(
    cli: Cli, server: ScriptedModelServer
) -> None:
    box = {"command": sys.executable, "args": [TOOLBOX, str(cli.work / "r.jsonl")]}
    (cli.work / ".mcp.json").write_text(json.dumps({"mcpServers": {"project": box}}))
    given = json.dumps({"mcpServers": {"given": box}})
    server.push(text_reply("ok"))

    done = await cli.run(
        "-p",
        "--mcp-config",
        given,
        "--strict-mcp-config",
        "--output-format",
        "stream-json",
        "hi",
        timeout_s=90,
    )

    init = json.loads(done.stdout.splitlines()[0])
    assert init["mcp_servers"] == [{"name": "given", "status": "connected"}]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--input-format", "stream-json"],
            "tether run: --input-format stream-json: needs --output-format stream-json\n",
        ),
        (
            ["--input-format", "stream-json", "--output-format", "stream-json"],
            "tether run: --input-format stream-json: the prompts come on stdin, not as an "
            "argument\n",
        ),
        (
            ["--permission-prompt-tool", "stdio"],
            "tether run: --permission-prompt-tool: only stdio, with --input-format stream-json "
            "(the Agent SDK's can_use_tool); an MCP tool is not yet supported\n",
        ),
        (
            ["--fork-session"],
            "tether run: --fork-session: not yet supported (continue the session, or start a "
            "new one)\n",
        ),
        (
            ["--setting-sources", "user"],
            "tether run: --setting-sources: not yet supported (only user,project,local: all "
            "three)\n",
        ),
    ],
)
async def test_a_flag_not_yet_supported_is_refused_by_name(
    cli: Cli, flags: list[str], message: str
) -> None:
    done = await cli.run("run", *flags, "hi")

    assert (done.code, done.stderr) == (2, message)


async def test_verbose_and_the_default_setting_sources_are_accepted(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("ok"))

    done = await cli.run(
        "-p", "--verbose", "--setting-sources", "user,project,local", "--input-format", "text", "hi"
    )

    assert (done.code, done.stdout) == (0, "ok\n")


async def test_dangerously_skip_permissions_is_yolo(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(tool_calls_reply(bash("touch made")), text_reply("made"))

    done = await cli.run("-p", "--dangerously-skip-permissions", "make it")

    assert (done.code, done.stdout) == (0, "made\n")
    assert (cli.work / "made").exists()


async def test_chat_starts_with_the_prompt_given(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(text_reply("hello there"))

    done = await cli.run("hello", input=b"")

    assert done.code == 0
    assert "hello there" in done.stdout
    assert server.requests[0].messages[-1] == {"role": "user", "content": "hello"}


async def test_chat_with_a_prompt_starts_with_it(cli: Cli, server: ScriptedModelServer) -> None:
    server.push(text_reply("hi back"))

    done = await cli.run("chat", "--max-turns", "3", "hi there", input=b"")

    assert done.code == 0
    assert "hi back" in done.stdout
    assert server.requests[0].messages[-1] == {"role": "user", "content": "hi there"}
