"""The rig of the `Agent` tests: a scripted model server, a workspace and home under the test's
temporary directory, and agents built on them (closed when the test ends)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, LlmConfig, ToolRunContext, tool
from tether.agent.events import AgentEvent
from tether.agent.llm import RetryPolicy
from tether.agent.session import SessionStore
from tether.testing.scripted_model import ScriptedModelServer

__all__ = ["Hold", "Rig", "rig", "shout", "slow"]


@tool
async def shout(text: str) -> str:
    """Upper-cases the text."""
    return text.upper()


@tool(timeout_ms=200)
async def slow(exec: ToolRunContext) -> str:
    """Runs past its 200 ms budget."""
    async with exec.signal.cancels():
        await asyncio.sleep(30)
    return "late"


class Hold:
    """A tool that runs until its call is aborted; `entered` is set once it runs."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()

    async def hold(self, exec: ToolRunContext) -> str:
        """Waits until aborted."""
        self.entered.set()
        async with exec.signal.cancels():
            await asyncio.sleep(60)
        return "released"


class Rig:
    def __init__(self, server: ScriptedModelServer, tmp: Path) -> None:
        self.server = server
        self.home = tmp / "home"
        self.work = tmp / "work"
        self.work.mkdir()
        self.held = Hold()
        self.agents: list[Agent] = []
        self.events: list[AgentEvent] = []
        """What every agent's `on_event` saw (unless a test passes its own)."""

    def agent(self, **options: Any) -> Agent:
        model = LlmConfig(
            provider="openai",
            base_url=self.server.base_url,
            model="scripted",
            retry=RetryPolicy(mode="off"),
        )
        options.setdefault("tools", [shout, slow, tool(self.held.hold)])
        options.setdefault("on_event", self.events.append)
        built = Agent(model=model, cwd=self.work, home=self.home, **options)
        self.agents.append(built)
        return built

    @property
    def store(self) -> SessionStore:
        return SessionStore(self.home / "sessions")

    def users(self, request: int) -> list[str]:
        """The user messages' texts of request `request`."""
        messages = self.server.requests[request].messages
        return [str(m["content"]) for m in messages if m["role"] == "user"]


@pytest.fixture
async def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Rig]:
    monkeypatch.setenv("HOME", str(tmp_path))  # no Claude Code settings of the machine's user
    async with ScriptedModelServer() as server:
        built = Rig(server, tmp_path)
        try:
            yield built
        finally:
            for agent in built.agents:
                await agent.aclose()
