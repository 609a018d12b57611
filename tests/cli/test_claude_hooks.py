"""Claude Code hooks copied from Claude Code's documentation run unchanged under `tether run`
(issue 12 §2).

Contract: `transcript_path` is a Claude Code-format JSONL transcript beside the session (one
object per message: `type`, `message.role`, `message.content` blocks with `tool_use` /
`tool_result`); a `SessionStart` hook gets `CLAUDE_ENV_FILE`, and the `export` lines it writes
there reach later bash commands; the settings `env` block reaches hooks and bash commands; hook
stdin carries `permission_mode`; `PostToolUse` gets `tool_response` in Claude Code's Bash shape
(`stdout`, `stderr`, `interrupted`, `isImage`). The hook scripts are shell and `jq`, the way
users copy them. `tether` runs as a real subprocess against a `ScriptedModelServer`.
"""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ._support import Cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("jq") is None, reason="the hook scripts use jq"),
]


def bash(command: str, call_id: str = "t1") -> tuple[str, str, str]:
    return (call_id, "bash", json.dumps({"command": command, "description": "a test command"}))


def install(cli: Cli, settings: dict[str, Any], **scripts: str) -> None:
    """`.claude/settings.json` and executable `.claude/hooks/<name>` scripts."""
    hooks = cli.work / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    for name, body in scripts.items():
        path = hooks / name
        path.write_text("#!/bin/bash\n" + body)
        path.chmod(0o755)
    (cli.work / ".claude" / "settings.json").write_text(json.dumps(settings))


def hook(event: str, script: str, matcher: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "hooks": [{"type": "command", "command": f'"$CLAUDE_PROJECT_DIR"/.claude/hooks/{script}'}]
    }
    if matcher is not None:
        entry["matcher"] = matcher
    return {event: [entry]}


def tool_results(server: ScriptedModelServer, request: int) -> list[object]:
    return [m["content"] for m in server.requests[request].messages if m["role"] == "tool"]


STOP_HOOK = """\
input=$(cat)
if [ "$(echo "$input" | jq -r '.stop_hook_active')" = "true" ]; then
  exit 0
fi
transcript=$(echo "$input" | jq -r '.transcript_path')
last=$(jq -rs '[.[] | select(.type == "assistant")] | last
  | [.message.content[] | select(.type == "text") | .text] | join("")' "$transcript")
if [[ "$last" != *"ALL TESTS PASS"* ]]; then
  jq -n --arg last "$last" \\
    '{decision: "block", reason: ("You said \\"" + $last + "\\"; run the tests first.")}'
fi
"""


async def test_a_jq_stop_hook_reads_the_last_answer_from_the_transcript_and_blocks_once(
    cli: Cli, server: ScriptedModelServer
) -> None:
    install(cli, hook("Stop", "stop.sh"), **{"stop.sh": STOP_HOOK})
    server.push(text_reply("I think it works"), text_reply("ALL TESTS PASS"))

    done = await cli.run("run", "fix the build")

    assert (done.code, done.stdout) == (0, "ALL TESTS PASS\n")
    assert len(server.requests) == 2
    last = server.requests[1].messages[-1]
    assert last["role"] == "user"
    assert last["content"] == 'You said "I think it works"; run the tests first.'


PROMISE_STOP_HOOK = """\
# The completion-promise loop public Claude Code plugins use: the turn may end only once the last
# answer holds <promise>DONE</promise>. It finds the answers by grepping the transcript for
# Claude Code's compact `"role":"assistant"`, then reads the last one's text blocks with jq.
set -euo pipefail
input=$(cat)
transcript=$(echo "$input" | jq -r '.transcript_path')
if ! grep -q '"role":"assistant"' "$transcript"; then
  echo "Warning: no assistant messages in the transcript; letting the stop through" >&2
  exit 0
fi
last=$(grep '"role":"assistant"' "$transcript" | tail -n 1 | jq -r '
  .message.content | map(select(.type == "text")) | map(.text) | join("\\n")')
if [[ "$last" == *"<promise>DONE</promise>"* ]]; then
  exit 0
fi
jq -n '{decision: "block", reason: "Keep going; end with <promise>DONE</promise> when done.",
  systemMessage: "promise loop: not done yet"}'
"""


