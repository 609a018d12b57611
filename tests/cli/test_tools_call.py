"""`tether tools call`'s command line: the quick path (`tether.cli.commands.tools_call`, no
cyclopts) reads exactly what cyclopts would bind, and leaves every other form to cyclopts, whose
help, usage errors and exit codes stay as they were (issue 36).

The equivalence is checked in process against cyclopts' own binding (`App.parse_args`, which runs
nothing); the help and the errors through the installed `tether` script.
"""

from __future__ import annotations

import json

import pytest

from tether.cli.commands.tools import app as tools_app
from tether.cli.commands.tools_call import CallRequest, quick_request

from ._support import Cli

ECHO = '{"command": "echo hi", "description": "x"}'

READ_QUICKLY = [
    ["bash"],
    ["bash", ECHO],
    ["bash", ECHO, "--timeout-ms", "1500"],
    ["bash", ECHO, "--timeout-ms=1e3"],
    ["bash", ECHO, "--timeout-ms", "1_000"],
    ["bash", ECHO, "--timeout-ms", "inf"],
    ["bash", ECHO, "--config", "tether.yml"],
    ["bash", ECHO, "--config=-odd.yml"],
    ["bash", ECHO, "--cwd", "sub"],
    ["bash", ECHO, "--cwd=~"],
    ["bash", ECHO, "--sandbox", "read-only"],
    ["bash", ECHO, "--sandbox=workspace-write"],
    ["bash", ECHO, "--sandbox", "danger-full-access"],
    ["--cwd", "sub", "bash", ECHO],
    ["bash", "--timeout-ms", "5", ECHO, "--cwd", "sub", "--config", "c.yml", "--sandbox=read-only"],
    ["none", "null"],
    ["bash", "not json"],
]
"""Command lines after `tools call` that the quick path reads itself."""

LEFT_TO_CYCLOPTS = [
    [],
    ["--help"],
    ["-h"],
    ["bash", "--help"],
    ["bash", ECHO, "--version"],
    ["bash", ECHO, "extra"],
    ["bash", ECHO, "--bogus"],
    ["bash", ECHO, "-x"],
    ["bash", ECHO, "--timeout-ms"],
    ["bash", ECHO, "--timeout-ms="],
    ["bash", ECHO, "--timeout-ms", "abc"],
    ["bash", ECHO, "--timeout-ms", "0x10"],
    ["bash", ECHO, "--timeout-ms", "-5"],
    ["bash", ECHO, "--timeout-ms", "none"],
    ["bash", ECHO, "--timeout_ms", "5"],
    ["bash", ECHO, "--sandbox", "bogus"],
    ["bash", ECHO, "--sandbox", "READ-ONLY"],
    ["bash", ECHO, "--cwd"],
    ["bash", ECHO, "--cwd", ""],
    ["bash", ECHO, "--cwd", ".", "--cwd", "."],
    ["bash", ECHO, "--config", "null"],
    ["--name", "bash", "--arguments", ECHO],
    ["--", "bash", ECHO],
    ["bash", "--", ECHO],
    ["", "{}"],
    ["bash", "-1"],
]
"""Command lines after `tools call` the quick path leaves to cyclopts (a usage error, help, or
a form it does not read: cyclopts binds or refuses it as before)."""


def bound_by_cyclopts(argv: list[str]) -> CallRequest:
    """The call cyclopts binds `tools call *argv` to, without running it."""
    _, bound, _ = tools_app.parse_args(["call", *argv], exit_on_error=False, print_error=False)
    bound.apply_defaults()
    return CallRequest(**bound.arguments)


@pytest.mark.parametrize("argv", READ_QUICKLY, ids=json.dumps)
def test_the_quick_path_reads_a_call_as_cyclopts_binds_it(argv: list[str]) -> None:
    assert quick_request(argv) == bound_by_cyclopts(argv)


@pytest.mark.parametrize("argv", LEFT_TO_CYCLOPTS, ids=json.dumps)
def test_the_quick_path_leaves_any_other_command_line_to_cyclopts(argv: list[str]) -> None:
    assert quick_request(argv) is None


async def usage_error(cli: Cli, *argv: str) -> tuple[int, str, str]:
    """The exit code, stdout, and stderr's box text (its lines' contents, joined by spaces)."""
    done = await cli.run("tools", "call", *argv)
    inner = [line.strip("│╭╮╰╯─ ") for line in done.stderr.splitlines()]
    return done.code, done.stdout, " ".join(text for text in inner if text and text != "Error")


