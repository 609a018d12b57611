"""The Claude Code bridge (`hooks-claude-code`, capabilities spec §5.3) with real hook scripts.

Contract: Claude Code command hooks run unchanged through `ctx.shell` at `tools/pre-execute` and
`tools/post-execute`. PreToolUse: exit 2 denies with stderr as the reason (the model sees
`Error: <reason>`), JSON `permissionDecision` denies or asks, allow and silence let the call go
on; hooks of one point merge deny > ask > allow. A hook that hangs is killed at its `timeout`
and is non-blocking; cancelling the call kills a running hook and the call never dispatches.
PostToolUse: exit 2 turns a success into error feedback; `additionalContext` rides the result.
Every run is recorded as `hook/invoked` / `hook/result` in the agent's open turn; a hook that
exits other than 0 or 2, is killed (the log names the signal) or times out is a non-blocking
`error`, never `pass`; one cancelled with its call is `cancelled`. A broken config file —
unreadable JSON, a top level or `hooks` that is not an object, an invalid regex matcher —
fails the mount with one line naming the file and the problem (fail closed: a hook nobody runs
is a policy nobody applies); unsupported hook types and events are skipped.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tether import AbortController
from tether.agent.session import SessionLog
from tether.kernel import ConfigError, Context
from tether.plugins.hooks import claude_code
from tether.plugins.hooks.claude_code import Config, load_hook_set
from tether.tools import ToolExecutionInput, ToolFailure, ToolSuccess

from ...patience import PATIENCE_S
from ..shell._support import marker, sleeping, until
from ._support import (
    FakeAgent,
    bash_hook,
    call_bash,
    events_of,
    python_hook,
    text_of,
    write_settings,
)

LOGGER = "tether.plugins.hooks"


def command(path: Path, **extra: Any) -> dict[str, Any]:
    return {"type": "command", "command": str(path), **extra}


def pre_tool_use(*groups: tuple[str | None, list[dict[str, Any]]]) -> dict[str, Any]:
    return {
        "PreToolUse": [
            {"hooks": hooks} if matcher is None else {"matcher": matcher, "hooks": hooks}
            for matcher, hooks in groups
        ]
    }


def deny_json(reason: str, decision: str = "deny") -> str:
    output = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }
    return f"import json, sys\nsys.stdin.read()\nprint(json.dumps({output!r}))"


async def mount(ctx: Context, project: Path, **config: Any) -> None:
    await ctx.plugin(claude_code, {"project_dir": str(project), **config})


def hooks_dir(project: Path) -> Path:
    return project / ".claude" / "hooks"


# -- PreToolUse ------------------------------------------------------------------------------------


async def test_exit_2_denies_the_call_and_the_model_sees_the_stderr_reason(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    guard = bash_hook(
        hooks_dir(project), "guard.sh", "cat > /dev/null\necho 'no touching here' >&2\nexit 2"
    )
    write_settings(project, pre_tool_use(("Bash", [command(guard)])))
    await mount(ctx, project)

    result = await call_bash(ctx, "touch ran", agent=agent)

    assert result.to_json() == {
        "is_error": True,
        "content": [{"type": "text", "text": "Error: no touching here"}],
        "error": {"message": "no touching here", "info": {"name": "ToolDenied", "code": "DENIED"}},
    }
    assert not (project / "ran").exists()


async def test_exit_2_without_stderr_denies_with_the_default_reason(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    guard = bash_hook(hooks_dir(project), "guard.sh", "exit 2")
    write_settings(project, pre_tool_use(("Bash", [command(guard)])))
    await mount(ctx, project)

    result = await call_bash(ctx, "true", agent=agent)

    assert text_of(result) == "Error: blocked by PreToolUse hook"


async def test_the_hook_gets_claude_codes_payload_on_stdin_in_the_project(
    ctx: Context, project: Path, agent: FakeAgent, session: SessionLog
) -> None:
    spy = python_hook(
        hooks_dir(project),
        "spy.py",
        """
import json, os, sys
payload = json.load(sys.stdin)
seen = {"payload": payload, "cwd": os.getcwd(), "project": os.environ["CLAUDE_PROJECT_DIR"]}
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "seen.json"), "w") as f:
    json.dump(seen, f)