async def test_a_stop_hook_that_greps_for_the_compact_assistant_role_keeps_the_turn_going(
    cli: Cli, server: ScriptedModelServer
) -> None:
    install(cli, hook("Stop", "promise.sh"), **{"promise.sh": PROMISE_STOP_HOOK})
    server.push(text_reply("I think it works"), text_reply("All fixed. <promise>DONE</promise>"))

    done = await cli.run("run", "fix the build", timeout_s=30)

    assert (done.code, done.stdout) == (0, "All fixed. <promise>DONE</promise>\n")
    assert len(server.requests) == 2
    last = server.requests[1].messages[-1]
    assert (last["role"], last["content"]) == (
        "user",
        "Keep going; end with <promise>DONE</promise> when done.",
    )
    assert "no assistant messages" not in done.stderr
    assert "⚠ Stop hook promise.sh: promise loop: not done yet\n" in done.stderr


async def test_a_hooks_warning_on_stderr_reaches_the_screen_in_run(
    cli: Cli, server: ScriptedModelServer
) -> None:
    install(
        cli,
        hook("PostToolUse", "lint.sh", matcher="Bash"),
        **{"lint.sh": "cat > /dev/null\necho 'warning: 3 lint issues in app.py' >&2\n"},
    )
    server.push(tool_calls_reply(bash("echo hi")), text_reply("done"))

    done = await cli.run("run", "--yolo", "say hi", timeout_s=30)

    assert (done.code, done.stdout) == (0, "done\n")
    assert "⚠ PostToolUse hook lint.sh: warning: 3 lint issues in app.py\n" in done.stderr


async def test_the_transcript_has_claude_codes_shape_with_tool_use_and_tool_result(
    cli: Cli, server: ScriptedModelServer
) -> None:
    install(cli, hook("Stop", "stop.sh"), **{"stop.sh": "cat > /dev/null\n"})
    server.push(tool_calls_reply(bash("echo hi", "call_1")), text_reply("done"))

    done = await cli.run("run", "--yolo", "say hi")

    assert done.code == 0
    (summary,) = cli.sessions()
    text = (summary.path.parent / "transcript.jsonl").read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    assert [(line["type"], line["message"]["role"]) for line in lines] == [
        ("user", "user"),
        ("assistant", "assistant"),
        ("user", "user"),
        ("assistant", "assistant"),
    ]
    assert lines[0]["message"]["content"] == "say hi"
    assert lines[1]["message"]["content"] == [
        {
            "type": "tool_use",
            "id": "call_1",
            "name": "Bash",
            "input": {"command": "echo hi", "description": "a test command"},
        }
    ]
    assert lines[2]["message"]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1", "content": "hi\n", "is_error": False}
    ]
    assert lines[3]["message"]["content"] == [{"type": "text", "text": "done"}]
    assert {line["sessionId"] for line in lines} == {summary.id}
    assert [line["parentUuid"] for line in lines[1:]] == [line["uuid"] for line in lines[:-1]]


SESSION_START_HOOK = """\
cat > /dev/null
if [ -n "$CLAUDE_ENV_FILE" ]; then
  echo 'export GREETING="hello from the hook"' >> "$CLAUDE_ENV_FILE"
  echo 'export PATH="$PATH:/opt/from-hook/bin"' >> "$CLAUDE_ENV_FILE"
fi
exit 0
"""


