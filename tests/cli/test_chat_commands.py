"""The everyday slash commands of `tether chat` (issue 34 item 6), on a real pseudo-terminal
against the scripted model server.

Contract: the model's todo list (Claude Code's `activeForm` included) is drawn as a checklist
when it is written and by `/todos`; `/permissions add|remove KIND RULE` edits
`.claude/settings.local.json` and applies at once; `/add-dir` lets the model read a directory
outside the workspace; `/init` asks the model to write CLAUDE.md and the resume replay shows
`/init`, not the prompt; `/memory`, `/status`, `/config`, `/hooks`, `/agents`, `/mcp` say what is
configured; `/export FILE` writes the conversation as Markdown. Waiting is always for screen text.
"""

from __future__ import annotations

import json
import stat

import pytest

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ._chat import WAIT, leave, open_chat, open_resumed, say, screen, tool_texts, user_texts
from ._support import Cli

pytestmark = pytest.mark.slow


def call(call_id: str, name: str, **arguments: object) -> tuple[str, str, str]:
    return (call_id, name, json.dumps(arguments))


async def command(cli: Cli, *lines: str, args: tuple[str, ...] = ()) -> str:
    """Open a chat, type each line and wait for the prompt after it; what it printed, its
    whitespace (and the terminal's line wrapping) folded to single spaces."""
    terminal = await open_chat(cli, *args)
    try:
        for line in lines:
            terminal.send(line.encode() + b"\r")
            await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    return " ".join(terminal.output.split())


async def test_the_todo_list_is_a_checklist_with_claude_codes_active_form(
    cli: Cli, server: ScriptedModelServer
) -> None:
    todos = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"},
        {"content": "Ship it", "status": "pending", "activeForm": "Shipping it"},
    ]
    server.push(tool_calls_reply(call("t1", "todo_write", todos=todos)), text_reply("planned"))
    terminal = await open_chat(cli)
    try:
        await say(terminal, "plan the work", "planned")
        terminal.send(b"/todos\r")
        await terminal.expect("Read the code", timeout_s=WAIT)
        await terminal.expect("Running the tests", timeout_s=WAIT)
        await terminal.expect("Ship it", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    shown = screen(terminal)
    assert shown.count("☒ Read the code") == 2  # when written, and by /todos
    assert shown.count("◼ Running the tests") == 2
    assert shown.count("☐ Ship it") == 2
    assert "INVALID_ARGS" not in terminal.output


async def test_permissions_add_saves_a_deny_rule_that_holds_at_once(
    cli: Cli, server: ScriptedModelServer
) -> None:
    (cli.work / "keep.txt").write_text("x")
    server.push(
        tool_calls_reply(call("t1", "bash", command="rm keep.txt", description="rm")),
        text_reply("could not"),
    )
    terminal = await open_chat(cli, "--permission-mode", "bypassPermissions")
    try:
        terminal.send(b"/permissions add deny Bash(rm:*)\r")
        await terminal.expect("deny Bash(rm:*)", timeout_s=WAIT)
        await terminal.expect("saved to", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await say(terminal, "delete keep.txt", "could not")
        terminal.send(b"/permissions\r")
        await terminal.expect("deny: Bash(rm:*)", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert (cli.work / "keep.txt").exists()
    settings = json.loads((cli.work / ".claude" / "settings.local.json").read_text())
    assert settings == {"permissions": {"deny": ["Bash(rm:*)"]}}


async def test_permissions_remove_takes_a_rule_out_of_the_local_settings(cli: Cli) -> None:
    settings = cli.work / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(make:*)", "Read"]}}))
    output = await command(cli, "/permissions remove allow Bash(make:*)", "/permissions")
    assert "removed allow Bash(make:*)" in output
    assert json.loads(settings.read_text()) == {"permissions": {"allow": ["Read"]}}
    assert "allow: Read" in output


async def test_permissions_remove_keeps_a_rule_another_settings_file_still_has(
    cli: Cli,
) -> None:
    claude = cli.work / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"permissions": {"deny": ["WebFetch"]}}))
    local = claude / "settings.local.json"
    local.write_text(json.dumps({"permissions": {"deny": ["WebFetch"]}}))
    output = await command(cli, "/permissions remove deny WebFetch", "/permissions")
    assert "but it still holds" in output
    assert "deny: WebFetch" in output
    assert json.loads(local.read_text()) == {"permissions": {"deny": []}}


