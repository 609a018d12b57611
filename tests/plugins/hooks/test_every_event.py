"""Every Claude Code hook event tether fires, from one settings file, on a real `Agent` (issue 34
item 4): real hook scripts append their stdin (and the Claude Code environment variables) to a
file, and the test reads the fields.

Contract: SessionStart runs with source `startup`, then `compact` after `/compact` and `clear`
after `/clear`; UserPromptSubmit, PreToolUse, PermissionRequest (before an ask: its `allow` runs
the call unasked, its `deny` refuses it with its message), Notification (`permission_prompt`,
when a person is asked), PostToolUse (with `duration_ms`), PostToolUseFailure (`error`,
`is_interrupt`, `duration_ms`), Stop (with `last_assistant_message`), PreCompact and PostCompact
(`trigger`, `custom_instructions` / `compact_summary`), SessionEnd (`clear`, then `other` when
the agent closes); inside a turn every payload has the same `prompt_id`. Every hook gets
`CLAUDE_PROJECT_DIR`, `CLAUDECODE=1`, `CLAUDE_CODE_ENTRYPOINT`, `CLAUDE_CODE_SESSION_ID` (the
payload's `session_id`), `CLAUDE_PID` and `CLAUDE_CONFIG_DIR`; SessionStart hooks
`CLAUDE_ENV_FILE` too. An event tether does not run is named in one warning line at load.
Automatic compaction between two steps of a turn runs PreCompact and PostCompact (`auto`) and
SessionStart (`compact`) before the turn goes on.
"""

from __future__ import annotations

import json
import logging
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tether import AbortController, Agent, LlmConfig, tool
from tether.agent.llm import RetryPolicy
from tether.plugins.approval import ApprovalQuestion
from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

pytestmark = pytest.mark.slow

EVENTS = (
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "Notification",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "PreCompact",
    "PostCompact",
)
ENV = (
    "CLAUDE_PROJECT_DIR",
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_PID",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_ENV_FILE",
)
RECORD = """\
#!{python}
import json, os, sys
payload = json.load(sys.stdin)
env = {{name: os.environ.get(name) for name in {env!r}}}
with open({log!r}, "a") as out:
    out.write(json.dumps({{"payload": payload, "env": env}}) + "\\n")
command = str(payload.get("tool_input", {{}}).get("command", ""))
if payload["hook_event_name"] == "PermissionRequest" and "allow-me" in command:
    print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "PermissionRequest",
        "decision": {{"behavior": "allow"}}}}}}))
if payload["hook_event_name"] == "PermissionRequest" and "deny-me" in command:
    print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "PermissionRequest",
        "decision": {{"behavior": "deny", "message": "not this one"}}}}}}))
"""


class Prompter:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def ask(self, question: ApprovalQuestion) -> str:
        args = question.arguments if isinstance(question.arguments, dict) else {}
        self.asked.append(str(args.get("command")))
        return "allow-once"


@pytest.fixture
async def server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as scripted:
        yield scripted


def settings(work: Path, log: Path) -> None:
    script = work.parent / "record.py"
    script.write_text(RECORD.format(python=sys.executable, env=ENV, log=str(log)))
    script.chmod(0o755)
    hooks = {event: [{"hooks": [{"type": "command", "command": str(script)}]}] for event in EVENTS}
    hooks["TeammateIdle"] = [{"hooks": [{"type": "command", "command": str(script)}]}]
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