async def test_exports_a_session_start_hook_writes_to_claude_env_file_reach_later_bash_calls(
    cli: Cli, server: ScriptedModelServer
) -> None:
    install(cli, hook("SessionStart", "env.sh"), **{"env.sh": SESSION_START_HOOK})
    server.push(
        tool_calls_reply(bash('echo "$GREETING"; echo "$PATH" | tr : "\\n" | tail -1')),
        text_reply("done"),
    )

    done = await cli.run("run", "--yolo", "greet")

    assert done.code == 0
    assert tool_results(server, 1) == ["hello from the hook\n/opt/from-hook/bin\n"]


async def test_the_settings_env_block_reaches_bash_calls_and_hooks(
    cli: Cli, server: ScriptedModelServer
) -> None:
    settings = {
        "env": {"PROJECT_FLAVOR": "mint", "BUILD_JOBS": 4},
        "hooks": hook("PreToolUse", "flavor.sh", "Bash"),
    }
    install(
        cli, settings, **{"flavor.sh": 'cat > /dev/null\necho "$PROJECT_FLAVOR" > flavor.txt\n'}
    )
    server.push(tool_calls_reply(bash('echo "$PROJECT_FLAVOR $BUILD_JOBS"')), text_reply("ok"))

    done = await cli.run("run", "--yolo", "flavor")

    assert done.code == 0
    assert tool_results(server, 1) == ["mint 4\n"]
    assert (cli.work / "flavor.txt").read_text() == "mint\n"


POST_TOOL_USE_LOGGER = """\
jq -r '"\\(.tool_input.command) -> \\(.tool_response.stdout)"' >> "$CLAUDE_PROJECT_DIR"/log.txt
"""


async def test_a_jq_post_tool_use_logger_reads_tool_response_stdout(
    cli: Cli, server: ScriptedModelServer
) -> None:
    install(cli, hook("PostToolUse", "log.sh", "Bash"), **{"log.sh": POST_TOOL_USE_LOGGER})
    server.push(tool_calls_reply(bash("echo 42")), text_reply("ok"))

    done = await cli.run("run", "--yolo", "print 42")

    assert done.code == 0
    assert (cli.work / "log.txt").read_text() == "echo 42 -> 42\n\n"


@pytest.mark.parametrize(("flags", "mode"), [((), "default"), (("--yolo",), "bypassPermissions")])
async def test_hook_stdin_carries_the_permission_mode(
    cli: Cli, server: ScriptedModelServer, flags: tuple[str, ...], mode: str
) -> None:
    install(
        cli,
        hook("UserPromptSubmit", "mode.sh"),
        **{"mode.sh": 'jq -r .permission_mode > "$CLAUDE_PROJECT_DIR"/mode.txt\n'},
    )
    server.push(text_reply("ok"))

    done = await cli.run("run", *flags, "hello")

    assert done.code == 0
    assert (cli.work / "mode.txt").read_text() == f"{mode}\n"


async def test_tether_run_fires_session_end_and_names_an_unsupported_event_on_stderr(
    cli: Cli, server: ScriptedModelServer
) -> None:
    settings = {
        "hooks": {
            **hook("SessionEnd", "end.sh"),
            **hook("Stop", "stop.sh"),
            "TeammateIdle": [{"hooks": [{"type": "command", "command": "true"}]}],
        }
    }
    install(
        cli,
        settings,
        **{
            "end.sh": 'jq -c "{reason, hook_event_name}" >> "$CLAUDE_PROJECT_DIR"/end.txt\n',
            "stop.sh": 'jq -r .last_assistant_message >> "$CLAUDE_PROJECT_DIR"/stop.txt\n',
        },
    )
    server.push(text_reply("the answer"))

    done = await cli.run("run", "hello")

    assert done.code == 0
    assert (cli.work / "stop.txt").read_text() == "the answer\n"
    assert (cli.work / "end.txt").read_text() == (
        '{"reason":"other","hook_event_name":"SessionEnd"}\n'
    )
    assert done.stderr.count("TeammateIdle") == 2  # the event named twice in its one line
