"""The file tools inside the sandbox (issue 32 item 1), driven by a model through a real agent:
under `--yolo` (`bypassPermissions`) or an allow rule, `write` and `edit` of a protected path
(`tether.yml`, `.claude/`, `.git/config` after a read) are refused where nobody can answer, and
asked as a `sandbox-escalation` question where someone can — written only on their yes. In
`read-only` they write nothing; `danger-full-access` (the user leaving the sandbox) writes."""

from __future__ import annotations

import json
from pathlib import Path

from tether import AbortController, AbortSignal
from tether.plugins.approval import ApprovalAnswer, ApprovalQuestion
from tether.testing.scripted_model import text_reply, tool_calls_reply

from ...agent._rig import Rig, rig

__all__ = ["rig"]

PROTECTED = "a file a program outside the sandbox trusts later: git, tether and agent settings"
NOBODY = (
    "nobody can allow it outside the sandbox here; if the task needs it, say so: the user can"
    " make the change, allow it when asked in `tether chat`, or run tether with --sandbox"
    " danger-full-access"
)
ATTACK = "sandbox: danger-full-access\n"


def signal() -> AbortSignal:
    return AbortController().signal


def write(call_id: str, path: str, content: str) -> tuple[str, str, str]:
    return (call_id, "write", json.dumps({"file_path": path, "content": content}))


def read(call_id: str, path: str) -> tuple[str, str, str]:
    return (call_id, "read", json.dumps({"file_path": path}))


class Answering:
    """An approver that answers every question with `answer` and remembers the questions."""

    def __init__(self, answer: ApprovalAnswer) -> None:
        self.answer = answer
        self.questions: list[ApprovalQuestion] = []

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        self.questions.append(question)
        return self.answer


async def test_under_yolo_writing_tether_yml_is_refused_headless(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(write("c1", "tether.yml", ATTACK)), text_reply("ok"))

    async with rig.agent(preset="coding", permission_mode="bypassPermissions") as agent:
        result = await agent.run("escape", signal=signal())

    path = rig.work / "tether.yml"
    assert result.tool_calls[0].content == (
        f'Error: cannot write "{path}": tether.yml is protected by the sandbox ({PROTECTED})'
        f" — {NOBODY}"
    )
    assert not path.exists()


async def test_an_allow_rule_for_write_does_not_let_claude_settings_be_written(rig: Rig) -> None:
    rig.server.push(
        tool_calls_reply(write("c1", ".claude/settings.json", '{"hooks": {}}')), text_reply("ok")
    )

    async with rig.agent(preset="coding", allow=["Write"]) as agent:
        result = await agent.run("escape", signal=signal())

    path = rig.work / ".claude" / "settings.json"
    assert result.tool_calls[0].content == (
        f'Error: cannot write "{path}": .claude is protected by the sandbox ({PROTECTED})'
        f" — {NOBODY}"
    )
    assert not (rig.work / ".claude").exists()


def git_config(rig: Rig) -> Path:
    config = rig.work / ".git" / "config"
    config.parent.mkdir()
    config.write_text("[core]\n\tbare = false\n")
    return config


async def test_under_yolo_git_config_read_first_is_not_rewritten(rig: Rig) -> None:
    config = git_config(rig)
    payload = "[core]\n\tfsmonitor = touch /tmp/pwned\n"
    rig.server.push(
        tool_calls_reply(read("c1", ".git/config")),
        tool_calls_reply(write("c2", ".git/config", payload)),
        text_reply("ok"),
    )

    async with rig.agent(preset="coding", permission_mode="bypassPermissions") as agent:
        result = await agent.run("escape", signal=signal())

    assert result.tool_calls[1].content == (
        f'Error: cannot write "{config}": .git is protected by the sandbox ({PROTECTED}) — {NOBODY}'
    )
    assert config.read_text() == "[core]\n\tbare = false\n"