""",
    )
    write_settings(project, pre_tool_use(("Bash", [command(spy)])))
    await mount(ctx, project)

    result = await call_bash(ctx, "echo hi", agent=agent, call_id="call_7")

    assert text_of(result).startswith("hi")
    seen = json.loads((project / "seen.json").read_text())
    prompt_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"tether:{session.id}:1"))
    assert seen == {
        "payload": {
            "session_id": session.id,
            "transcript_path": str(session.path.parent / "transcript.jsonl"),
            "cwd": str(project),
            "permission_mode": "bypassPermissions",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "echo hi", "description": "a test command"},
            "tool_use_id": "call_7",
            "prompt_id": prompt_id,
        },
        "cwd": str(project),
        "project": str(project),
    }


async def test_json_deny_refuses_the_call_with_its_reason(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    hook = python_hook(hooks_dir(project), "deny.py", deny_json("use the make targets instead"))
    write_settings(project, pre_tool_use(("Bash", [command(hook)])))
    await mount(ctx, project)

    result = await call_bash(ctx, "touch ran", agent=agent)

    assert isinstance(result, ToolFailure)
    assert text_of(result) == "Error: use the make targets instead"
    assert not (project / "ran").exists()


async def test_json_ask_without_an_approval_service_is_denied_with_the_ask_reason(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    hook = python_hook(hooks_dir(project), "ask.py", deny_json("pushes need a human", "ask"))
    write_settings(project, pre_tool_use(("Bash", [command(hook)])))
    await mount(ctx, project)

    result = await call_bash(ctx, "touch ran", agent=agent)

    assert text_of(result) == "Error: pushes need a human"
    assert not (project / "ran").exists()


async def test_json_allow_lets_the_call_run(ctx: Context, project: Path, agent: FakeAgent) -> None:
    hook = python_hook(hooks_dir(project), "allow.py", deny_json("fine", "allow"))
    write_settings(project, pre_tool_use(("Bash", [command(hook)])))
    await mount(ctx, project)

    result = await call_bash(ctx, "echo ran", agent=agent)

    assert isinstance(result, ToolSuccess)
    assert text_of(result).startswith("ran")


async def test_a_hook_on_another_tool_is_not_run(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    guard = bash_hook(hooks_dir(project), "guard.sh", "exit 2")
    write_settings(project, pre_tool_use(("Write|Edit", [command(guard)])))
    await mount(ctx, project)

    result = await call_bash(ctx, "echo ran", agent=agent)

    assert isinstance(result, ToolSuccess)
    assert events_of(agent.session, "hook/") == []


async def test_several_matching_hooks_merge_deny_over_ask_over_allow(
    ctx: Context, project: Path, agent: FakeAgent, session: SessionLog
) -> None:
    allow = python_hook(hooks_dir(project), "allow.py", deny_json("fine", "allow"))
    ask = python_hook(hooks_dir(project), "ask.py", deny_json("a human should look", "ask"))
    deny = bash_hook(hooks_dir(project), "deny.sh", "echo 'not on main' >&2\nexit 2")
    write_settings(
        project,
        pre_tool_use(
            ("Bash", [command(allow)]),
            (".*", [command(ask)]),
            ("Bash|Write", [command(deny)]),
        ),
    )
    await mount(ctx, project)

    result = await call_bash(ctx, "touch ran", agent=agent)

    assert text_of(result) == "Error: not on main"
    decisions = [(e["handler_id"], e["decision"]) for e in events_of(session, "hook/result")]
    assert decisions == [
        ("claude-code:PreToolUse:1", "allow"),
        ("claude-code:PreToolUse:2", "ask"),
        ("claude-code:PreToolUse:3", "block"),
    ]


async def test_an_ask_and_an_allow_merge_to_the_ask(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    allow = python_hook(hooks_dir(project), "allow.py", deny_json("fine", "allow"))
    ask = python_hook(hooks_dir(project), "ask.py", deny_json("a human should look", "ask"))
    write_settings(project, pre_tool_use(("Bash", [command(allow), command(ask)])))
    await mount(ctx, project)

    result = await call_bash(ctx, "touch ran", agent=agent)

    assert text_of(result) == "Error: a human should look"


async def test_a_failing_hook_is_non_blocking_and_logged(
    ctx: Context, project: Path, agent: FakeAgent, caplog: pytest.LogCaptureFixture
) -> None:
    broken = bash_hook(
        hooks_dir(project), "broken.sh", "echo 'jq: command not found' >&2\nexit 127"
    )
    write_settings(project, pre_tool_use(("Bash", [command(broken)])))
    await mount(ctx, project)

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        result = await call_bash(ctx, "echo ran", agent=agent)

    assert isinstance(result, ToolSuccess)
    assert [r.getMessage() for r in caplog.records] == [
        "hooks-claude-code: PreToolUse hook broken.sh: exited 127 (non-blocking): "
        "jq: command not found"
    ]


@dataclass
class WatchedAgent(FakeAgent):
    """An agent with a front end: what `notify` shows the person running it."""

    notices: list[tuple[str, str]] = field(default_factory=list)

    def notify(self, source: str, text: str) -> None:
        self.notices.append((source, text))


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ("echo 'warning: 3 lint issues' >&2", "warning: 3 lint issues"),
        ('echo \'{"systemMessage": "formatter is slow today"}\'', "formatter is slow today"),
        (
            "echo 'jq: command not found' >&2\nexit 127",
            "exited 127 (non-blocking): jq: command not found",
        ),
    ],
    ids=["stderr on success", "systemMessage", "a failure"],
)
async def test_a_hooks_warning_reaches_the_agents_front_end_not_only_the_log(
    ctx: Context,
    project: Path,
    session: SessionLog,
    caplog: pytest.LogCaptureFixture,
    body: str,
    shown: str,
) -> None:
    agent = WatchedAgent(session)
    hook = bash_hook(hooks_dir(project), "warn.sh", f"cat > /dev/null\n{body}")
    write_settings(project, pre_tool_use(("Bash", [command(hook)])))
    await mount(ctx, project)

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        result = await call_bash(ctx, "echo ran", agent=agent)

    assert isinstance(result, ToolSuccess)
    assert agent.notices == [("PreToolUse hook warn.sh", shown)]
    assert caplog.records == []


async def test_a_failing_hook_is_recorded_as_an_error_with_its_stderr_not_as_pass(
    ctx: Context, project: Path, agent: FakeAgent, session: SessionLog
) -> None:
    broken = bash_hook(
        hooks_dir(project), "broken.sh", "echo 'jq: command not found' >&2\nexit 127"
    )
    write_settings(project, pre_tool_use(("Bash", [command(broken)])))
    await mount(ctx, project)

    await call_bash(ctx, "echo ran", agent=agent)

    (outcome,) = events_of(session, "hook/result")
    del outcome["duration_ms"]
    assert outcome == {
        "type": "hook/result",
        "turn": 1,
        "point": "PreToolUse",
        "handler_id": "claude-code:PreToolUse:1",
        "decision": "error",
        "exit_code": 127,
        "stderr_summary": "jq: command not found",
    }


async def test_a_hook_that_kills_itself_is_a_non_blocking_error_with_its_status(
    ctx: Context,
    project: Path,
    agent: FakeAgent,
    session: SessionLog,
    caplog: pytest.LogCaptureFixture,
) -> None:
    doomed = bash_hook(hooks_dir(project), "doomed.sh", "kill -KILL $$")
    write_settings(project, pre_tool_use(("Bash", [command(doomed)])))
    await mount(ctx, project)

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        result = await call_bash(ctx, "echo ran", agent=agent)

    assert isinstance(result, ToolSuccess)
    assert [r.getMessage() for r in caplog.records] == [  # contained: 128 + SIGKILL
        "hooks-claude-code: PreToolUse hook doomed.sh: exited 137 (non-blocking): no stderr"
    ]
    (outcome,) = events_of(session, "hook/result")
    del outcome["duration_ms"]
    assert outcome == {
        "type": "hook/result",
        "turn": 1,
        "point": "PreToolUse",
        "handler_id": "claude-code:PreToolUse:1",
        "decision": "error",
        "exit_code": 137,
    }


async def test_a_hanging_hook_is_killed_at_its_timeout_and_the_tool_still_runs(
    ctx: Context,
    project: Path,
    agent: FakeAgent,
    session: SessionLog,
    caplog: pytest.LogCaptureFixture,
) -> None:
    duration = marker()
    hang = bash_hook(hooks_dir(project), "hang.sh", f"exec sleep {duration}")
    write_settings(project, pre_tool_use(("Bash", [command(hang, timeout=3)])))
    await mount(ctx, project)

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        async with asyncio.timeout(PATIENCE_S):  # ended at its timeout, not after the hour
            result = await call_bash(ctx, "echo ran > ran.txt", agent=agent)

    assert isinstance(result, ToolSuccess)
    assert (project / "ran.txt").read_text() == "ran\n"
    assert sleeping(duration) == []
    assert [r.getMessage() for r in caplog.records] == [
        "hooks-claude-code: PreToolUse hook hang.sh: timed out after 3000ms and was killed "
        "(non-blocking)"
    ]
    (outcome,) = events_of(session, "hook/result")
    del outcome["duration_ms"]
    assert outcome == {
        "type": "hook/result",
        "turn": 1,
        "point": "PreToolUse",
        "handler_id": "claude-code:PreToolUse:1",
        "decision": "error",
        "stderr_summary": "hook timed out after 3000ms; its process group was killed",
    }


async def test_cancelling_the_call_kills_the_running_hook_and_nothing_is_dispatched(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    duration = marker()
    hang = bash_hook(hooks_dir(project), "hang.sh", f"exec sleep {duration}")
    write_settings(project, pre_tool_use(("Bash", [command(hang)])))
    await mount(ctx, project)
    controller = AbortController()

    call = asyncio.create_task(call_bash(ctx, "touch ran", agent=agent, signal=controller.signal))
    await until(lambda: len(sleeping(duration)) == 1)
    controller.abort()
    result = await call

    assert isinstance(result, ToolFailure)
    assert result.code == "ABORTED_BEFORE_DISPATCH"
    assert not (project / "ran").exists()
    assert sleeping(duration) == []


async def test_a_hook_cancelled_with_its_call_is_recorded_as_cancelled(
    ctx: Context, project: Path, agent: FakeAgent, session: SessionLog
) -> None:
    hang = bash_hook(hooks_dir(project), "hang.sh", "echo $$ > hang.pid\nexec sleep 30")
    write_settings(project, pre_tool_use(("Bash", [command(hang)])))
    await mount(ctx, project)
    controller = AbortController()
    pid_file = project / "hang.pid"

    call = asyncio.create_task(call_bash(ctx, "touch ran", agent=agent, signal=controller.signal))
    async with asyncio.timeout(PATIENCE_S):
        while not pid_file.exists() or not pid_file.read_text().strip():
            await asyncio.sleep(0.01)
    controller.abort()
    await call

    (outcome,) = events_of(session, "hook/result")
    assert (outcome["decision"], outcome["stderr_summary"]) == (
        "cancelled",
        "hook cancelled; its process group was killed",
    )


async def test_hook_runs_are_recorded_in_the_open_turn(
    ctx: Context, project: Path, agent: FakeAgent, session: SessionLog
) -> None:
    noisy = bash_hook(hooks_dir(project), "noisy.sh", "echo 'careful now' >&2\nexit 0")
    write_settings(project, pre_tool_use(("Bash", [command(noisy)])))
    await mount(ctx, project)

    await call_bash(ctx, "true", agent=agent)

    invoked, outcome = events_of(session, "hook/")
    assert invoked == {
        "type": "hook/invoked",
        "turn": 1,
        "point": "PreToolUse",
        "dialect": "claude-code",
        "matcher": "Bash",
        "handler_id": "claude-code:PreToolUse:1",
    }
    assert isinstance(outcome.pop("duration_ms"), int | float)
    assert outcome == {
        "type": "hook/result",
        "turn": 1,
        "point": "PreToolUse",
        "handler_id": "claude-code:PreToolUse:1",
        "decision": "pass",
        "exit_code": 0,
        "stderr_summary": "careful now",
    }


async def test_hooks_run_without_an_agent_and_record_nothing(ctx: Context, project: Path) -> None:
    guard = bash_hook(hooks_dir(project), "guard.sh", "echo 'no' >&2\nexit 2")
    write_settings(project, pre_tool_use(("Bash", [command(guard)])))
    await mount(ctx, project)

    result = await call_bash(ctx, "true")

    assert text_of(result) == "Error: no"


# -- PostToolUse -----------------------------------------------------------------------------------


async def test_post_tool_use_exit_2_turns_a_success_into_error_feedback(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    lint = bash_hook(hooks_dir(project), "lint.sh", "echo 'lint failed: line 3' >&2\nexit 2")
    write_settings(project, {"PostToolUse": [{"matcher": "Bash", "hooks": [command(lint)]}]})
    await mount(ctx, project)

    result = await call_bash(ctx, "echo ran > ran.txt", agent=agent)

    assert result.to_json() == {
        "is_error": True,
        "content": [{"type": "text", "text": "lint failed: line 3"}],
        "error": {"message": "lint failed: line 3"},
    }
    assert (project / "ran.txt").exists()


async def test_post_tool_use_sees_the_response_and_its_context_rides_the_result(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    review = python_hook(
        hooks_dir(project),
        "review.py",
        """
