"""The pure parts of `tether chat`: diffs, path completion, call targets,
the compaction threshold and the approval answers (deny with a reason)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tether import AbortController
from tether.agent.compaction import needs_compaction, reserve_for
from tether.agent.session import SessionStore
from tether.cli.approval import _parse
from tether.cli.chat.diff import proposed_diff
from tether.cli.chat.input import path_candidates
from tether.cli.chat.status import call_target, format_duration
from tether.kernel import Context
from tether.plugins.approval import Approval, ApprovalAnswer, ApprovalQuestion, Rejection
from tether.plugins.fs import plugin as fs_plugin
from tether.plugins.permissions import Permissions
from tether.tools import ToolExecutionInput, ToolRuntime

from ..plugins.hooks._support import FakeAgent, text_of


def test_an_edit_diff_shows_the_replaced_line(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    diff = proposed_diff(
        "edit", {"file_path": "a.txt", "old_string": "two", "new_string": "2"}, tmp_path
    )
    assert diff == ("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n")


def test_a_write_to_a_new_file_diffs_against_nothing(tmp_path: Path) -> None:
    diff = proposed_diff("write", {"file_path": "new.txt", "content": "hi\n"}, tmp_path)
    assert diff == "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n"


def test_an_edit_whose_old_string_is_absent_has_no_diff(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    args = {"file_path": "a.txt", "old_string": "zzz", "new_string": "y"}
    assert proposed_diff("edit", args, tmp_path) is None


def test_path_completion_lists_matching_entries_and_marks_folders(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("")
    (tmp_path / "setup.cfg").write_text("")
    (tmp_path / ".secret").write_text("")
    assert path_candidates(tmp_path, "s") == ["setup.cfg", "src/"]
    assert path_candidates(tmp_path, "src/a") == ["src/app.py"]
    assert path_candidates(tmp_path, ".") == [".secret"]


def test_a_call_names_its_target() -> None:
    assert call_target('{"file_path": "src/app.py", "limit": 3}') == "src/app.py"
    assert call_target('{"command": "sleep  300", "description": "wait"}') == "sleep 300"
    assert call_target('{"queries": ["a", "b"]}') == "a, b"
    assert call_target("not json") == ""
    assert (format_duration(12.4), format_duration(30000)) == ("12 ms", "30.0 s")


def test_compaction_starts_when_the_request_passes_the_window_minus_the_reserve() -> None:
    assert reserve_for(1000) == 200
    assert reserve_for(1_000_000) == 20_000
    assert not needs_compaction(800, 1000)
    assert needs_compaction(801, 1000)


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        ("y", "allow-once"),
        ("a", "allow-session"),
        ("n", "reject"),
        ("", "reject"),
        ("n use make instead", Rejection("use make instead")),
        ("deny not now", Rejection("not now")),
        ("maybe", None),
    ],
)
def test_approval_answers(line: str, answer: object) -> None:
    assert _parse(line, "Bash(x)") == answer


# -- pre-flight: calls that would fail anyway are not asked about ----------------------------------


class Recording:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        self.asked.append(question.tool_name)
        return "allow-once"


@pytest.fixture
async def fs_ctx(tmp_path: Path) -> AsyncIterator[Context]:
    ctx = Context()
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(fs_plugin, {"root": str(tmp_path)})
    await ctx.plugin(Permissions, {"workspace": str(tmp_path), "claude_settings": False})
    await ctx.plugin(Approval)
    yield ctx
    await ctx.dispose()


@pytest.fixture
def fs_agent(tmp_path: Path) -> Iterator[FakeAgent]:
    log = SessionStore(tmp_path / "sessions").create(cwd=tmp_path)
    log.turn_start(1)
    yield FakeAgent(log)
    log.close()


async def call(ctx: Context, agent: FakeAgent, name: str, arguments: dict[str, object]) -> str:
    result = await ctx.tools.execute(
        ToolExecutionInput(
            call_id=f"c-{name}",
            name=name,
            arguments=arguments,
            signal=AbortController().signal,
            agent=agent,
        )
    )
    return text_of(result)


async def test_an_edit_of_an_unread_file_is_refused_without_asking(
    fs_ctx: Context, fs_agent: FakeAgent, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    prompter = Recording()
    fs_ctx.approval.attach(prompter)

    text = await call(
        fs_ctx, fs_agent, "edit", {"file_path": "a.txt", "old_string": "one", "new_string": "1"}
    )

    assert prompter.asked == []
    assert text.startswith(f'Error: edit requires reading "{tmp_path / "a.txt"}" first')
    assert (tmp_path / "a.txt").read_text() == "one\n"


async def test_a_write_over_an_unread_file_is_refused_without_asking(
    fs_ctx: Context, fs_agent: FakeAgent, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    prompter = Recording()
    fs_ctx.approval.attach(prompter)

    text = await call(fs_ctx, fs_agent, "write", {"file_path": "a.txt", "content": "two\n"})

    assert prompter.asked == []
    assert "cannot overwrite existing" in text
    assert (tmp_path / "a.txt").read_text() == "one\n"


async def test_an_edit_after_a_read_is_asked_about_and_runs(
    fs_ctx: Context, fs_agent: FakeAgent, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    prompter = Recording()
    fs_ctx.approval.attach(prompter)

    await call(fs_ctx, fs_agent, "read", {"file_path": "a.txt"})
    await call(
        fs_ctx, fs_agent, "edit", {"file_path": "a.txt", "old_string": "one", "new_string": "1"}
    )

    assert prompter.asked == ["edit"]
    assert (tmp_path / "a.txt").read_text() == "1\n"
