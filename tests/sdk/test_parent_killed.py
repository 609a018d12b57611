"""A SIGKILLed Claude Agent SDK application leaves nothing running (issue 35): tether asks the
kernel for SIGTERM when its parent dies, aborts the running command (its process tree killed)
and exits."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import uuid
from pathlib import Path

import psutil
import pytest

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ..cli._support import eventually, gone
from ._support import started
from .conftest import TETHER

pytestmark = pytest.mark.slow

APP = """\
import anyio, sys
from claude_agent_sdk import ClaudeAgentOptions, query

async def main() -> None:
    options = ClaudeAgentOptions(cli_path=sys.argv[1], permission_mode="bypassPermissions")
    async for message in query(prompt="wait", options=options):
        print(type(message).__name__, flush=True)

anyio.run(main)
"""


async def test_a_sigkilled_application_leaves_neither_tether_nor_its_command_running(
    tmp_path: Path, server: ScriptedModelServer
) -> None:
    seconds = f"{4000 + uuid.uuid4().int % 1000}.5"
    command = json.dumps({"command": f"sleep {seconds}", "description": "wait"})
    server.push(tool_calls_reply(("call_1", "bash", command)), text_reply("never"))
    (tmp_path / "app.py").write_text(APP)
    env = {
        **os.environ,
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_MODEL": "scripted",
        "TETHER_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path),
    }
    app = await asyncio.create_subprocess_exec(
        sys.executable, str(tmp_path / "app.py"), str(TETHER), cwd=tmp_path, env=env
    )
    try:
        sleeping = await started(["sleep", seconds], root=app.pid)
        (tether,) = [
            p for p in psutil.Process(app.pid).children() if p.cmdline()[1:2] == [str(TETHER)]
        ]

        app.send_signal(signal.SIGKILL)
        await app.wait()

        await eventually(lambda: gone(sleeping), what="the command to be gone")
        await eventually(lambda: gone(tether), what="tether to exit")
    finally:
        if app.returncode is None:
            app.kill()
            await app.wait()
