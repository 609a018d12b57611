"""Claude Code's SubagentStart and SubagentStop hooks around a `task` child.

Contract (capabilities spec §5.3, Claude Code's hook reference): a SubagentStart hook runs before
the child's first request with `agent_id` (the child's session id) and `agent_type`, matched on
the type; its `additionalContext` joins the child's first request after the prompt. A
SubagentStop hook runs after the child's turn with `agent_id`, `agent_type`,
`stop_hook_active: false` and `agent_transcript_path`. The session fields of both payloads are
the caller's. A child runs no SessionStart, UserPromptSubmit or Stop hooks of its own.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tether import AbortController
from tether.plugins.hooks import claude_code
from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ._support import Rig, Router, first_user_text, task_call

pytestmark = pytest.mark.slow

RECORD = """\
#!{python}
import json, sys
payload = json.load(sys.stdin)
with open({log!r}, "a") as out:
    out.write(json.dumps(payload) + "\\n")
{extra}
"""


def hook(directory: Path, name: str, log: Path, extra: str = "") -> str:
    import sys

    path = directory / name
    path.write_text(RECORD.format(python=sys.executable, log=str(log), extra=extra))
    path.chmod(0o755)
    return str(path)


def recorded(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.fixture
async def hooked(
    tmp_path: Path, server: ScriptedModelServer, router: Router, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[Rig, Path]]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    rig = await Rig.start(tmp_path, server, router)
    hooks_dir = tmp_path / "hooks"
    hooks_dir.mkdir()
    log = tmp_path / "hooks.jsonl"
    context = (
        'print(json.dumps({"hookSpecificOutput": {"hookEventName": "SubagentStart",'
        ' "additionalContext": "the repo uses tabs"}}))'
    )

    def group(name: str, matcher: str | None = None, extra: str = "") -> list[dict[str, Any]]:
        entry: dict[str, Any] = {
            "hooks": [{"type": "command", "command": hook(hooks_dir, name, log, extra)}]
        }
        if matcher is not None:
            entry["matcher"] = matcher
        return [entry]

    settings = {
        "hooks": {
            "SubagentStart": group("start.py", "general-purpose", context)
            + group("reviewer-start.py", "reviewer"),
            "SubagentStop": group("stop.py"),
            "SessionStart": group("session.py"),
            "UserPromptSubmit": group("prompt.py"),
            "Stop": group("turn-stop.py"),
        }
    }
    (rig.work / ".claude").mkdir()
    (rig.work / ".claude" / "settings.json").write_text(json.dumps(settings))
    await rig.ctx.plugin(claude_code, {"project_dir": str(rig.work)})
    try:
        yield rig, log
    finally:
        await rig.aclose()


async def run(rig: Rig) -> Any:
    rig.router.script("parent task", tool_calls_reply(task_call("t1", "look")), text_reply("ok"))
    rig.router.script("look", text_reply("looked"))
    parent = rig.parent()
    outcome = await parent.run_turn("parent task", signal=AbortController().signal)
    assert outcome.completed
    return parent


async def test_subagent_start_gets_the_child_and_its_type_and_adds_context(
    hooked: tuple[Rig, Path],
) -> None:
    rig, log = hooked

    parent = await run(rig)

    (child_id,) = rig.children_of(parent.session.id)
    (start,) = [p for p in recorded(log) if p["hook_event_name"] == "SubagentStart"]
    assert {k: start[k] for k in ("agent_id", "agent_type", "session_id")} == {
        "agent_id": child_id,
        "agent_type": "general-purpose",
        "session_id": parent.session.id,
    }
    request = rig.router.seen["look"][0]
    users = [m["content"] for m in request.messages if m["role"] == "user"]
    assert first_user_text(request) == "look"
    assert json.dumps(users).count("the repo uses tabs") == 1


async def test_subagent_stop_gets_the_child_and_its_transcript(
    hooked: tuple[Rig, Path],
) -> None:
    rig, log = hooked

    parent = await run(rig)

    (child_id,) = rig.children_of(parent.session.id)
    (stop,) = [p for p in recorded(log) if p["hook_event_name"] == "SubagentStop"]
    assert {k: stop[k] for k in ("agent_id", "agent_type", "stop_hook_active")} == {
        "agent_id": child_id,
        "agent_type": "general-purpose",
        "stop_hook_active": False,
    }
    assert Path(stop["agent_transcript_path"]).parent == rig.store.path(child_id).parent


async def test_a_child_runs_no_session_prompt_or_stop_hooks_of_its_own(
    hooked: tuple[Rig, Path],
) -> None:
    rig, log = hooked

    parent = await run(rig)

    events = [(p["hook_event_name"], p["session_id"]) for p in recorded(log)]
    mine = parent.session.id
    assert events == [
        ("SessionStart", mine),
        ("UserPromptSubmit", mine),
        ("SubagentStart", mine),
        ("SubagentStop", mine),
        ("Stop", mine),
    ]
