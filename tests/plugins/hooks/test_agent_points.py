"""Claude Code's agent-level hook events on the agent loop: UserPromptSubmit, Stop, SessionStart.

Contract (capabilities spec §5.3, on the loop's `agent/prompt`, `agent/turn-stopping` and
`agent/session-start` events): a UserPromptSubmit hook that exits 2 rejects the prompt — the
turn ends `{"kind": "blocked", "message": <stderr>}` without a model request and the prompt is
not recorded; its plain stdout or `additionalContext` is added after the prompt. A Stop hook
that blocks continues the turn with its reason as a user message, once per block
(`stop_hook_active` tells the script it already did). A SessionStart hook runs before the first
turn with source `startup`, and its context reaches the first request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tether import AbortController
from tether.agent.llm import LlmConfig, RetryPolicy
from tether.agent.llm.plugin import build_llm
from tether.agent.loop import AgentLoop, AgentSettings
from tether.agent.session import SessionLog, SessionStore
from tether.kernel import Context
from tether.plugins.hooks import claude_code
from tether.testing.scripted_model import ScriptedModelServer, text_reply

from ._support import bash_hook, events_of, python_hook, write_settings


@pytest.fixture
async def server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as scripted:
        yield scripted


class Rig:
    def __init__(self, ctx: Context, server: ScriptedModelServer, project: Path, tmp: Path):
        self.ctx, self.server, self.project = ctx, server, project
        self.store = SessionStore(tmp / "sessions")
        self.logs: list[SessionLog] = []
        self.llm = build_llm(
            LlmConfig(
                provider="openai",
                base_url=server.base_url,
                model="scripted",
                retry=RetryPolicy(mode="off"),
            ),
            environ={},
        )

    def agent(self) -> AgentLoop:
        log = self.store.create(cwd=self.project)
        self.logs.append(log)
        return AgentLoop(
            tools=self.ctx.tools.runtime,
            llm=self.llm,
            session=log,
            settings=AgentSettings(cwd=self.project),
            ctx=self.ctx,
        )

    async def aclose(self) -> None:
        for log in self.logs:
            log.close()
        await self.llm.aclose()


@pytest.fixture
async def rig(
    ctx: Context, server: ScriptedModelServer, project: Path, tmp_path: Path
) -> AsyncIterator[Rig]:
    built = Rig(ctx, server, project, tmp_path)
    yield built
    await built.aclose()


async def mount(rig: Rig, hooks: dict[str, Any]) -> None:
    write_settings(rig.project, hooks)
    await rig.ctx.plugin(claude_code, {"project_dir": str(rig.project)})


def group(path: Path) -> list[dict[str, Any]]:
    return [{"hooks": [{"type": "command", "command": str(path)}]}]


def user_texts(log: SessionLog) -> list[str]:
    return [
        "".join(b["text"] for b in e.data["content"])  # type: ignore[index, union-attr]
        for e in log.events
        if e.type == "user/message"
    ]


async def test_a_prompt_blocked_by_exit_2_ends_the_turn_without_a_model_request(
    rig: Rig,
) -> None:
    hook = bash_hook(
        rig.project / "hooks",
        "screen.sh",
        "cat > /dev/null\necho 'no secrets in prompts' >&2\nexit 2",
    )
    await mount(rig, {"UserPromptSubmit": group(hook)})
    agent = rig.agent()

    outcome = await agent.run_turn("my password is hunter2", signal=AbortController().signal)

    assert outcome.reason == {"kind": "blocked", "message": "no secrets in prompts"}
    assert rig.server.requests == []
    log = agent.session
    assert user_texts(log) == []
    assert [e["type"] for e in events_of(log, "")] == [
        "turn/start",
        "hook/invoked",
        "hook/result",
        "turn/end",
    ]


async def test_a_prompt_hooks_plain_stdout_is_added_after_the_prompt(rig: Rig) -> None:
    hook = python_hook(
        rig.project / "hooks",
        "context.py",
        "import json, sys\nprompt = json.load(sys.stdin)['prompt']\n"
        "print(f'the prompt had {len(prompt)} characters')",
    )
    await mount(rig, {"UserPromptSubmit": group(hook)})
    rig.server.push(text_reply("ok"))
    agent = rig.agent()

    outcome = await agent.run_turn("hello", signal=AbortController().signal)

    assert outcome.completed
    assert user_texts(agent.session) == ["hello", "the prompt had 5 characters"]
    sent = [m["content"] for m in rig.server.requests[0].messages if m["role"] == "user"]
    assert json.dumps(sent).count("the prompt had 5 characters") == 1


async def test_a_blocking_stop_hook_continues_the_turn_once_with_its_reason(rig: Rig) -> None:
    hook = python_hook(
        rig.project / "hooks",
        "stop.py",
        """
import json, sys
payload = json.load(sys.stdin)
if not payload["stop_hook_active"]:
    print("run the tests before you stop", file=sys.stderr)
    sys.exit(2)
""",
    )
    await mount(rig, {"Stop": group(hook)})
    rig.server.push(text_reply("done"), text_reply("tests pass, done"))
    agent = rig.agent()

    outcome = await agent.run_turn("fix it", signal=AbortController().signal)

    assert (outcome.reason, outcome.text) == ({"kind": "completed"}, "tests pass, done")
    assert len(rig.server.requests) == 2
    assert user_texts(agent.session) == ["fix it", "run the tests before you stop"]
    decisions = [e["decision"] for e in events_of(agent.session, "hook/result")]
    assert decisions == ["block", "pass"]


async def test_a_session_start_hooks_context_reaches_the_first_request(rig: Rig) -> None:
    hook = python_hook(
        rig.project / "hooks",
        "start.py",
        """
import json, sys
source = json.load(sys.stdin)["source"]
out = {"hookSpecificOutput": {"hookEventName": "SessionStart",
       "additionalContext": f"session {source}: the main branch is protected"}}
print(json.dumps(out))
""",
    )
    await mount(rig, {"SessionStart": [{"matcher": "startup", **group(hook)[0]}]})
    rig.server.push(text_reply("hi"), text_reply("again"))
    agent = rig.agent()

    await agent.run_turn("hello", signal=AbortController().signal)
    await agent.run_turn("and again", signal=AbortController().signal)

    assert user_texts(agent.session) == [
        "hello",
        "session startup: the main branch is protected",
        "and again",
    ]
    first = json.dumps(rig.server.requests[0].messages)
    assert "session startup: the main branch is protected" in first
