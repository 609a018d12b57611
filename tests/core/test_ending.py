"""Contract of `tether.core.ending` (issue 33: every way tether ends).

- `Ended(signum)` names the signal, exits `128 + N` and records `{"kind": "signal", "signal":
  NAME}` as an aborted turn's cause; `Ended()` is the end of the conversation's input
  (`{"kind": "input-closed"}`, `INPUT_CLOSED_STATUS`).
- `ProcessEnding` installed on the running loop turns the first of its signals into the abort of
  `ending.signal` with an `Ended` (and one `on_end` call); any later signal, or a later `end()`,
  calls `exit` with that signal's status instead. Leaving the block gives the signals their
  default action back. The signals are real: `os.kill` of this process.
"""

from __future__ import annotations

import asyncio
import os
import signal as os_signal
import subprocess
import sys

import pytest

from tether.core.ending import (
    ENDING_SIGNALS,
    INPUT_CLOSED_STATUS,
    Ended,
    ProcessEnding,
)

from ..patience import PATIENCE_S


@pytest.mark.parametrize(
    ("signum", "code"),
    [
        (os_signal.SIGINT, 130),
        (os_signal.SIGTERM, 143),
        (os_signal.SIGHUP, 129),
        (os_signal.SIGQUIT, 131),
    ],
)
def test_an_ended_names_its_signal_and_exits_128_plus_n(signum: int, code: int) -> None:
    ended = Ended(signum)
    name = os_signal.Signals(signum).name

    assert (ended.name, ended.exit_code, ended.cause) == (
        name,
        code,
        {"kind": "signal", "signal": name},
    )
    assert str(ended) == f"tether got {name}"


def test_an_ended_without_a_signal_is_the_input_closing() -> None:
    ended = Ended()

    assert (ended.name, ended.exit_code, ended.cause) == (
        "input-closed",
        INPUT_CLOSED_STATUS,
        {"kind": "input-closed"},
    )


def test_the_ending_signals_are_int_term_hup_and_quit() -> None:
    assert ENDING_SIGNALS == (
        os_signal.SIGINT,
        os_signal.SIGTERM,
        os_signal.SIGHUP,
        os_signal.SIGQUIT,
    )


async def test_the_first_sigterm_aborts_the_signal_with_ended_and_calls_on_end_once() -> None:
    seen: list[Ended] = []
    exits: list[int] = []
    with ProcessEnding(on_end=seen.append, exit=exits.append) as ending:
        os.kill(os.getpid(), os_signal.SIGTERM)
        async with asyncio.timeout(PATIENCE_S):
            reason = await ending.signal.wait()

    assert isinstance(reason, Ended)
    assert (reason.signum, ending.reason, seen, exits) == (os_signal.SIGTERM, reason, [reason], [])
    assert ending.exit_code(0) == 143


async def test_a_second_signal_while_ending_exits_with_its_status() -> None:
    exits: list[int] = []
    with ProcessEnding(exit=exits.append) as ending:
        os.kill(os.getpid(), os_signal.SIGTERM)
        async with asyncio.timeout(PATIENCE_S):
            await ending.signal.wait()
        os.kill(os.getpid(), os_signal.SIGQUIT)
        async with asyncio.timeout(PATIENCE_S):
            while not exits:
                await asyncio.sleep(0)

    assert exits == [131]
    assert ending.exit_code(0) == 143  # the ending's reason stays the first signal's


async def test_the_input_closing_ends_the_same_way_a_signal_does() -> None:
    exits: list[int] = []
    seen: list[Ended] = []
    with ProcessEnding(on_end=seen.append, exit=exits.append) as ending:
        ending.end(Ended())
        ending.end(Ended(os_signal.SIGTERM))

    assert [r.cause for r in seen] == [{"kind": "input-closed"}]
    assert (ending.exit_code(0), exits) == (INPUT_CLOSED_STATUS, [143])


async def test_a_process_not_ending_keeps_the_given_status() -> None:
    with ProcessEnding() as ending:
        assert (ending.reason, ending.signal.aborted, ending.exit_code(7)) == (None, False, 7)


async def test_leaving_the_block_gives_the_signals_their_default_action_back() -> None:
    with ProcessEnding():
        during = {signum: os_signal.getsignal(signum) for signum in ENDING_SIGNALS}

    assert {signum: os_signal.getsignal(signum) for signum in ENDING_SIGNALS} == {
        os_signal.SIGINT: os_signal.default_int_handler,  # Python's: KeyboardInterrupt
        os_signal.SIGTERM: os_signal.SIG_DFL,
        os_signal.SIGHUP: os_signal.SIG_DFL,
        os_signal.SIGQUIT: os_signal.SIG_DFL,
    }
    assert os_signal.SIG_DFL not in during.values()


_HANG_UPS = """\
import asyncio, os, signal, sys
from tether.core.ending import ProcessEnding

async def main():
    exits = []
    with ProcessEnding(exit=exits.append) as ending:
        ending.hang_up()                       # a read of the terminal failed (EIO)
        os.kill(os.getpid(), signal.SIGHUP)    # the shell's SIGHUP
        os.kill(os.getpid(), signal.SIGHUP)    # the kernel's, when the shell exits
        os.kill(os.getpid(), signal.SIGTERM)   # a second signal of another kind
        while not exits:                       # the loop handles them in the order sent
            await asyncio.sleep(0.01)
    print(ending.reason.name, exits)

asyncio.run(main())
"""


def test_a_hang_up_reported_again_is_one_event_and_another_signal_still_exits() -> None:
    """In a child process: the hang-up points its character-device streams at /dev/null."""
    done = subprocess.run(
        [sys.executable, "-c", _HANG_UPS],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )

    assert (done.returncode, done.stdout, done.stderr) == (0, "SIGHUP [143]\n", "")