import json, sys
payload = json.load(sys.stdin)
note = "the command printed " + payload["tool_response"]["stdout"].strip()
out = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": note}}
print(json.dumps(out))
""",
    )
    write_settings(project, {"PostToolUse": [{"matcher": "Bash", "hooks": [command(review)]}]})
    await mount(ctx, project)

    result = await call_bash(ctx, "echo 42", agent=agent)

    assert isinstance(result, ToolSuccess)
    (context,) = result.additional_contexts
    assert [dict(b) for b in context.content] == [
        {"type": "text", "text": "the command printed 42"}
    ]
    assert dict(context.source) == {"kind": "plugin", "plugin": "hooks-claude-code"}


async def test_post_tool_use_does_not_run_for_a_failed_call(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    lint = bash_hook(hooks_dir(project), "lint.sh", "touch post-ran\nexit 2")
    deny = bash_hook(hooks_dir(project), "deny.sh", "echo no >&2\nexit 2")
    write_settings(
        project,
        {
            **pre_tool_use(("Bash", [command(deny)])),
            "PostToolUse": [{"matcher": "Bash", "hooks": [command(lint)]}],
        },
    )
    await mount(ctx, project)

    result = await call_bash(ctx, "true", agent=agent)

    assert text_of(result) == "Error: no"
    assert not (project / "post-ran").exists()


# -- loading ---------------------------------------------------------------------------------------


def unusable(path: Path, problem: str) -> str:
    return (
        f"{path}: {problem}; fix the file or move it away (tether does not run without the "
        "permission rules and hooks it may hold)"
    )


async def test_an_invalid_regex_matcher_fails_the_mount_naming_the_file(
    ctx: Context, project: Path
) -> None:
    guard = bash_hook(hooks_dir(project), "guard.sh", "exit 2")
    path = write_settings(project, pre_tool_use(("Bash(", [command(guard)])))

    with pytest.raises(ConfigError) as raised:
        await mount(ctx, project)

    assert str(raised.value) == unusable(
        path, 'invalid claude-code regex matcher "Bash(" on event "PreToolUse"'
    )
    assert ctx.listeners("tools/pre-execute") == ()


async def test_a_broken_settings_file_fails_the_mount_though_the_others_are_good(
    ctx: Context, project: Path
) -> None:
    guard = bash_hook(hooks_dir(project), "guard.sh", "exit 2")
    write_settings(project, pre_tool_use(("Bash", [command(guard)])))
    broken = project / ".claude" / "settings.local.json"
    broken.write_text('{"hooks": {"PreToolUse": [')

    with pytest.raises(ConfigError) as raised:
        await mount(ctx, project)

    assert str(raised.value) == unusable(
        broken, "not valid JSON (Expecting value: line 1 column 27 (char 26))"
    )


@pytest.mark.parametrize(
    ("document", "what"),
    [
        ([{"hooks": {}}], "not a JSON object"),
        ({"hooks": "x"}, '"hooks" is a string, not an object of events'),
        ({"hooks": ["PreToolUse"]}, '"hooks" is a JSON array, not an object of events'),
    ],
    ids=["a list", "hooks a string", "hooks a list"],
)
async def test_a_settings_file_of_the_wrong_shape_fails_the_mount_naming_the_file_and_the_problem(
    ctx: Context, project: Path, document: object, what: str
) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(document))

    with pytest.raises(ConfigError) as raised:
        await mount(ctx, project)

    assert str(raised.value) == unusable(path, what)


async def test_a_settings_file_without_hooks_is_read_quietly(
    ctx: Context, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"permissions": {"deny": ["Bash(rm:*)"]}}')

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        await mount(ctx, project)

    assert caplog.records == []


async def test_a_settings_file_nested_5000_deep_fails_the_mount(
    ctx: Context, project: Path
) -> None:
    deep = project / ".claude" / "settings.local.json"
    deep.parent.mkdir(parents=True)
    deep.write_text('{"hooks": ' + "[" * 5000 + "]" * 5000 + "}")

    with pytest.raises(ConfigError) as raised:
        await mount(ctx, project)

    assert str(raised.value) == unusable(
        deep, "not valid JSON (JSON nested too deeply to read; simplify the file)"
    )


async def test_a_missing_explicit_config_path_fails_the_mount(ctx: Context, project: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        await mount(ctx, project, config_path="hooks.json")

    assert str(raised.value) == unusable(
        project / "hooks.json", "cannot be read (No such file or directory)"
    )


async def test_unsupported_hook_types_are_skipped_with_the_log_line(
    ctx: Context, project: Path, agent: FakeAgent, caplog: pytest.LogCaptureFixture
) -> None:
    guard = bash_hook(hooks_dir(project), "guard.sh", "echo 'commands still run' >&2\nexit 2")
    write_settings(
        project,
        pre_tool_use(
            ("Bash", [{"type": "prompt", "prompt": "Is this safe?"}, command(guard)]),
            ("Write", [{"type": "http", "url": "http://127.0.0.1:9/hook"}]),
        ),
    )

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        await mount(ctx, project)
    result = await call_bash(ctx, "true", agent=agent)

    skipped = (
        'hooks-claude-code: skipping unsupported "{}" hook on PreToolUse (only command hooks run)'
    )
    assert [r.getMessage() for r in caplog.records] == [
        skipped.format("prompt"),
        skipped.format("http"),
    ]
    assert text_of(result) == "Error: commands still run"


async def test_without_any_hooks_the_bridge_registers_nothing(ctx: Context, project: Path) -> None:
    await mount(ctx, project)

    assert ctx.listeners("tools/pre-execute") == ()
    assert ctx.listeners("tools/post-execute") == ()


async def test_identical_hooks_in_two_files_run_once(
    ctx: Context, project: Path, agent: FakeAgent, session: SessionLog
) -> None:
    counter = bash_hook(hooks_dir(project), "count.sh", "echo x >> count.txt")
    write_settings(project, pre_tool_use(("Bash", [command(counter)])))
    write_settings(project, pre_tool_use(("Bash", [command(counter)])), "settings.local.json")
    await mount(ctx, project)

    await call_bash(ctx, "true", agent=agent)

    assert (project / "count.txt").read_text() == "x\n"


# -- a real-world settings file ----------------------------------------------------------------

REAL_WORLD = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "permissions": {
        "allow": ["Bash(npm run lint)", "Bash(npm run test:*)"],
        "deny": ["Read(./.env)"],
    },
    "env": {"FOO": "bar"},
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {
                        "type": "command",
                        "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/block-dangerous.py',
                        "timeout": 10,
                    }
                ],
            },
            {
                "matcher": "Edit|MultiEdit|Write",
                "hooks": [
                    {"type": "command", "command": "$CLAUDE_PROJECT_DIR/.claude/hooks/protect.py"}
                ],
            },
        ],
        "PostToolUse": [
            {
                "matcher": "Edit|MultiEdit|Write",
                "hooks": [
                    {"type": "command", "command": "${CLAUDE_PROJECT_DIR}/.claude/hooks/format.sh"}
                ],
            }
        ],
        "Notification": [
            {
                "matcher": "",
                "hooks": [{"type": "command", "command": "notify-send 'Claude Code' 'Input'"}],
            }
        ],
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": 'echo "Current time: $(date)"'}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "exit 0"}]}],
    },
}


def real_world_project(project: Path) -> Path:
    hooks = hooks_dir(project)
    python_hook(
        hooks,
        "block-dangerous.py",
        """
