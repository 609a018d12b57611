"""Every way `tether run` and `tether chat` end (issue 33): real subprocesses of the installed
script against the scripted model, a `sleep` with a unique argv as the running command.

Contract: SIGTERM, SIGHUP, SIGQUIT (and SIGINT) mid-command end the running call the way Ctrl-C
does — its `ABORTED` result recorded, the turn ended `aborted` with the signal as its cause, the
log balanced (`tether sessions check` ok) — and the process exits 128 + N with nothing it started
still running; a second signal while the first one's drain is held open exits at once, and still
nothing runs. A closed terminal is SIGHUP to `tether chat` on a pseudo-terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import signal
from collections.abc import AsyncIterator, Sequence
from typing import Any

import psutil
import pytest

from tether.testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply

from ._support import PATIENCE_S, TETHER, Cli, Terminal, eventually, process_running

pytestmark = pytest.mark.slow


def unique_sleep() -> list[str]:
    """A `sleep` argv no other process has."""
    return ["sleep", f"300.{secrets.randbelow(10**9):09d}"]


def bash_call(command: str) -> tuple[str, str, str]:
    return ("b1", "bash", json.dumps({"command": command, "description": "wait a while"}))


def running_anywhere(argv: Sequence[str]) -> list[psutil.Process]:
    """Every live (not zombie) process whose argv is `argv` (unique to the test)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            if process.info["cmdline"] == list(argv) and process.status() != "zombie":
                found.append(process)
    return found


def turn_end_reason(cli: Cli, session_id: str) -> Any:
    (end,) = [e for e in cli.store.load(session_id).events if e.type == "turn/end"]
    return end.data["reason"]


def results(cli: Cli, session_id: str) -> list[tuple[str, Any]]:
    out = []
    for event in cli.store.load(session_id).events:
        if event.type == "tool/result":
            data: Any = event.data
            out.append((data["message"]["content"][0]["call_id"], data.get("error")))
    return out


@contextlib.asynccontextmanager
async def running_run(
    cli: Cli, server: ScriptedModelServer, argv: Sequence[str], command: str | None = None
) -> AsyncIterator[asyncio.subprocess.Process]:
    """`tether run` with the bash call `command` (default: `argv`) running `argv`."""
    command = command or " ".join(argv)
    server.push(tool_calls_reply(bash_call(command)))
    process = await cli.spawn("run", "--allow", f"Bash({command})", "wait", new_session=True)
    try:
        await eventually(lambda: process_running(process.pid, argv), what="the command")
        yield process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        for left in running_anywhere(argv):
            left.kill()


async def ended(process: asyncio.subprocess.Process) -> tuple[int, str]:
    async with asyncio.timeout(PATIENCE_S):
        _, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, err.decode()


def hold_the_drain(cli: Cli) -> None:
    """A command that ignores SIGTERM then holds a drain for 10 minutes (the shell's grace)."""
    (cli.work / "tether.yml").write_text(
        "plugins:\n"
        "  - id: shell\n"
        "    name: tether.plugins.shell.plugin\n"
        "    config: {grace_ms: 600000}\n"
    )


async def assert_balanced(cli: Cli) -> str:
    (summary,) = cli.sessions()
    check = await cli.run("sessions", "check", summary.id)
    assert (check.code, check.stdout) == (0, f"{summary.id}: ok\n")
    return summary.id


@pytest.mark.parametrize(
    ("signum", "code"),
    [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGQUIT, 131), (signal.SIGINT, 130)],
)
async def test_a_signal_to_run_mid_command_aborts_the_call_balances_the_log_and_exits_128_plus_n(
    cli: Cli, server: ScriptedModelServer, signum: signal.Signals, code: int
) -> None:
    argv = unique_sleep()
    async with running_run(cli, server, argv) as process:
        process.send_signal(signum)
        status, stderr = await ended(process)

    assert status == code, stderr
    assert f"tether: {signum.name}: aborting the turn" in stderr
    assert running_anywhere(argv) == []
    session_id = await assert_balanced(cli)
    assert results(cli, session_id) == [("b1", {"name": "AbortError", "code": "ABORTED"})]
    assert turn_end_reason(cli, session_id) == {
        "kind": "aborted",
        "reason": {"kind": "signal", "signal": signum.name},
    }


async def test_a_second_signal_while_run_drains_exits_at_once_and_nothing_runs(
    cli: Cli, server: ScriptedModelServer
) -> None:
    hold_the_drain(cli)
    argv = unique_sleep()
    stubborn = f"trap '' TERM; {' '.join(argv)}; true"
    async with running_run(cli, server, argv, stubborn) as process:
        process.send_signal(signal.SIGTERM)
        assert process.stderr is not None
        async with asyncio.timeout(PATIENCE_S):
            while b"SIGTERM: aborting the turn" not in await process.stderr.readline():
                pass
        assert running_anywhere(argv) != []  # the drain is held open by the command
        process.send_signal(signal.SIGHUP)
        status, _ = await ended(process)
        await eventually(lambda: running_anywhere(argv) == [], what="the namespace to die")

    assert status == 129