async def test_add_dir_lets_the_model_read_a_directory_outside_the_workspace(
    cli: Cli, server: ScriptedModelServer
) -> None:
    shared = cli.work.parent / "shared"
    shared.mkdir()
    (shared / "note.txt").write_text("the shared note\n")
    server.push(
        tool_calls_reply(call("t1", "read", file_path=str(shared / "note.txt"))),
        text_reply("read it"),
    )
    terminal = await open_chat(cli)
    try:
        terminal.send(b"/add-dir ../shared\r")
        await terminal.expect("the model may read and write files under", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await say(terminal, "read the shared note", "read it")
        terminal.send(b"/status\r")
        await terminal.expect("added dirs", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    (result,) = tool_texts(server.requests[1].messages)
    assert "the shared note" in result
    assert "FS_SANDBOX_DENIED" not in result


async def test_add_dir_lets_the_model_write_a_file_in_the_added_directory(
    cli: Cli, server: ScriptedModelServer
) -> None:
    shared = cli.work.parent / "shared"
    shared.mkdir()
    target = shared / "new.txt"
    server.push(
        tool_calls_reply(call("t1", "write", file_path=str(target), content="written\n")),
        text_reply("wrote it"),
    )
    terminal = await open_chat(cli, "--permission-mode", "acceptEdits")
    try:
        terminal.send(b"/add-dir ../shared\r")
        await terminal.expect("the model may read and write files under", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await say(terminal, "write the note", "wrote it")
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert target.read_text() == "written\n"


async def test_init_asks_the_model_to_write_claude_md_and_the_replay_shows_init(
    cli: Cli, server: ScriptedModelServer
) -> None:
    body = "# CLAUDE.md\n\nRun the tests with `make test`.\n"
    server.push(
        tool_calls_reply(call("t1", "write", file_path="CLAUDE.md", content=body)),
        text_reply("Wrote CLAUDE.md."),
    )
    terminal = await open_chat(cli, "--permission-mode", "acceptEdits")
    try:
        await say(terminal, "/init", "Wrote CLAUDE.md.")
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert (cli.work / "CLAUDE.md").read_text() == body
    (prompt,) = user_texts(server.requests[0].messages)
    assert prompt.startswith("Please analyze this codebase and create a CLAUDE.md file")
    resumed = await open_resumed(cli, "--continue")
    try:
        await leave(resumed)
    finally:
        await resumed.aclose()
    shown = screen(resumed)
    assert "› /init" in shown
    assert "Please analyze this codebase" not in shown


async def test_memory_lists_the_instruction_files_and_edit_opens_one_in_the_editor(
    cli: Cli,
) -> None:
    (cli.work / "AGENTS.md").write_text("Use tabs.\n")
    editor = cli.work.parent / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "Prefer small modules.\\n" >> "$1"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    cli.env["EDITOR"] = str(editor)
    cli.env.pop("VISUAL", None)
    output = await command(cli, "/memory", "/memory edit project")
    assert "AGENTS.md (10 bytes)" in output
    assert "edited" in output
    assert (cli.work / "CLAUDE.md").read_text() == "Prefer small modules.\n"


async def test_status_shows_the_version_model_session_cwd_and_mode(cli: Cli) -> None:
    terminal = await open_chat(cli)
    try:
        terminal.send(b"/status\r")
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    shown = screen(terminal)
    session_id = shown.split("· session ", 1)[1].split()[0]
    assert "version          tether " in shown
    assert f"session          {session_id}" in shown
    assert "permission mode  default" in shown
    assert "sandbox" in shown
    assert "cwd" in shown


async def test_config_names_the_settings_files_it_read(cli: Cli) -> None:
    claude = cli.work / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"permissions": {"ask": ["WebFetch"]}}))
    output = await command(cli, "/config")
    assert ".claude/settings.json" in output
    assert "ask rules" in output


async def test_hooks_lists_the_configured_hooks_by_event(cli: Cli) -> None:
    claude = cli.work / ".claude"
    claude.mkdir()
    hooks = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo checked"}]}
        ]
    }
    (claude / "settings.json").write_text(json.dumps({"hooks": hooks}))
    output = await command(cli, "/hooks")
    assert "PreToolUse" in output
    assert "echo checked" in output


async def test_agents_lists_the_built_in_and_the_projects_subagent_types(cli: Cli) -> None:
    agents = cli.work / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews a change\n---\nReview the diff.\n"
    )
    output = await command(cli, "/agents")
    assert "general-purpose" in output
    assert "reviewer" in output
    assert "Reviews a change" in output


async def test_mcp_says_when_no_server_is_configured(cli: Cli) -> None:
    output = await command(cli, "/mcp")
    assert "no MCP servers configured" in output


async def test_export_writes_the_conversation_as_markdown(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("The answer is 42."))
    terminal = await open_chat(cli)
    try:
        await say(terminal, "what is the answer?", "42")
        terminal.send(b"/export talk.md\r")
        await terminal.expect("exported the conversation", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    (summary,) = cli.sessions()
    assert (cli.work / "talk.md").read_text() == (
        f"# tether session {summary.id}\n\n## You\n\nwhat is the answer?\n\n"
        "## Assistant\n\nThe answer is 42.\n"
    )


async def test_the_resume_replay_shows_a_custom_command_as_typed(
    cli: Cli, server: ScriptedModelServer
) -> None:
    commands = cli.work / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review $ARGUMENTS with great care.\n")
    server.push(text_reply("Reviewed."))
    terminal = await open_chat(cli)
    try:
        await say(terminal, "/review the parser", "Reviewed.")
        await leave(terminal)
    finally:
        await terminal.aclose()
    resumed = await open_resumed(cli, "--continue")
    try:
        await leave(resumed)
    finally:
        await resumed.aclose()
    shown = screen(resumed)
    assert "› /review the parser" in shown
    assert "with great care" not in shown


async def test_a_long_paste_is_collapsed_in_the_line_and_in_the_resume_replay(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("Got the log."))
    pasted = "\n".join(f"log line {n}" for n in range(1, 16))
    terminal = await open_chat(cli)
    try:
        terminal.send(b"\x1b[200~" + pasted.encode() + b"\x1b[201~\r")
        await terminal.expect("Got the log.", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    assert "[Pasted text #1 +15 lines]" in terminal.output  # in the line, before it was sent
    assert user_texts(server.requests[0].messages) == [pasted]
    resumed = await open_resumed(cli, "--continue")
    try:
        await leave(resumed)
    finally:
        await resumed.aclose()
    shown = screen(resumed)
    assert "› log line 1 [Pasted text +14 lines]" in shown
    assert "log line 9" not in shown
