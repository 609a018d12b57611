"""docs/agent-sdk.md's example application runs unchanged against tether (issue 35)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ..patience import PATIENCE_S
from .conftest import TETHER

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "agent_sdk_app.py"


async def test_the_documented_example_lists_the_files_through_tether(
    tmp_path: Path, work: Path, server: ScriptedModelServer
) -> None:
    (work / "notes.txt").write_text("hi")
    ls = json.dumps({"command": "ls", "description": "list"})
    server.push(tool_calls_reply(("call_1", "bash", ls)), text_reply("one file: notes.txt"))
    env = {
        **os.environ,
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_MODEL": "scripted",
        "TETHER_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path),
    }
    app = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLE),
        str(TETHER),
        "list the files here",
        cwd=work,
        env=env,
        stdout=asyncio.subprocess.PIPE,
    )
    stdout, _ = await asyncio.wait_for(app.communicate(), PATIENCE_S)

    assert app.returncode == 0
    assert stdout.decode().splitlines() == [
        "tool: Bash {'command': 'ls', 'description': 'list'}",
        "assistant: one file: notes.txt",
        "result: success after 2 model requests",
    ]
