"""Interactive approval: the `approval` service, the terminal prompt, and `tether chat`.

Contract (CONTRACT §4.4, tool-runtime spec §1.4–§1.5): an `Ask` from the permission rules goes
to `ctx.approval`. With a prompter attached, the user sees the tool, its arguments and the
reason and answers allow once (`allowed-once`), always allow the suggested rule for the session
(a session allow rule, then `allowed-once`) or reject (`rejected`). The pending prompt observes
the call's signal: Ctrl-C cancels it, the answer is `cancelled`, and the call ends
`ABORTED_BEFORE_DISPATCH` without running. Without a prompter the answer is `unavailable`. Every
request writes `approval/asked` and `approval/decided` with the sha256 fingerprint of the
canonical JSON arguments it approved.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from tether import AbortController
from tether.agent.session import SessionLog, SessionStore
from tether.cli.approval import TerminalPrompter
from tether.cli.boot import builtin_entries
from tether.kernel import Context
from tether.plugins.approval import (
    Approval,
    ApprovalAnswer,
    ApprovalQuestion,
    fingerprint,
)
from tether.plugins.permissions import Permissions
from tether.plugins.shell import bash as bash_plugin
from tether.plugins.shell import plugin as shell_plugin
from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply
from tether.tools import ToolExecutionInput, ToolFailure, ToolRuntime, ToolSuccess

from ..plugins.hooks._support import FakeAgent, call_bash, events_of, text_of
from ._support import TETHER, Cli, Terminal

ARGS = {"command": "touch ran", "description": "a test command"}


class ScriptedPrompter:
    """Answers from a list; `hold=True` waits forever (until cancelled)."""

    def __init__(self, *answers: ApprovalAnswer, hold: bool = False) -> None:
        self.answers = list(answers)
        self.hold = hold
        self.questions: list[ApprovalQuestion] = []
        self.asked = asyncio.Event()
        self.cancelled = False

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        self.questions.append(question)
        self.asked.set()
        if self.hold:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled = True
                raise
        return self.answers.pop(0)


@pytest.fixture
async def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Context]:
    monkeypatch.setenv("HOME", str(tmp_path))
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(shell_plugin, {"grace_ms": 200, "cwd": str(tmp_path)})
    await ctx.plugin(bash_plugin, {"enable_run_in_background": False})
    await ctx.plugin(Permissions, {"workspace": str(tmp_path), "claude_settings": False})
    await ctx.plugin(Approval)
    yield ctx
    await ctx.dispose()


@pytest.fixture
def session(tmp_path: Path) -> Iterator[SessionLog]:
    log = SessionStore(tmp_path / "sessions").create(cwd=tmp_path)
    log.turn_start(1)
    yield log
    log.close()


@pytest.fixture
def agent(session: SessionLog) -> FakeAgent:
    return FakeAgent(session)


def expected_fingerprint(arguments: dict[str, Any]) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


async def call(ctx: Context, name: str, arguments: object, agent: FakeAgent) -> ToolFailure:
    """One call of `name` through the registry, expected to fail."""
    signal = AbortController().signal
    input = ToolExecutionInput(
        call_id="c1", name=name, arguments=arguments, signal=signal, agent=agent
    )
    result = await ctx.tools.execute(input)
    assert isinstance(result, ToolFailure)
    return result


# -- the service -----------------------------------------------------------------------------------


async def test_allow_once_runs_the_call_and_the_log_says_what_was_approved(
    ctx: Context, agent: FakeAgent, session: SessionLog, tmp_path: Path
) -> None:
    prompter = ScriptedPrompter("allow-once")
    ctx.approval.attach(prompter)

    result = await call_bash(ctx, "touch ran", agent=agent)

    assert isinstance(result, ToolSuccess)
    assert (tmp_path / "ran").exists()
    (question,) = prompter.questions
    assert question == ApprovalQuestion(
        tool_name="bash",
        call_id="c1",
        arguments=ARGS,
        reason='permission mode "default" asks before "bash" runs',
        session_rule="Bash(touch ran)",
        fingerprint=expected_fingerprint(ARGS),
        lasting_rules=("Bash(touch:*)",),
        saved_to=str(tmp_path / ".claude" / "settings.local.json"),
    )
    assert events_of(session, "approval/") == [
        {
            "type": "approval/asked",
            "turn": 1,
            "call_id": "c1",
            "tool_name": "bash",
            "reason": 'permission mode "default" asks before "bash" runs',
            "fingerprint": expected_fingerprint(ARGS),
            "session_rule": "Bash(touch ran)",
            "lasting_rules": ["Bash(touch:*)"],
        },
        {
            "type": "approval/decided",
            "turn": 1,
            "call_id": "c1",
            "tool_name": "bash",
            "outcome": "allowed-once",
            "answered_by": "user",
            "fingerprint": expected_fingerprint(ARGS),
        },
    ]


def test_the_fingerprint_is_the_sha256_of_canonical_json() -> None:
    assert fingerprint({"b": 1, "a": "é"}) == expected_fingerprint({"a": "é", "b": 1})
    assert fingerprint(None) == "sha256:" + hashlib.sha256(b"null").hexdigest()


async def test_reject_denies_the_call(ctx: Context, agent: FakeAgent, tmp_path: Path) -> None:
    ctx.approval.attach(ScriptedPrompter("reject"))

    result = await call_bash(ctx, "touch ran", agent=agent)

    assert text_of(result) == 'Error: the user rejected tool "bash"'
    assert not (tmp_path / "ran").exists()


async def test_always_allow_records_a_session_rule_and_stops_asking(
    ctx: Context, agent: FakeAgent, session: SessionLog
) -> None:
    prompter = ScriptedPrompter("allow-session", "reject")
    ctx.approval.attach(prompter)

    first = await call_bash(ctx, "/bin/echo same", agent=agent, call_id="c1")
    second = await call_bash(ctx, "/bin/echo same", agent=agent, call_id="c2")
    other = await call_bash(ctx, "/bin/echo other", agent=agent, call_id="c3")

    assert isinstance(first, ToolSuccess)
    assert isinstance(second, ToolSuccess)
    assert [q.call_id for q in prompter.questions] == ["c1", "c3"]
    assert text_of(other) == 'Error: the user rejected tool "bash"'
    assert ctx.permissions.session_rules == ("Bash(/bin/echo same)",)
    decided = events_of(session, "approval/decided")
    assert [d.get("session_rule") for d in decided] == ["Bash(/bin/echo same)", None]


async def test_ctrl_c_while_the_prompt_waits_cancels_it_and_nothing_is_dispatched(
    ctx: Context, agent: FakeAgent, session: SessionLog, tmp_path: Path
) -> None:
    prompter = ScriptedPrompter(hold=True)
    ctx.approval.attach(prompter)
    controller = AbortController()

    call = asyncio.create_task(call_bash(ctx, "touch ran", agent=agent, signal=controller.signal))
    await prompter.asked.wait()
    controller.abort()
    result = await call

    assert isinstance(result, ToolFailure)
    assert result.to_json() == {
        "is_error": True,
        "content": [{"type": "text", "text": "Error: tool call aborted before dispatch"}],
        "error": {
            "message": "tool call aborted before dispatch",
            "info": {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"},
        },
    }
    assert prompter.cancelled
    assert not (tmp_path / "ran").exists()
    (decided,) = events_of(session, "approval/decided")
    assert (decided["outcome"], decided["answered_by"]) == ("cancelled", "signal")


async def test_a_call_of_an_unknown_tool_is_answered_unknown_tool_without_asking(
    ctx: Context, agent: FakeAgent, session: SessionLog
) -> None:
    prompter = ScriptedPrompter("allow-once")
    ctx.approval.attach(prompter)

    result = await call(ctx, "frobnicate", {"x": 1}, agent)

    assert (result.code, text_of(result)) == ("UNKNOWN_TOOL", 'Error: unknown tool "frobnicate"')
    assert prompter.questions == []
    assert events_of(session, "approval/") == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"description": "no command"}, "invalid arguments: command: Field required"),
        ("touch ran", "invalid arguments: arguments: must be a JSON object"),
    ],
)
async def test_a_call_with_invalid_arguments_is_answered_invalid_args_without_asking(
    ctx: Context,
    agent: FakeAgent,
    session: SessionLog,
    tmp_path: Path,
    arguments: object,
    message: str,
) -> None:
    prompter = ScriptedPrompter("allow-once")
    ctx.approval.attach(prompter)

    result = await call(ctx, "bash", arguments, agent)

    assert (result.code, result.error.message) == ("INVALID_ARGS", message)
    assert prompter.questions == []
    assert events_of(session, "approval/") == []
    assert not (tmp_path / "ran").exists()


async def test_without_a_prompter_the_answer_is_unavailable(
    ctx: Context, agent: FakeAgent, session: SessionLog
) -> None:
    result = await call_bash(ctx, "touch ran", agent=agent)

    assert text_of(result) == (
        'Error: tool "bash" requires approval, but no approval channel is available'
    )
    (decided,) = events_of(session, "approval/decided")
    assert (decided["outcome"], decided["answered_by"]) == ("unavailable", "policy")


async def test_a_failing_prompter_counts_as_unavailable(ctx: Context, agent: FakeAgent) -> None:
    class Broken:
        async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
            raise OSError("the terminal is gone")

    ctx.approval.attach(Broken())

    result = await call_bash(ctx, "touch ran", agent=agent)

    assert text_of(result) == (
        'Error: tool "bash" requires approval, but no approval channel is available'
    )


async def test_an_unattended_note_says_why_and_the_call_does_not_run(
    ctx: Context, agent: FakeAgent, session: SessionLog, tmp_path: Path
) -> None:
    questions: list[ApprovalQuestion] = []

    def note(question: ApprovalQuestion) -> str:
        questions.append(question)
        return f"nobody is here; allow {question.session_rule}"

    ctx.approval.refuse_unattended(note)

    result = await call_bash(ctx, "touch ran", agent=agent)

    assert text_of(result) == (
        'Error: tool "bash" requires approval, but no approval channel is available '
        "(nobody is here; allow Bash(touch ran))"
    )
    assert not (tmp_path / "ran").exists()
    assert [q.session_rule for q in questions] == ["Bash(touch ran)"]
    assert [
        (e["type"], e.get("outcome"), e.get("session_rule"))
        for e in events_of(session, "approval/")
    ] == [("approval/asked", None, None), ("approval/decided", "unavailable", None)]


async def test_an_unattended_note_is_not_used_while_a_prompter_is_attached(
    ctx: Context, agent: FakeAgent, tmp_path: Path
) -> None:
    ctx.approval.refuse_unattended(lambda question: "unused")
    ctx.approval.attach(ScriptedPrompter("allow-once"))

    result = await call_bash(ctx, "touch ran", agent=agent)

    assert isinstance(result, ToolSuccess)
    assert (tmp_path / "ran").exists()


async def test_a_removed_unattended_note_leaves_the_plain_unavailable_text(
    ctx: Context, agent: FakeAgent
) -> None:
    remove = ctx.approval.refuse_unattended(lambda question: "unused")
    remove()

    result = await call_bash(ctx, "touch ran", agent=agent)

    assert text_of(result) == (
        'Error: tool "bash" requires approval, but no approval channel is available'
    )


# -- the terminal prompt ---------------------------------------------------------------------------


def terminal_prompter(*lines: str) -> tuple[TerminalPrompter, io.StringIO]:
    queue: asyncio.Queue[str] = asyncio.Queue()
    for line in lines:
        queue.put_nowait(line)
    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None, highlight=False)

    async def read_line(prompt: str) -> str:
        out.write(prompt)
        return await queue.get()

    return TerminalPrompter(read_line, console), out


QUESTION = ApprovalQuestion(
    tool_name="bash",
    call_id="c1",
    arguments={"command": "rm -rf build", "description": "clean"},
    reason='permission mode "default" asks before "bash" runs',
    session_rule="Bash(rm -rf build)",
    fingerprint="sha256:x",
)


async def test_the_prompt_shows_the_tool_its_arguments_the_reason_and_the_choices() -> None:
    prompter, out = terminal_prompter("y\n")

    assert await prompter.ask(QUESTION) == "allow-once"
    assert out.getvalue() == (
        "? bash needs approval\n"
        "    command: rm -rf build\n"
        "    description: clean\n"
        '  why: permission mode "default" asks before "bash" runs\n'
        "  y  yes, once\n"
        "  a  yes, and allow Bash(rm -rf build) for this session\n"
        "  n  no · d  no, and tell the model why (Esc or Ctrl-C cancels)\n"
        "  approve? "
    )


async def test_a_file_tools_escalation_asks_to_make_the_change_once_outside_the_sandbox() -> None:
    prompter, out = terminal_prompter("y\n")
    question = ApprovalQuestion(
        tool_name="write",
        call_id="c1",
        arguments={"file_path": "tether.yml", "content": "x: 1\n"},
        reason='write "/w/tether.yml": tether.yml is protected by the sandbox',
        session_rule=None,
        fingerprint="sha256:x",
        kind="sandbox-escalation",
    )

    assert await prompter.ask(question) == "allow-once"
    assert out.getvalue().splitlines()[0] == (
        "? write is refused by the sandbox: make this change once outside the sandbox?"
    )
    assert '  why: write "/w/tether.yml": tether.yml is protected by the sandbox' in (
        out.getvalue().splitlines()
    )


@pytest.mark.parametrize(
    ("lines", "answer"),
    [(["a\n"], "allow-session"), (["n\n"], "reject"), (["\n"], "reject"), ([""], "reject")],
)
async def test_the_prompt_reads_the_answer(lines: list[str], answer: str) -> None:
    prompter, _ = terminal_prompter(*lines)
    assert await prompter.ask(QUESTION) == answer


async def test_the_prompt_repeats_after_an_unknown_answer_and_offers_always_only_with_a_rule() -> (
    None
):
    prompter, out = terminal_prompter("maybe\n", "a\n", "y\n")
    question = ApprovalQuestion("web_search", "c1", {"queries": ["x"]}, None, None, "sha256:x")

    assert await prompter.ask(question) == "allow-once"
    assert out.getvalue().count("not an answer:") == 2
    assert "for this session" not in out.getvalue()
    assert "don't ask again" not in out.getvalue()


# -- tether chat -----------------------------------------------------------------------------------


@pytest.fixture
def cli(tmp_path: Path, server: ScriptedModelServer) -> Cli:
    cli = Cli(tmp_path, server.base_url)
    cli.env["HOME"] = str(tmp_path)
    return cli


TOUCH = ("t1", "bash", '{"command": "touch approved.txt", "description": "make a file"}')


def test_agent_sessions_mount_the_permission_rules_and_tools_call_does_not(
    tmp_path: Path,
) -> None:
    agent_ids = [e.id for e in builtin_entries(tmp_path, agent=True)]
    assert {"permissions", "hooks-claude-code", "approval"} <= set(agent_ids)
    ids = [e.id for e in builtin_entries(tmp_path)]
    assert "permissions" not in ids
    assert {"hooks-claude-code", "approval"} <= set(ids)


@pytest.mark.slow
async def test_chat_asks_before_bash_and_runs_it_when_allowed(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(TOUCH), text_reply("made it"))
    terminal = await Terminal.open([str(TETHER), "chat"], cwd=cli.work, env=cli.env)
    try:
        await terminal.expect("›")
        terminal.send(b"make the file\r")
        await terminal.expect("? bash needs approval")
        await terminal.expect("command: touch approved.txt")
        await terminal.expect("approve? ")
        terminal.send(b"y\r")
        await terminal.expect("✓ bash")
        await terminal.expect("made it")
        await terminal.expect("›")
        terminal.send(b"/exit\r")
        assert await terminal.wait() == 0
    finally:
        await terminal.aclose()
    assert (cli.work / "approved.txt").exists()


@pytest.mark.slow
async def test_chat_runs_a_call_an_allow_flag_permits_without_asking(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(TOUCH), text_reply("made it"))
    argv = [str(TETHER), "chat", "--allow", "Bash(touch:*)"]
    terminal = await Terminal.open(argv, cwd=cli.work, env=cli.env)
    try:
        await terminal.expect("›")
        terminal.send(b"make the file\r")
        await terminal.expect("✓ bash")
        await terminal.expect("made it")
        await terminal.expect("›")
        terminal.send(b"/exit\r")
        assert await terminal.wait() == 0
    finally:
        await terminal.aclose()
    assert (cli.work / "approved.txt").exists()
    assert "needs approval" not in terminal.output


@pytest.mark.slow
async def test_ctrl_c_at_the_approval_prompt_aborts_before_dispatch(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(TOUCH))
    terminal = await Terminal.open([str(TETHER), "chat"], cwd=cli.work, env=cli.env)
    try:
        await terminal.expect("›")
        terminal.send(b"make the file\r")
        await terminal.expect("approve? ")
        terminal.send(b"\x03")
        await terminal.expect("✗ bash touch approved.txt ABORTED_BEFORE_DISPATCH")
        await terminal.expect("tether: turn aborted; tool outcomes are recorded")
        await terminal.expect("›")
        terminal.send(b"/exit\r")
        assert await terminal.wait() == 0
    finally:
        await terminal.aclose()
    assert not (cli.work / "approved.txt").exists()
    (summary,) = cli.sessions()
    events = cli.store.load(summary.id).events
    decided: Any = [e.data for e in events if e.type == "approval/decided"]
    assert [(d["outcome"], d["answered_by"]) for d in decided] == [("cancelled", "signal")]
    shown = await cli.run("sessions", "show", summary.id)
    assert "    approval t1 bash cancelled by signal\n" in shown.stdout


@pytest.mark.slow
async def test_run_answers_unavailable_and_yolo_runs_the_call(
    cli: Cli, server: ScriptedModelServer
) -> None:
    (cli.work / "tether.yml").write_text(
        "plugins:\n"
        "  - id: permissions\n"
        "    name: tether.plugins.permissions.plugin:Permissions\n"
        "    config: {claude_settings: false}\n"
    )
    server.push(tool_calls_reply(TOUCH), text_reply("could not"))

    refused = await cli.run("run", "make the file")

    assert (refused.code, refused.stdout) == (0, "could not\n")
    assert not (cli.work / "approved.txt").exists()
    (tool_result,) = [m for m in server.requests[1].messages if m["role"] == "tool"]
    assert "no approval channel is available" in json.dumps(tool_result)

    server.push(tool_calls_reply(TOUCH), text_reply("made it"))
    allowed = await cli.run("run", "--yolo", "make the file")

    assert (allowed.code, allowed.stdout) == (0, "made it\n")
    assert "tether: --yolo: tool calls run without asking; deny rules still hold\n" in (
        allowed.stderr
    )
    assert (cli.work / "approved.txt").exists()