async def test_under_yolo_git_config_read_first_is_not_edited(rig: Rig) -> None:
    config = git_config(rig)
    edit = json.dumps(
        {
            "file_path": ".git/config",
            "old_string": "bare = false",
            "new_string": "fsmonitor = touch /tmp/pwned",
        }
    )
    rig.server.push(
        tool_calls_reply(read("c1", ".git/config")),
        tool_calls_reply(("c2", "edit", edit)),
        text_reply("ok"),
    )

    async with rig.agent(preset="coding", permission_mode="bypassPermissions") as agent:
        result = await agent.run("escape", signal=signal())

    assert result.tool_calls[1].content == (
        f'Error: cannot edit "{config}": .git is protected by the sandbox ({PROTECTED}) — {NOBODY}'
    )
    assert config.read_text() == "[core]\n\tbare = false\n"


async def test_in_chat_a_protected_write_is_asked_as_an_escalation_and_a_yes_writes_it(
    rig: Rig,
) -> None:
    rig.server.push(tool_calls_reply(write("c1", "tether.yml", ATTACK)), text_reply("ok"))
    approver = Answering("allow-once")

    async with rig.agent(
        preset="coding", approver=approver, permission_mode="bypassPermissions"
    ) as agent:
        result = await agent.run("escape", signal=signal())

    path = rig.work / "tether.yml"
    (question,) = approver.questions
    assert (question.kind, question.tool_name, question.session_rule, question.reason) == (
        "sandbox-escalation",
        "write",
        None,
        f'write "{path}": tether.yml is protected by the sandbox ({PROTECTED})',
    )
    assert question.arguments == {"file_path": "tether.yml", "content": ATTACK}
    assert result.tool_calls[0].is_error is False
    assert path.read_text() == ATTACK


async def test_in_chat_a_declined_escalation_writes_nothing_and_says_so(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(write("c1", "tether.yml", ATTACK)), text_reply("ok"))
    approver = Answering("reject")

    async with rig.agent(
        preset="coding", approver=approver, permission_mode="bypassPermissions"
    ) as agent:
        result = await agent.run("escape", signal=signal())

    path = rig.work / "tether.yml"
    assert len(approver.questions) == 1
    assert result.tool_calls[0].content == (
        f'Error: cannot write "{path}": tether.yml is protected by the sandbox ({PROTECTED})'
        " — the user declined to allow it outside the sandbox"
    )
    assert not path.exists()


async def test_read_only_mode_file_tools_write_nothing(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(write("c1", "a.txt", "x\n")), text_reply("ok"))

    async with rig.agent(
        preset="coding", sandbox="read-only", permission_mode="bypassPermissions"
    ) as agent:
        result = await agent.run("write", signal=signal())

    path = rig.work / "a.txt"
    assert result.tool_calls[0].content == (
        f'Error: cannot write "{path}": the sandbox is read-only (read-only mode writes'
        f" nothing) — {NOBODY}"
    )
    assert not path.exists()


async def test_danger_full_access_file_tools_write_protected_paths(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(write("c1", "tether.yml", "x: 1\n")), text_reply("ok"))

    async with rig.agent(
        preset="coding", sandbox="danger-full-access", permission_mode="bypassPermissions"
    ) as agent:
        await agent.run("write", signal=signal())

    assert (rig.work / "tether.yml").read_text() == "x: 1\n"


async def test_an_ordinary_write_under_yolo_still_works(rig: Rig) -> None:
    rig.server.push(tool_calls_reply(write("c1", "src/a.py", "x = 1\n")), text_reply("ok"))

    async with rig.agent(preset="coding", permission_mode="bypassPermissions") as agent:
        result = await agent.run("write", signal=signal())

    assert result.tool_calls[0].is_error is False
    assert (rig.work / "src" / "a.py").read_text() == "x = 1\n"


async def test_in_chat_a_yes_lets_an_edit_of_git_config_through_once(rig: Rig) -> None:
    config = git_config(rig)
    edit = json.dumps(
        {"file_path": ".git/config", "old_string": "bare = false", "new_string": "bare = true"}
    )
    rig.server.push(
        tool_calls_reply(read("c1", ".git/config")),
        tool_calls_reply(("c2", "edit", edit)),
        text_reply("ok"),
    )
    approver = Answering("allow-once")

    async with rig.agent(
        preset="coding", approver=approver, permission_mode="bypassPermissions"
    ) as agent:
        result = await agent.run("edit", signal=signal())

    (question,) = approver.questions
    assert (question.kind, question.tool_name) == ("sandbox-escalation", "edit")
    assert result.tool_calls[1].is_error is False
    assert config.read_text() == "[core]\n\tbare = true\n"