import json, sys
command = json.load(sys.stdin)["tool_input"].get("command", "")
if "rm -rf" in command:
    print("Blocked: rm -rf is not allowed in this repository", file=sys.stderr)
    sys.exit(2)
""",
    )
    python_hook(
        hooks,
        "protect.py",
        """
import json, sys
path = json.load(sys.stdin)["tool_input"].get("file_path", "")
if path.endswith(".env"):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": ".env files are protected"}}))
""",
    )
    bash_hook(
        hooks,
        "format.sh",
        'cat > "$CLAUDE_PROJECT_DIR/.claude/last-format.json"',
    )
    path = project / ".claude" / "settings.json"
    path.write_text(json.dumps(REAL_WORLD, indent=2))
    return path


def test_a_real_world_settings_file_loads_unchanged(project: Path, home: Path) -> None:
    path = real_world_project(project)

    loaded = load_hook_set(Config(project_dir=str(project)), project, home)

    assert loaded.sources == [str(path)]
    assert loaded.events() == {
        "PreToolUse",
        "PostToolUse",
        "Notification",
        "UserPromptSubmit",
        "Stop",
    }
    pre = [
        (m, h.handler_id, h.hook.command, h.hook.timeout_sec)
        for m, h in loaded.groups["PreToolUse"]
    ]
    assert pre == [
        (
            "Bash",
            "claude-code:PreToolUse:1",
            '"$CLAUDE_PROJECT_DIR"/.claude/hooks/block-dangerous.py',
            10.0,
        ),
        (
            "Edit|MultiEdit|Write",
            "claude-code:PreToolUse:2",
            "$CLAUDE_PROJECT_DIR/.claude/hooks/protect.py",
            None,
        ),
    ]
    ((matcher, post),) = loaded.groups["PostToolUse"]
    assert (matcher, post.hook.command) == (
        "Edit|MultiEdit|Write",
        f"{project}/.claude/hooks/format.sh",
    )


async def test_a_real_world_settings_file_guards_bash_and_writes(
    ctx: Context, project: Path, agent: FakeAgent
) -> None:
    real_world_project(project)
    await mount(ctx, project)

    blocked = await call_bash(ctx, "rm -rf build", agent=agent)
    fine = await call_bash(ctx, "echo fine", agent=agent, call_id="c2")
    env = await write(ctx, agent, ".env", "SECRET=1", "c3")
    notes = await write(ctx, agent, "notes.md", "# notes\n", "c4")

    assert text_of(blocked) == "Error: Blocked: rm -rf is not allowed in this repository"
    assert text_of(fine).startswith("fine")
    assert text_of(env) == "Error: .env files are protected"
    assert not (project / ".env").exists()
    assert isinstance(notes, ToolSuccess)
    formatted = json.loads((project / ".claude" / "last-format.json").read_text())
    assert (formatted["hook_event_name"], formatted["tool_name"]) == ("PostToolUse", "Write")
    assert formatted["tool_input"] == {"file_path": "notes.md", "content": "# notes\n"}


async def write(ctx: Context, agent: FakeAgent, path: str, content: str, call_id: str) -> Any:
    return await ctx.tools.execute(
        ToolExecutionInput(
            call_id=call_id,
            name="write",
            arguments={"file_path": path, "content": content},
            signal=AbortController().signal,
            agent=agent,
        )
    )
