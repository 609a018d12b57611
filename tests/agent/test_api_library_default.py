"""`Agent()` without a preset is an agent of your own (agent/api.py, issue 38 §6).

Contract: the default preset is `library`: the request offers only the application's tools (no
built-ins) under the library prompt; an application tool runs without an approval channel;
without a `home` nothing is read from or written under the user's home (`~/.tether`) — the
session lives in a private directory removed when the agent closes — and no `tether.yml` of the
workspace is read. `preset="coding"` keeps the command line's behaviour (tests/agent/test_api.py
and tests/cli run it).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tether import AbortController, Agent, LlmConfig, tool
from tether.agent.llm import RetryPolicy
from tether.agent.policy import LIBRARY_PROMPT
from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply


@tool
async def shout(text: str) -> str:
    """Upper-cases the text."""
    return text.upper()


class Home:
    """A temporary HOME (no TETHER_HOME) and a workspace beside it, and a model server."""

    def __init__(self, tmp: Path, server: ScriptedModelServer) -> None:
        self.home = tmp / "home"
        self.home.mkdir()
        self.work = tmp / "work"
        self.work.mkdir()
        self.server = server

    def agent(self, **options: Any) -> Agent:
        model = LlmConfig(
            provider="openai",
            base_url=self.server.base_url,
            model="scripted",
            retry=RetryPolicy(mode="off"),
        )
        return Agent(model=model, tools=[shout], cwd=self.work, **options)

    def files_under_home(self) -> list[str]:
        return sorted(
            os.path.relpath(os.path.join(root, name), self.home)
            for root, dirs, files in os.walk(self.home)
            for name in (*dirs, *files)
        )


@pytest.fixture
async def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Home]:
    monkeypatch.delenv("TETHER_HOME", raising=False)
    async with ScriptedModelServer() as server:
        built = Home(tmp_path, server)
        monkeypatch.setenv("HOME", str(built.home))
        yield built


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or ()]


async def test_the_default_agent_offers_only_the_applications_tools_under_the_library_prompt(
    place: Home,
) -> None:
    place.server.push(text_reply("ok"))
    async with place.agent() as agent:
        await agent.run("hi", signal=AbortController().signal)
    request = place.server.requests[0]
    assert tool_names(request.body) == ["shout"]
    assert request.messages[0] == {"role": "system", "content": LIBRARY_PROMPT}


async def test_the_default_agent_runs_an_application_tool_without_an_approval_channel(
    place: Home,
) -> None:
    place.server.push(tool_calls_reply(("c1", "shout", '{"text": "hi"}')), text_reply("HI"))
    async with place.agent() as agent:
        result = await agent.run("shout hi", signal=AbortController().signal)
    (record,) = result.tool_calls
    assert (record.name, record.code, record.content) == ("shout", None, "HI")


async def test_the_default_agent_writes_nothing_under_the_users_home(place: Home) -> None:
    place.server.push(tool_calls_reply(("c1", "shout", '{"text": "hi"}')), text_reply("HI"))
    async with place.agent() as agent:
        await agent.run("shout hi", signal=AbortController().signal)
    assert place.files_under_home() == []


async def test_the_default_agents_session_is_removed_when_it_closes(place: Home) -> None:
    place.server.push(text_reply("ok"))
    async with place.agent() as agent:
        await agent.run("hi", signal=AbortController().signal)
        log = agent.session.path
        assert log.is_file()
    assert not log.exists()
    assert not log.parent.parent.parent.exists()  # <private home>/sessions/<id>/session.jsonl


async def test_the_default_agent_reads_no_config_file_of_the_home_or_the_workspace(
    place: Home,
) -> None:
    (place.home / ".tether").mkdir()
    (place.home / ".tether" / "config.yml").write_text("plugins: [{name: no-such-plugin}]\n")
    (place.work / "tether.yml").write_text("plugins: [{name: no-such-plugin}]\n")
    place.server.push(text_reply("ok"))
    async with place.agent() as agent:
        result = await agent.run("hi", signal=AbortController().signal)
    assert result.text == "ok"


async def test_the_default_agent_given_a_home_keeps_its_session_there(
    place: Home, tmp_path: Path
) -> None:
    kept = tmp_path / "kept"
    place.server.push(text_reply("ok"))
    async with place.agent(home=kept) as agent:
        await agent.run("hi", signal=AbortController().signal)
        session_id = agent.session_id
    assert [p.name for p in (kept / "sessions").iterdir()] == [session_id]
