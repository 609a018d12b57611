"""The agent's sandbox (issue 24 §2, and issue 26 §8: `Agent(cwd=...)`).

Contract: the agent's commands run in its `cwd`, which is the workspace its sandbox keeps
writable (not the process's current directory). `Agent(sandbox=...)` overrides `sandbox:` in
the config (a mode keeps the configured `writable_roots`); files layer it (a later file's keys
win); a bad value is one `ConfigError` line naming the file. A command that fails because of the
sandbox says so in its result; with an approver, the user is asked whether to run it once
outside — only then, and never by a policy.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether import AbortController, AbortSignal, SandboxPolicy
from tether.agent.boot import sandbox_settings
from tether.kernel import ConfigError, TetherConfig
from tether.plugins.approval import ApprovalAnswer, ApprovalQuestion
from tether.plugins.sandbox.bounds import DEFAULT_MAX_PROCESSES, DEFAULT_TMP_SIZE, Bounds
from tether.testing.scripted_model import text_reply, tool_calls_reply

from ..users import CURRENT, private_directory
from ._rig import Rig, rig

__all__ = ["rig"]


def signal() -> AbortSignal:
    return AbortController().signal


@pytest.fixture
def outside() -> Iterator[Path]:
    """A path the user may write, outside the workspace and not under /tmp (which a sandboxed
    command sees as its own private, writable tmpfs)."""
    with private_directory(CURRENT) as directory:
        yield directory / "outside"


def bash(call_id: str, command: str) -> tuple[str, str, str]:
    return (call_id, "bash", json.dumps({"command": command, "description": "test"}))


async def test_bash_runs_in_the_agents_cwd_not_the_processes(
    rig: Rig, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    rig.server.push(tool_calls_reply(bash("c1", "pwd; touch made")), text_reply("done"))

    async with rig.agent(preset="coding", permission_mode="bypassPermissions") as agent:
        result = await agent.run("where?", signal=signal())

    assert result.tool_calls[0].content == f"{rig.work}\n"
    assert (rig.work / "made").exists()
    assert not (elsewhere / "made").exists()


async def test_a_command_the_sandbox_stopped_says_so_to_the_model(rig: Rig, outside: Path) -> None:
    rig.server.push(tool_calls_reply(bash("c1", f"mkdir -p {outside}")), text_reply("ok"))

    async with rig.agent(preset="coding", permission_mode="bypassPermissions") as agent:
        result = await agent.run("make it", signal=signal())

    content = result.tool_calls[0].content
    assert "Read-only file system" in content
    assert "[this may have failed because of the sandbox (workspace-write):" in content
    assert "Nobody can approve running it outside the sandbox here" in content
    assert not outside.exists()


async def test_agent_sandbox_danger_full_access_lets_it_write_anywhere_the_user_can(
    rig: Rig, outside: Path
) -> None:
    rig.server.push(tool_calls_reply(bash("c1", f"mkdir -p {outside}")), text_reply("ok"))

    async with rig.agent(
        preset="coding", sandbox="danger-full-access", permission_mode="bypassPermissions"
    ) as agent:
        await agent.run("make it", signal=signal())

    assert outside.is_dir()


class Answering:
    """An approver that answers every question with `answer` and remembers the questions."""

    def __init__(self, answer: ApprovalAnswer) -> None:
        self.answer = answer
        self.questions: list[ApprovalQuestion] = []

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        self.questions.append(question)
        return self.answer


async def test_the_user_may_run_a_stopped_command_once_outside_the_sandbox(
    rig: Rig, outside: Path
) -> None:
    rig.server.push(
        tool_calls_reply(bash("c1", f"mkdir -p {outside} && echo made")), text_reply("ok")
    )
    approver = Answering("allow-once")

    async with rig.agent(
        preset="coding", approver=approver, permission_mode="bypassPermissions"
    ) as agent:
        result = await agent.run("make it", signal=signal())

    (question,) = approver.questions
    assert (question.kind, question.tool_name, question.session_rule) == (
        "sandbox-escalation",
        "bash",
        None,
    )
    assert "Read-only file system" in str(question.reason)
    assert outside.is_dir()
    assert result.tool_calls[0].content.startswith("made\n[this may have failed because")
    assert "The user allowed running it once outside the sandbox" in result.tool_calls[0].content


async def test_a_declined_escape_leaves_the_sandboxed_result_and_says_so(
    rig: Rig, outside: Path
) -> None:
    rig.server.push(tool_calls_reply(bash("c1", f"mkdir -p {outside}")), text_reply("ok"))
    approver = Answering("reject")

    async with rig.agent(
        preset="coding", approver=approver, permission_mode="bypassPermissions"
    ) as agent:
        result = await agent.run("make it", signal=signal())

    assert len(approver.questions) == 1
    assert "The user declined to run it outside the sandbox" in result.tool_calls[0].content
    assert not outside.exists()


def test_a_mode_overrides_the_files_mode_and_keeps_their_writable_roots() -> None:
    config = TetherConfig(
        sandbox=(
            ("user/config.yml", {"writable_roots": ["~/.cache"], "network_access": True}),
            ("tether.yml", "read-only"),
        )
    )

    assert sandbox_settings(config).model_dump() == {
        "mode": "read-only",
        "writable_roots": ("~/.cache",),
        "network_access": True,
        "env": {"inherit": "all", "include": (), "exclude": (), "set": {}},
        "tmp_size": DEFAULT_TMP_SIZE,
        "max_processes": DEFAULT_MAX_PROCESSES,
    }
    assert sandbox_settings(config, "workspace-write").mode == "workspace-write"
    policy = SandboxPolicy(writable_roots=("/x",), bounds=Bounds(max_processes=64))
    assert sandbox_settings(config, policy).model_dump() == {
        "mode": "workspace-write",
        "writable_roots": ("/x",),
        "network_access": False,
        "env": {"inherit": "all", "include": (), "exclude": (), "set": {}},
        "tmp_size": DEFAULT_TMP_SIZE,
        "max_processes": 64,
    }


def test_a_bad_sandbox_in_a_file_is_one_line_naming_the_file() -> None:
    config = TetherConfig(sandbox=(("/p/tether.yml", {"mode": "yolo"}),))

    with pytest.raises(ConfigError) as raised:
        sandbox_settings(config)

    assert str(raised.value).startswith("/p/tether.yml: sandbox: mode: ")
    assert "unknown sandbox mode 'yolo'" in str(raised.value)