async def test_tools_call_without_a_name_exits_2_saying_the_name_is_required(cli: Cli) -> None:
    assert await usage_error(cli) == (
        2,
        "",
        'Command "tools call" parameter --name requires an argument.',
    )


async def test_tools_call_with_an_unknown_option_exits_2_naming_it(cli: Cli) -> None:
    assert await usage_error(cli, "bash", ECHO, "--bogus") == (2, "", "Unknown option: --bogus.")


async def test_tools_call_with_a_third_argument_exits_2_naming_it(cli: Cli) -> None:
    assert await usage_error(cli, "bash", ECHO, "extra") == (2, "", "Unused Tokens: ['extra'].")


async def test_tools_call_with_a_timeout_that_is_not_a_number_exits_2(cli: Cli) -> None:
    assert await usage_error(cli, "bash", ECHO, "--timeout-ms", "abc") == (
        2,
        "",
        'Invalid value for --timeout-ms: unable to convert "abc" into float.',
    )


async def test_tools_call_with_an_option_missing_its_value_exits_2(cli: Cli) -> None:
    assert await usage_error(cli, "bash", ECHO, "--cwd") == (
        2,
        "",
        'Command "tools call" parameter --cwd requires an argument.',
    )


async def test_tools_call_with_an_unknown_sandbox_exits_2_listing_the_modes(cli: Cli) -> None:
    assert await usage_error(cli, "bash", ECHO, "--sandbox", "read_only") == (
        2,
        "",
        'Invalid value "read_only" for --sandbox. Choose from: "read-only", "workspace-write", '
        '"danger-full-access". Did you mean "read-only"?',
    )


async def test_tools_call_with_an_option_given_twice_exits_2(cli: Cli) -> None:
    assert await usage_error(cli, "bash", ECHO, "--cwd", ".", "--cwd", ".") == (
        2,
        "",
        "Parameter --cwd specified multiple times.",
    )


async def test_tools_call_with_arguments_that_are_not_json_exits_2_saying_so(cli: Cli) -> None:
    done = await cli.run("tools", "call", "bash", "not json")

    assert (done.code, done.stdout, done.stderr) == (
        2,
        "",
        "tether: arguments are not JSON (Expecting value: line 1 column 1 (char 0)); "
        "pass an object like '{\"a\": 1}'\n",
    )


async def test_tools_call_help_shows_the_usage_and_every_option(cli: Cli) -> None:
    done = await cli.run("tools", "call", "--help")

    assert (done.code, done.stderr) == (0, "")
    assert done.stdout.startswith(
        "Usage: tether tools call [OPTIONS] NAME [ARGS]\n\n"
        "Run one tool call through the full pipeline and print its result and code.\n"
    )
    assert [f for f in ("--timeout-ms", "--config", "--cwd", "--sandbox") if f in done.stdout] == [
        "--timeout-ms",
        "--config",
        "--cwd",
        "--sandbox",
    ]


async def test_tools_call_help_after_a_name_is_the_same_help(cli: Cli) -> None:
    alone = await cli.run("tools", "call", "--help")

    after = await cli.run("tools", "call", "bash", "--help")

    assert (after.code, after.stdout) == (0, alone.stdout)


async def test_tools_call_past_its_timeout_prints_the_aborted_result_and_exits_1(
    cli: Cli,
) -> None:
    sleep = '{"command": "sleep 30", "description": "x"}'

    done = await cli.run("tools", "call", "bash", sleep, "--timeout-ms", "50")

    assert (done.code, done.stdout) == (1, "Error: tool call aborted\n")
    assert done.stderr.splitlines()[-1] == "tether: ABORTED: tool call aborted"


async def test_tools_call_runs_in_the_workspace_given_by_cwd(cli: Cli) -> None:
    (cli.work / "sub").mkdir()
    pwd = '{"command": "pwd", "description": "x"}'

    done = await cli.run("tools", "call", "--cwd=sub", "bash", pwd)

    assert (done.code, done.stdout) == (0, f"{(cli.work / 'sub').resolve()}\n")


async def test_tools_call_still_takes_its_positionals_by_name(cli: Cli) -> None:
    done = await cli.run("tools", "call", "--name", "bash", "--arguments", ECHO)

    assert (done.code, done.stdout) == (0, "hi\n")
