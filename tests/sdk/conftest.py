"""Fixtures of the Claude Agent SDK tests: a scripted model on 127.0.0.1, a working directory and
`ClaudeAgentOptions` pointing the SDK at this venv's `tether` (only `cli_path`, `cwd` and the
environment differ from an application written for Claude Code)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions

from tether.testing.scripted_model import ScriptedModelServer

TETHER = Path(sys.executable).parent / "tether"


@pytest.fixture
async def server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as scripted:
        yield scripted


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


Options = Callable[..., ClaudeAgentOptions]


@pytest.fixture
def options(tmp_path: Path, work: Path, server: ScriptedModelServer) -> Options:
    """`ClaudeAgentOptions(**given)` with tether as the CLI and the scripted model."""

    def make(**given: Any) -> ClaudeAgentOptions:
        env = {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_MODEL": "scripted",
            "TETHER_HOME": str(tmp_path / "home"),
            "HOME": str(tmp_path / "user"),
        }
        return ClaudeAgentOptions(cli_path=str(TETHER), cwd=str(work), env=env, **given)

    return make
