"""`tether chat` shows the answer as it arrives and always shows that the model is working (issue
26 §1, §8), on a real pseudo-terminal rendered with pyte, against the scripted model server.

Contract: text appears on the screen while the model's stream is still open (the scripted model
pauses mid-answer until the test lets it go on), with a `writing · N s` status under it; the
finished answer stays on the screen once, rendered as Markdown. The live timer of a call that
waited for approval leaves the wait out. A bash output cut to its tail is previewed from its
first whole line, after a `… N earlier lines` line naming the file with the whole output.
Waiting is always for screen text (generous timeouts), never fixed sleeps.
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from tether.testing.scripted_model import (
    ScriptedModelServer,
    finish,
    reply,
    text,
    text_reply,
    tool_calls_reply,
    until,
)

from ._chat import WAIT, leave, open_chat, screen
from ._support import Cli, eventually

pytestmark = pytest.mark.slow


async def test_the_answer_appears_while_the_model_is_still_writing_it(
    cli: Cli, server: ScriptedModelServer
) -> None:
    go_on = asyncio.Event()
    server.push(
        reply(
            text("The first half of **the answer**, "),
            until(go_on),
            text("and the second half."),
            finish("stop"),
        )
    )
    terminal = await open_chat(cli)
    try:
        terminal.send(b"explain it\r")
        await eventually(
            lambda: "The first half of the answer," in screen(terminal),
            timeout_s=WAIT,
            what="the first half on the screen",
        )
        await eventually(
            lambda: re.search(r"writing · \d+\.\d s", screen(terminal)),
            timeout_s=WAIT,
            what="the writing status under the text",
        )
        request = await server.request(0)
        assert not request.completed  # the model has not finished: the text streamed
        go_on.set()
        await terminal.expect("›", timeout_s=WAIT)
        await eventually(
            lambda: "The first half of the answer, and the second half." in screen(terminal),
            timeout_s=WAIT,
            what="the whole answer",
        )
        await leave(terminal)
    finally:
        go_on.set()
        await terminal.aclose()
    shown = screen(terminal)
    assert shown.count("The first half of the answer") == 1
    assert "**" not in shown  # rendered as Markdown
    assert "writing ·" not in shown  # the status is gone with the turn


async def test_a_spinner_shows_the_model_is_thinking_before_its_first_token(
    cli: Cli, server: ScriptedModelServer
) -> None:
    go_on = asyncio.Event()
    server.push(reply(until(go_on), text("Here it is."), finish("stop")))
    terminal = await open_chat(cli)
    try:
        terminal.send(b"think first\r")
        await eventually(
            lambda: re.search(r"thinking · \d+\.\d s", screen(terminal)),
            timeout_s=WAIT,
            what="the thinking status",
        )
        go_on.set()
        await terminal.expect("Here it is.", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        go_on.set()
        await terminal.aclose()


async def test_the_live_timer_of_a_call_leaves_out_the_approval_wait(
    cli: Cli, server: ScriptedModelServer
) -> None:
    marker = cli.work / "started"
    release = cli.work / "release"
    command = f"touch {marker}; while [ ! -e {release} ]; do sleep 0.05; done"
    call = ("s1", "bash", json.dumps({"command": command, "description": "wait"}))
    server.push(tool_calls_reply(call), text_reply("done"))
    terminal = await open_chat(cli)
    try:
        sent = asyncio.get_running_loop().time()  # the call starts after this
        terminal.send(b"run it\r")
        await terminal.expect("approve?", timeout_s=WAIT)
        await asyncio.sleep(5)  # the user takes their time: this wait must not be counted
        terminal.send(b"y\r")
        await eventually(marker.exists, timeout_s=WAIT, what="the command to start")
        await eventually(
            lambda: re.search(r"bash touch .* · \d+\.\d s", screen(terminal)),
            timeout_s=WAIT,
            what="the running call's timer",
        )
        (seconds,) = re.findall(r"bash touch .* · (\d+\.\d) s", screen(terminal))
        # The timer counts the call's time before the question and after the answer. Both lie
        # within the time since the prompt was sent less the 5 s wait; counted with the wait, the
        # timer would be past that (the call started well within 5 s of the prompt). It shows one
        # decimal, rounded, so it may be up to 0.05 s ahead.
        elapsed_less_the_wait = asyncio.get_running_loop().time() - sent - 5
        assert float(seconds) <= elapsed_less_the_wait + 0.05
        release.touch()
        await terminal.expect("done", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        release.touch()
        await terminal.aclose()
    assert re.search(r"waited \d+\.\d s for approval", " ".join(screen(terminal).split()))


async def test_an_output_cut_to_its_tail_is_previewed_from_a_whole_line_after_a_marker(
    cli: Cli, server: ScriptedModelServer
) -> None:
    command = "seq 1 30000"  # 168,894 bytes: more than the 64,000-byte tail bash keeps
    call = ("s1", "bash", json.dumps({"command": command, "description": "count"}))
    server.push(tool_calls_reply(call), text_reply("counted"))
    terminal = await open_chat(cli, "--yolo")
    try:
        await terminal.expect("›", timeout_s=WAIT)
        terminal.send(b"count\r")
        await terminal.expect("counted", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        await terminal.aclose()
    shown = " ".join(screen(terminal).split())  # the marker's long path may wrap
    found = re.search(
        r"✓ bash seq 1 30000 [\d.]+ m?s … ([\d,]+) earlier lines \(full output: [^)]+\) (\d+) ",
        shown,
    )
    assert found is not None, shown
    earlier, first = int(found.group(1).replace(",", "")), int(found.group(2))
    assert first == earlier + 1  # the tail's first whole line follows the marker
    assert 1 < earlier < 30000


STUBBORN_PLUGIN = '''
"""A tool whose body does not watch its signal: it waits for a file, whatever happens."""
import time
from pathlib import Path

from tether import tool

name = "stubborn-tool"
inject = ("tools",)


@tool
def stubborn(release: str) -> str:
    """Waits until the file `release` exists."""
    while not Path(release).exists():
        time.sleep(0.05)
    return "released"


def apply(ctx):
    ctx.tools.register(stubborn)
'''


async def test_a_call_that_does_not_stop_after_esc_says_so_in_the_status(
    cli: Cli, server: ScriptedModelServer
) -> None:
    (cli.work / "stubborn_tool.py").write_text(STUBBORN_PLUGIN)
    (cli.work / "tether.yml").write_text("plugins:\n  - {id: stubborn-tool, name: stubborn_tool}\n")
    cli.env["PYTHONPATH"] = str(cli.work)
    release = cli.work / "release"
    call = ("s1", "stubborn", json.dumps({"release": str(release)}))
    server.push(tool_calls_reply(call), text_reply("after"))
    terminal = await open_chat(cli, "--yolo")
    try:
        terminal.send(b"run it\r")
        await eventually(
            lambda: re.search(r"stubborn · \d+\.\d s", screen(terminal)),
            timeout_s=WAIT,
            what="the call running",
        )
        terminal.send(b"\x1b")
        await terminal.expect("interrupted (Esc)", timeout_s=WAIT)
        await eventually(  # 5 s after the abort, the registry says the body has not stopped
            lambda: (
                "waiting for stubborn to stop: it does not watch its signal"
                in " ".join(screen(terminal).split())
            ),
            timeout_s=WAIT,
            what="the slow-stop status",
        )
        release.touch()
        await terminal.expect("ABORTED", timeout_s=WAIT)
        await terminal.expect("›", timeout_s=WAIT)
        await leave(terminal)
    finally:
        release.touch()
        await terminal.aclose()
    assert "it waits at" in " ".join(terminal.output.split())
