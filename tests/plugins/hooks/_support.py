"""Helpers for hook tests: real hook scripts on disk, a stand-in agent with a real session log,
and running one tool call through the registry."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether import AbortController, AbortSignal
from tether.agent.session import SessionLog
from tether.kernel import Context
from tether.tools import ToolExecutionInput, ToolExecutionResult, UserMessage

__all__ = [
    "FakeAgent",
    "bash_hook",
    "call_bash",
    "events_of",
    "python_hook",
    "text_of",
    "write_settings",
]


def _script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def bash_hook(directory: Path, name: str, body: str) -> Path:
    """An executable bash script `directory/name`."""
    return _script(directory / name, "#!/usr/bin/env bash\n" + body.strip() + "\n")


def python_hook(directory: Path, name: str, body: str) -> Path:
    """An executable Python script `directory/name` run by this interpreter."""
    return _script(directory / name, f"#!{sys.executable}\n" + body.strip() + "\n")


def write_settings(project: Path, hooks: Mapping[str, Any], name: str = "settings.json") -> Path:
    """`project/.claude/<name>` holding `{"hooks": hooks}`."""
    path = project / ".claude" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}, indent=2))
    return path


@dataclass
class FakeAgent:
    """What plugins see of an agent: its session and an inbox for injected contexts."""

    session: SessionLog
    injected: list[UserMessage] = field(default_factory=list)

    def inject(self, message: UserMessage) -> None:
        self.injected.append(message)


async def call_bash(
    ctx: Context,
    command: str,
    *,
    agent: object | None = None,
    signal: AbortSignal | None = None,
    call_id: str = "c1",
) -> ToolExecutionResult:
    """Run the `bash` tool once through the registry."""
    return await ctx.tools.execute(
        ToolExecutionInput(
            call_id=call_id,
            name="bash",
            arguments={"command": command, "description": "a test command"},
            signal=AbortController().signal if signal is None else signal,
            agent=agent,
        )
    )


def text_of(result: ToolExecutionResult) -> str:
    return "".join(str(block.get("text", "")) for block in result.content)


def events_of(session: SessionLog, prefix: str) -> list[dict[str, Any]]:
    """The data of every event whose type starts with `prefix`, as plain dicts with the type."""
    return [
        {"type": e.type, **json.loads(json.dumps(e.data))}
        for e in session.events
        if e.type.startswith(prefix)
    ]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
