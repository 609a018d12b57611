"""Fixtures of the command line tests: a scripted model on 127.0.0.1 and a `tether` to run
against it. A module that needs another `cli` (another HOME, another mode) defines its own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tether.testing.scripted_model import ScriptedModelServer

from ._support import Cli


@pytest.fixture
async def server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as scripted:
        yield scripted


@pytest.fixture
def cli(tmp_path: Path, server: ScriptedModelServer) -> Cli:
    cli = Cli(tmp_path, server.base_url)
    cli.env["HOME"] = str(tmp_path / "user")  # no ~/.claude/settings.json of the real user
    return cli