def recorded(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def bash(call_id: str, command: str) -> tuple[str, str, str]:
    return (call_id, "bash", json.dumps({"command": command, "description": "d"}))


async def test_a_settings_file_with_every_hook_event_runs_each_of_them(
    tmp_path: Path,
    server: ScriptedModelServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "work"
    work.mkdir()
    log = tmp_path / "hooks.jsonl"
    settings(work, log)
    prompter = Prompter()
    server.push(
        tool_calls_reply(
            bash("c1", "touch allow-me"),
            bash("c2", "touch deny-me"),
            bash("c3", "touch ask-me"),
            ("c4", "read", json.dumps({"file_path": str(work / "missing.txt")})),
        ),
        text_reply("all done"),
        text_reply("the summary"),
        text_reply("after compact"),
        text_reply("after clear"),
    )
    signal = AbortController().signal
    model = LlmConfig(
        provider="openai", base_url=server.base_url, model="scripted", retry=RetryPolicy(mode="off")
    )
    with caplog.at_level(logging.WARNING, logger="tether.plugins.hooks"):
        agent = Agent(
            preset="coding", model=model, cwd=work, home=tmp_path / "tether", approver=prompter
        )
        try:
            first = await agent.run("go", signal=signal)
            await agent.compact(signal=signal, focus="keep the tools")
            await agent.run("again", signal=signal)
            await agent.new_session()
            await agent.run("fresh", signal=signal)
        finally:
            await agent.aclose()

    runs = recorded(log)
    payloads = [r["payload"] for r in runs]
    seen = [(p["hook_event_name"], _subject(p)) for p in payloads]
    assert seen == [
        ("SessionStart", "startup"),
        ("UserPromptSubmit", "go"),
        ("PreToolUse", "touch allow-me"),
        ("PermissionRequest", "touch allow-me"),
        ("PostToolUse", "touch allow-me"),
        ("PreToolUse", "touch deny-me"),
        ("PermissionRequest", "touch deny-me"),
        ("PreToolUse", "touch ask-me"),
        ("PermissionRequest", "touch ask-me"),
        ("Notification", "permission_prompt"),
        ("PostToolUse", "touch ask-me"),
        ("PreToolUse", "read"),
        ("PostToolUseFailure", "read"),
        ("Stop", "all done"),
        ("PreCompact", "manual"),
        ("PostCompact", "manual"),
        ("SessionStart", "compact"),
        ("UserPromptSubmit", "again"),
        ("Stop", "after compact"),
        ("SessionEnd", "clear"),
        ("SessionStart", "clear"),
        ("UserPromptSubmit", "fresh"),
        ("Stop", "after clear"),
        ("SessionEnd", "other"),
    ]
    assert prompter.asked == ["touch ask-me"]
    assert first.outcome.kind == "completed"
    by_event = {p["hook_event_name"]: p for p in payloads}
    assert by_event["Notification"]["message"] == "tether needs your permission to use Bash"
    assert by_event["PostToolUse"]["tool_input"]["command"] == "touch ask-me"
    assert (work / "allow-me").exists()
    assert not (work / "deny-me").exists()
    assert (work / "ask-me").exists()
    assert isinstance(by_event["PostToolUse"]["duration_ms"], int)
    failure = by_event["PostToolUseFailure"]
    assert failure["tool_name"] == "Read"
    assert failure["tool_input"] == {"file_path": str(work / "missing.txt")}
    assert "missing.txt" in failure["error"]
    assert failure["is_interrupt"] is False
    assert isinstance(failure["duration_ms"], int)
    assert by_event["PreCompact"]["custom_instructions"] == "keep the tools"
    assert by_event["PostCompact"]["compact_summary"] == "the summary"
    first_turn = {p["prompt_id"] for p in payloads[1:14]}
    assert len(first_turn) == 1
    assert uuid.UUID(first_turn.pop()).version == 5
    assert "prompt_id" not in payloads[-1]  # SessionEnd, after the turns
    for run in runs:
        payload, env = run["payload"], run["env"]
        assert {"session_id", "transcript_path", "cwd", "permission_mode"} <= payload.keys()
        assert env["CLAUDE_PROJECT_DIR"] == str(work)
        assert env["CLAUDECODE"] == "1"
        assert env["CLAUDE_CODE_ENTRYPOINT"] == "tether"
        assert env["CLAUDE_CODE_SESSION_ID"] == payload["session_id"]
        assert env["CLAUDE_PID"] is not None
        assert env["CLAUDE_CONFIG_DIR"] == str(home / ".claude")
        starting = payload["hook_event_name"] == "SessionStart"
        assert (env["CLAUDE_ENV_FILE"] is not None) == starting
    results = [m for m in server.requests[1].messages if m.get("tool_call_id") == "c2"]
    assert [m["content"] for m in results] == ["Error: not this one"]
    unsupported = [r.getMessage() for r in caplog.records if "TeammateIdle" in r.getMessage()]
    assert len(unsupported) == 1
    assert "tether does not support the TeammateIdle event" in unsupported[0]


def _subject(payload: dict[str, Any]) -> str:
    event = payload["hook_event_name"]
    if "tool_input" in payload:
        return str(payload["tool_input"].get("command") or payload["tool_name"].lower())
    if event == "SessionStart":
        return str(payload["source"])
    if event == "UserPromptSubmit":
        return str(payload["prompt"])
    if event == "Stop":
        return str(payload["last_assistant_message"])
    if event in ("PreCompact", "PostCompact"):
        return str(payload["trigger"])
    if event == "Notification":
        return str(payload["notification_type"])
    return str(payload.get("reason"))


@tool
async def long_output() -> str:
    """Returns a long text."""
    return "y " * 1500


async def test_compaction_between_steps_runs_pre_compact_post_compact_and_session_start(
    tmp_path: Path, server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    work = tmp_path / "work"
    work.mkdir()
    log = tmp_path / "hooks.jsonl"
    settings(work, log)
    server.push(
        tool_calls_reply(("c1", "long_output", "{}")),
        text_reply("SUMMARY: a long output"),
        text_reply("done"),
    )
    model = LlmConfig(
        provider="openai", base_url=server.base_url, model="scripted", retry=RetryPolicy(mode="off")
    )
    agent = Agent(
        preset="coding",
        model=model,
        cwd=work,
        home=tmp_path / "tether",
        context_window=600,
        tools=[long_output],
        permission_mode="bypassPermissions",
    )
    try:
        result = await agent.run("go", signal=AbortController().signal)
    finally:
        await agent.aclose()

    assert result.outcome.kind == "completed"
    seen = [(p["hook_event_name"], _subject(p)) for p in (r["payload"] for r in recorded(log))]
    assert seen == [
        ("SessionStart", "startup"),
        ("UserPromptSubmit", "go"),
        ("PreToolUse", "long_output"),
        ("PostToolUse", "long_output"),
        ("PreCompact", "auto"),
        ("PostCompact", "auto"),
        ("SessionStart", "compact"),
        ("Stop", "done"),
        ("SessionEnd", "other"),
    ]
