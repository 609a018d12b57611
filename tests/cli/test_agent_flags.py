"""The command line of `run`, `chat` and the root (`tether.cli.agent_flags`), in process.

Contract: `--allowedTools`/`--disallowedTools` values split on commas and spaces outside
parentheses; an unknown option is named with the nearest real one; a second positional is named;
contradictions and flags that belong to another form are refused in one line; the prompt files
are read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.cli.agent_flags import FlagError, parse_agent_flags, split_rules


def refusal(command: str, *argv: str) -> str:
    with pytest.raises(FlagError) as caught:
        parse_agent_flags(command, argv)  # type: ignore[arg-type]
    return str(caught.value)


def test_rules_split_on_commas_and_spaces_outside_parentheses() -> None:
    assert split_rules(["Bash(git log:*) Edit,Read", "WebFetch(domain:x.com)"]) == (
        "Bash(git log:*)",
        "Edit",
        "Read",
        "WebFetch(domain:x.com)",
    )


def test_allowed_tools_join_the_allow_rules() -> None:
    flags = parse_agent_flags("run", ["--allow", "Grep", "--allowed-tools", "Read,Edit", "hi"])

    assert flags.allow == ("Grep", "Read", "Edit")


def test_an_unknown_option_is_named_with_the_nearest_real_one() -> None:
    assert refusal("chat", "--sytem-prompt", "x") == (
        'tether chat: unknown option "--sytem-prompt" (did you mean "--system-prompt"?); '
        "`tether chat --help` lists the options"
    )


def test_an_unknown_option_with_a_value_is_named_without_it() -> None:
    assert refusal("run", "--bogus=1", "hi").startswith('tether run: unknown option "--bogus"')


def test_a_second_prompt_is_named() -> None:
    assert refusal("run", "one", "two") == (
        "tether run: unexpected argument 'two' (one prompt only: quote it); "
        "`tether run --help` lists the options"
    )


def test_yolo_and_another_mode_contradict() -> None:
    assert refusal("run", "--yolo", "--permission-mode", "plan", "hi") == (
        "tether run: --permission-mode: plan contradicts --dangerously-skip-permissions/--yolo "
        "(bypassPermissions); pick one"
    )


def test_output_format_belongs_to_print() -> None:
    assert refusal("chat", "--output-format", "json") == (
        "tether chat: --output-format: only with -p or tether run "
        '(e.g. tether -p --output-format ... "task")'
    )


def test_the_root_with_print_takes_the_headless_flags() -> None:
    flags = parse_agent_flags("root", ["-p", "--output-format", "json", "hi"])

    assert (flags.print_, flags.output_format, flags.task) == (True, "json", "hi")


def test_run_needs_the_id_to_resume() -> None:
    assert refusal("run", "--resume") == (
        "tether run: --resume: give the session id (tether sessions list shows them)"
    )


def test_an_unknown_permission_mode_lists_the_modes() -> None:
    assert "invalid choice: 'yolo'" in refusal("run", "--permission-mode", "yolo", "hi")


def test_max_turns_must_be_positive() -> None:
    assert refusal("run", "--max-turns", "0", "hi") == (
        "tether run: argument --max-turns: '0' is not a positive number; "
        "`tether run --help` lists the options"
    )


def test_prompt_files_are_read(tmp_path: Path) -> None:
    (tmp_path / "system.md").write_text("be brief")
    (tmp_path / "more.md").write_text("and kind")

    flags = parse_agent_flags(
        "run",
        [
            "--system-prompt-file",
            str(tmp_path / "system.md"),
            "--append-system-prompt-file",
            str(tmp_path / "more.md"),
            "hi",
        ],
    )

    assert (flags.system_prompt, flags.append_system_prompt) == ("be brief", "and kind")


def test_a_missing_prompt_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "none.md"

    assert refusal("run", "--system-prompt-file", str(missing), "hi") == (
        f"tether run: --system-prompt-file: cannot read {missing}: No such file or directory"
    )


def test_tools_default_means_every_tool() -> None:
    assert parse_agent_flags("run", ["--tools", "default", "hi"]).tools is None
    assert parse_agent_flags("run", ["--tools", "", "hi"]).tools == ()
