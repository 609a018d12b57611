"""The shared hook protocol (capabilities spec §5.2), piece by piece.

Contract: a Claude matcher made of `[A-Za-z0-9_|]` is a literal alternation (exact names), any
other is an unanchored regex, and an invalid regex matches nothing and is logged once. Exit 2
blocks with stderr as the reason and ignores stdout; exit 0 may carry JSON whose
`hookSpecificOutput.permissionDecision` overrides the top-level `decision` (where only
`approve`/`block` count); any other exit is a non-blocking error. Merging ranks deny/block >
ask > allow and keeps only the winning rank's reasons. The runner needs a signal, feeds the
payload on stdin, and turns a timeout kill into a non-blocking outcome. A daemon a hook starts
(`setsid -f`) does not outlive the hook: hooks run through `ctx.shell` like `bash` commands.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tether import AbortController
from tether.plugins.hooks import (
    CommandHook,
    HookOutput,
    ToolNames,
    claude_tool_input,
    matcher_diagnostic,
    matches,
    merge_hook_outputs,
    parse_hook_output,
    run_hook,
)
from tether.plugins.hooks.names import tether_tool_input
from tether.plugins.shell import LocalBashExecutor, ShellConfig

from ...patience import PATIENCE_S
from ..shell._support import marker, sleeping
from ._support import bash_hook, python_hook

# -- matcher ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", [None, "", "*"])
def test_an_empty_or_star_matcher_matches_everything(pattern: str | None) -> None:
    assert matches(pattern, "Bash")
    assert matches(pattern, "mcp__github__create_issue")


def test_a_literal_alternation_matches_exact_names_only() -> None:
    assert matches("Bash|Write", "Bash")
    assert matches("Bash|Write", "Write")
    assert not matches("Bash|Write", "BashOutput")
    assert not matches("Edit", "MultiEdit")


def test_any_other_matcher_is_an_unanchored_regex() -> None:
    assert matches("Edit.*", "MultiEdit")
    assert matches("mcp__.*__write", "mcp__fs__write_file")
    assert not matches("^Write$", "TodoWrite")


def test_codex_mode_reads_even_a_plain_name_as_a_regex() -> None:
    assert matches("Bash", "BashOutput", "codex")
    assert not matches("Bash", "BashOutput", "claude-code")


def test_an_invalid_regex_matches_nothing_and_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pattern = "([unclosed-test-pattern"
    with caplog.at_level(logging.WARNING, logger="tether.plugins.hooks"):
        assert not matches(pattern, "Bash")
        assert not matches(pattern, "Write")
    assert [r.getMessage() for r in caplog.records] == [
        'invalid claude-code regex matcher "([unclosed-test-pattern"'
    ]
    assert (
        matcher_diagnostic(pattern) == 'invalid claude-code regex matcher "([unclosed-test-pattern"'
    )
    assert matcher_diagnostic("Bash|Write") is None


# -- decoding --------------------------------------------------------------------------------------


def test_exit_2_blocks_with_trimmed_stderr_and_ignores_json_on_stdout() -> None:
    stdout = json.dumps({"hookSpecificOutput": {"permissionDecision": "allow"}})
    output = parse_hook_output(2, stdout, "  no force pushes \n")
    assert (output.decision, output.reason) == ("block", "no force pushes")
    assert output.additional_context is None


def test_exit_2_without_stderr_blocks_without_a_reason() -> None:
    assert parse_hook_output(2, "", "   ").reason is None


def test_exit_0_json_permission_decision_overrides_the_top_level_decision() -> None:
    stdout = json.dumps(
        {
            "decision": "approve",
            "reason": "top",
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "secrets are off limits",
                "additionalContext": "see SECURITY.md",
            },
        }
    )
    output = parse_hook_output(0, stdout, "", "PreToolUse")
    assert (output.decision, output.reason) == ("deny", "secrets are off limits")
    assert output.additional_context == "see SECURITY.md"
    assert output.structured


def test_a_specific_block_for_another_event_is_discarded_but_top_level_fields_apply() -> None:
    stdout = json.dumps(
        {
            "decision": "block",
            "reason": "top-level",
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "allow"},
        }
    )
    output = parse_hook_output(0, stdout, "", "PreToolUse")
    assert (output.decision, output.reason) == ("block", "top-level")
    assert output.hook_event_name == "PostToolUse"


def test_allow_deny_ask_at_the_top_level_and_unknown_decisions_are_ignored() -> None:
    assert parse_hook_output(0, '{"decision": "deny"}', "").decision is None
    assert parse_hook_output(0, '{"decision": "ask"}', "").decision is None
    stdout = json.dumps({"hookSpecificOutput": {"permissionDecision": "maybe"}})
    assert parse_hook_output(0, stdout, "").decision is None


def test_malformed_json_and_non_objects_are_tolerated_as_plain_text() -> None:
    for stdout in ("{not json", "[1, 2]", "hello"):
        output = parse_hook_output(0, stdout, "")
        assert (output.decision, output.stdout, output.structured) == (None, stdout, False)


def test_continue_false_stop_reason_and_system_message_are_read() -> None:
    stdout = json.dumps({"continue": False, "stopReason": "done", "systemMessage": "hi"})
    output = parse_hook_output(0, stdout, "")
    assert (output.continue_, output.stop_reason, output.system_message) == (False, "done", "hi")


@pytest.mark.parametrize("code", [1, 127, None])
def test_other_exits_are_non_blocking_errors_with_stderr_recorded(code: int | None) -> None:
    output = parse_hook_output(code, '{"decision": "block"}', "boom\n")
    assert (output.decision, output.stderr, output.exit_code) == (None, "boom", code)


# -- merging ---------------------------------------------------------------------------------------


def test_merge_of_nothing_is_decision_none() -> None:
    merged = merge_hook_outputs([])
    assert (merged.decision, merged.reason, merged.stop) == ("none", None, False)


def test_merge_ranks_deny_over_ask_over_allow_and_keeps_the_winning_ranks_reasons() -> None:
    merged = merge_hook_outputs(
        [
            HookOutput(0, decision="allow", reason="fine"),
            HookOutput(0, decision="ask", reason="check with a human"),
            HookOutput(2, decision="block", reason="first no"),
            HookOutput(0, decision="deny", reason="second no"),
        ]
    )
    assert (merged.decision, merged.reason) == ("deny", "first no\n\nsecond no")


def test_merge_of_allows_has_no_reason_and_two_asks_join_theirs() -> None:
    assert merge_hook_outputs([HookOutput(0, decision="approve", reason="x")]).reason is None
    merged = merge_hook_outputs(
        [HookOutput(0, decision="ask", reason="a"), HookOutput(0, decision="ask", reason="b")]
    )
    assert (merged.decision, merged.reason) == ("ask", "a\n\nb")


def test_merge_stop_is_sticky_and_contexts_accumulate_in_order() -> None:
    merged = merge_hook_outputs(
        [
            HookOutput(0, continue_=False, stop_reason="first", additional_context="one"),
            HookOutput(0, continue_=False, stop_reason="second", additional_context=""),
            HookOutput(0, additional_context="two", system_message="note"),
        ]
    )
    assert (merged.stop, merged.stop_reason) == (True, "first")
    assert merged.additional_context == ("one", "two")
    assert merged.system_messages == ("note",)


# -- names -----------------------------------------------------------------------------------------


def test_the_name_map_translates_both_ways_and_passes_unknown_names_through() -> None:
    names = ToolNames()
    assert [names.claude_name(n) for n in ("bash", "web_fetch", "todo_write", "job_output")] == [
        "Bash",
        "WebFetch",
        "TodoWrite",
        "job_output",
    ]
    assert names.tether_name("Edit") == "edit"
    assert ToolNames({"Shell": "bash"}).claude_name("bash") == "Shell"


def test_tool_input_uses_claude_codes_argument_names() -> None:
    assert claude_tool_input("bash", {"command": "ls", "description": "d", "timeout_ms": 5}) == {
        "command": "ls",
        "description": "d",
        "timeout": 5,
    }
    assert claude_tool_input("web_search", {"queries": ["a", "b"]}) == {
        "queries": ["a", "b"],
        "query": "a",
    }
    assert claude_tool_input("edit", None) == {}


def test_a_changed_input_under_claude_codes_names_maps_back_to_the_tools_arguments() -> None:
    assert tether_tool_input("bash", {"command": "ls", "timeout": 5}) == {
        "command": "ls",
        "timeout_ms": 5,
    }
    assert tether_tool_input("web_search", {"queries": ["a", "b"], "query": "a"}) == {
        "queries": ["a", "b"]
    }
    assert tether_tool_input("web_search", {"queries": ["a", "b"], "query": "c"}) == {
        "queries": ["c"]
    }


def test_a_permission_request_allow_carries_its_updated_input() -> None:
    stdout = json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow", "updatedInput": {"command": "ls"}},
            }
        }
    )
    output = parse_hook_output(0, stdout, "", "PermissionRequest")
    assert (output.decision, output.updated_input) == ("allow", {"command": "ls"})


# -- runner ----------------------------------------------------------------------------------------


@pytest.fixture
async def shell(tmp_path: Path) -> AsyncIterator[LocalBashExecutor]:
    executor = LocalBashExecutor(ShellConfig(grace_ms=200, cwd=str(tmp_path)))
    yield executor
    await executor.aclose()


async def test_the_runner_writes_the_payload_and_a_newline_to_stdin(
    shell: LocalBashExecutor, tmp_path: Path
) -> None:
    script = python_hook(
        tmp_path,
        "echo_stdin.py",
        "import sys\nraw = sys.stdin.read()\nprint(repr(raw[-1]), end='')",
    )
    run = await run_hook(shell, CommandHook(str(script)), {"a": 1}, signal=AbortController().signal)
    assert run.output.exit_code == 0
    assert run.output.stdout == "'\\n'"


async def test_a_hook_past_its_timeout_is_killed_and_is_non_blocking(
    shell: LocalBashExecutor, tmp_path: Path
) -> None:
    script = bash_hook(tmp_path, "hang.sh", "echo 'deny me' >&2\nsleep 3600\nexit 2")
    hook = CommandHook(str(script), timeout_sec=3)  # time for bash to start on a loaded machine
    async with asyncio.timeout(PATIENCE_S):  # ended at its timeout, not after the hour
        run = await run_hook(shell, hook, {}, signal=AbortController().signal)
    assert (run.timed_out, run.output.exit_code, run.output.decision) == (True, None, None)
    assert run.output.stderr == (
        "deny me\nhook timed out after 3000ms; its process group was killed"
    )


async def test_a_daemon_the_hook_started_with_setsid_is_stopped_when_the_hook_ends(
    shell: LocalBashExecutor, tmp_path: Path
) -> None:
    duration = marker()
    script = bash_hook(
        tmp_path,
        "daemon.sh",
        f"setsid -f sleep {duration}\n"
        f"until pgrep -fx 'sleep {duration}' > /dev/null; do sleep 0.01; done; echo escaped",
    )

    run = await run_hook(shell, CommandHook(str(script)), {}, signal=AbortController().signal)

    assert (run.output.exit_code, run.output.stdout.strip()) == (0, "escaped")
    assert sleeping(duration) == []


async def test_a_daemon_the_hook_started_with_setsid_is_stopped_at_the_hooks_timeout(
    shell: LocalBashExecutor, tmp_path: Path
) -> None:
    duration = marker()
    script = bash_hook(tmp_path, "daemon_hang.sh", f"setsid -f sleep {duration}\nsleep 30")
    hook = CommandHook(str(script), timeout_sec=1)

    run = await run_hook(shell, hook, {}, signal=AbortController().signal)

    assert run.timed_out
    assert sleeping(duration) == []


async def test_an_executor_failure_is_an_outcome_not_an_exception(tmp_path: Path) -> None:
    shell = LocalBashExecutor(ShellConfig(cwd=str(tmp_path / "missing")))
    try:
        run = await run_hook(shell, CommandHook("true"), {}, signal=AbortController().signal)
    finally:
        await shell.aclose()
    assert run.output.exit_code is None
    assert run.output.decision is None
    assert "missing" in run.output.stderr