# -- tether chat ----------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def running_chat(
    cli: Cli, server: ScriptedModelServer, argv: Sequence[str], command: str | None = None
) -> AsyncIterator[Terminal]:
    """`tether chat` on a pseudo-terminal with the bash call `command` (default: `argv`)
    running `argv`."""
    command = command or " ".join(argv)
    server.push(tool_calls_reply(bash_call(command)))
    terminal = await Terminal.open(
        [str(TETHER), "chat", "--allow", f"Bash({command})"], cwd=cli.work, env=cli.env
    )
    try:
        await terminal.expect("›")
        terminal.send(b"wait for it\r")
        await eventually(lambda: process_running(terminal.process.pid, argv), what="the command")
        yield terminal
    finally:
        await terminal.aclose()
        for left in running_anywhere(argv):
            left.kill()


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGQUIT, 131)])
async def test_a_signal_to_chat_mid_command_aborts_the_call_and_ends_the_chat_128_plus_n(
    cli: Cli, server: ScriptedModelServer, signum: signal.Signals, code: int
) -> None:
    argv = unique_sleep()
    async with running_chat(cli, server, argv) as terminal:
        terminal.process.send_signal(signum)
        await terminal.expect(f"tether: {signum.name}: ending")
        status = await terminal.wait()

    assert status == code, terminal.output
    assert running_anywhere(argv) == []
    session_id = await assert_balanced(cli)
    assert results(cli, session_id) == [("b1", {"name": "AbortError", "code": "ABORTED"})]
    assert turn_end_reason(cli, session_id) == {
        "kind": "aborted",
        "reason": {"kind": "signal", "signal": signum.name},
    }


async def test_a_second_signal_while_chat_drains_exits_at_once_and_nothing_runs(
    cli: Cli, server: ScriptedModelServer
) -> None:
    hold_the_drain(cli)
    argv = unique_sleep()
    stubborn = f"trap '' TERM; {' '.join(argv)}; true"
    async with running_chat(cli, server, argv, stubborn) as terminal:
        terminal.process.send_signal(signal.SIGTERM)
        await terminal.expect("tether: SIGTERM: ending")
        assert running_anywhere(argv) != []  # the drain is held open by the command
        terminal.process.send_signal(signal.SIGQUIT)
        status = await terminal.wait()
        await eventually(lambda: running_anywhere(argv) == [], what="the namespace to die")

    assert status == 131


async def test_closing_the_terminal_of_chat_mid_command_ends_it_129_with_the_log_balanced(
    cli: Cli, server: ScriptedModelServer
) -> None:
    argv = unique_sleep()
    async with running_chat(cli, server, argv) as terminal:
        terminal.hang_up()  # the kernel sends SIGHUP to the session leader: tether
        status = await terminal.wait()

    assert status == 129
    assert running_anywhere(argv) == []
    session_id = await assert_balanced(cli)
    assert results(cli, session_id) == [("b1", {"name": "AbortError", "code": "ABORTED"})]
    assert turn_end_reason(cli, session_id) == {
        "kind": "aborted",
        "reason": {"kind": "signal", "signal": "SIGHUP"},
    }


async def test_sigterm_to_chat_at_its_prompt_ends_it_143(cli: Cli) -> None:
    terminal = await Terminal.open([str(TETHER), "chat"], cwd=cli.work, env=cli.env)
    try:
        await terminal.expect("›")
        terminal.process.send_signal(signal.SIGTERM)
        await terminal.expect("tether: SIGTERM: ending")
        await terminal.expect("tether: quit; the session log is closed and balanced")
        status = await terminal.wait()
    finally:
        await terminal.aclose()

    assert status == 143, terminal.output


async def test_closing_the_terminal_of_chat_at_its_prompt_ends_it_129(cli: Cli) -> None:
    terminal = await Terminal.open([str(TETHER), "chat"], cwd=cli.work, env=cli.env)
    try:
        await terminal.expect("›")
        terminal.hang_up()
        status = await terminal.wait()
    finally:
        await terminal.aclose()

    assert status == 129


async def test_sigterm_to_chat_reading_a_pipe_ends_it_143_with_the_log_balanced(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(text_reply("first answer"))
    process = await cli.spawn("chat", stdin=asyncio.subprocess.PIPE)
    try:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(b"hello\n")  # the pipe stays open: the chat waits for a line
        await process.stdin.drain()
        async with asyncio.timeout(PATIENCE_S):
            seen = b""
            while b"first answer" not in seen:
                chunk = await process.stdout.read(4096)
                assert chunk, seen
                seen += chunk
        process.send_signal(signal.SIGTERM)
        status, stderr = await ended(process)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

    assert status == 143, stderr
    await assert_balanced(cli)


async def test_sigterm_to_tools_call_aborts_the_call_prints_its_result_and_exits_143(
    cli: Cli,
) -> None:
    argv = unique_sleep()
    command = json.dumps({"command": " ".join(argv), "description": "wait"})
    process = await cli.spawn("tools", "call", "bash", command, new_session=True)
    try:
        await eventually(lambda: process_running(process.pid, argv), what="the command")
        process.send_signal(signal.SIGTERM)
        status, stderr = await ended(process)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        for left in running_anywhere(argv):
            left.kill()

    assert status == 143, stderr
    assert "tether: ABORTED: " in stderr
    assert running_anywhere(argv) == []
