"""The spill policy is a built-in of the agent commands (spec capabilities §1.6.8).

Contract: `tether run` (and `chat`, which boots the same agent set) mounts `spill-policy` with the
shipped cap, 50,000 UTF-8 bytes: a plain-text tool result over it reaches the model — and the
session log — as head + `\\n...\\n` + tail + the notice naming the file beside the session that
holds the whole text, which the model can `read` back (the session directory is readable, not
writable, for the file tools), as it can a truncated command's full output (kept under
`$TETHER_HOME/run/spill` until the shell closes). A config file sets another cap. `tether tools
call` (a person running one tool, no session) does not mount it: the whole result is printed (bash's
own 64,000-byte tail, which is over the cap).

The model is a `ScriptedModelServer` on 127.0.0.1; `tether` runs as a real subprocess.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tether.plugins.spill import LOCAL_HINT, Spilled
from tether.plugins.spill.policy import bounded_text
from tether.testing.scripted_model import (
    RecordedRequest,
    ScriptedModelServer,
    ScriptedResponse,
    text_reply,
    tool_calls_reply,
)

from ._support import Cli

pytestmark = pytest.mark.slow

NOTICE = re.compile(
    r"\n\n\(Omitted (\d+) bytes\. Full formatted result stored at: (\S+)\. Use read with "
    r"offset/limit, or grep this path to search within it\.\)$"
)


def bash(command: str) -> tuple[str, str, str]:
    return ("t1", "bash", json.dumps({"command": command, "description": "print numbers"}))


def tool_message(server: ScriptedModelServer) -> str:
    (message,) = [m for m in server.requests[1].messages if m["role"] == "tool"]
    content = message["content"]
    assert isinstance(content, str)
    return content


def logged_result(cli: Cli) -> str:
    (summary,) = cli.sessions()
    (event,) = [e for e in cli.store.load(summary.id).events if e.type == "tool/result"]
    message = event.data["message"]
    assert isinstance(message, dict)
    assert isinstance(message["content"], list)
    (answer,) = message["content"]
    assert isinstance(answer, dict)
    assert isinstance(answer["content"], list)
    return "".join(str(block["text"]) for block in answer["content"] if isinstance(block, dict))


async def test_run_spills_a_result_over_the_shipped_cap_beside_the_session(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash("seq 1 20000")), text_reply("counted"))

    done = await cli.run("run", "--yolo", "count")

    assert (done.code, done.stdout) == (0, "counted\n")
    seen = tool_message(server)
    notice = NOTICE.search(seen)
    assert notice is not None, seen[-300:]
    (summary,) = cli.sessions()
    saved = summary.path.parent / "spill" / "t1.txt"
    assert notice.group(2) == str(saved)
    whole = saved.read_text()
    assert "\n19999\n20000\n\n[output truncated; full output: " in whole  # bash's own tail
    assert seen == bounded_text(whole, 50_000, Spilled(str(saved), LOCAL_HINT))
    assert len(seen.encode()) <= 50_000
    assert logged_result(cli) == seen


async def test_a_config_file_sets_the_cap(cli: Cli, server: ScriptedModelServer) -> None:
    (cli.work / "tether.yml").write_text(
        "plugins:\n"
        "  - id: spill-policy\n"
        "    name: tether.plugins.spill.policy\n"
        "    config: {max_inline_bytes: 2000}\n"
    )
    server.push(tool_calls_reply(bash("seq 1 3000")), text_reply("counted"))

    done = await cli.run("run", "--yolo", "count")

    assert done.code == 0
    seen = tool_message(server)
    notice = NOTICE.search(seen)
    assert notice is not None, seen[-300:]
    assert len(seen.encode()) <= 2000
    assert Path(notice.group(2)).read_text().rstrip().endswith("\n3000")


async def test_a_result_under_the_cap_reaches_the_model_whole(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash("seq 1 3000")), text_reply("counted"))

    await cli.run("run", "--yolo", "count")

    seen = tool_message(server)
    assert NOTICE.search(seen) is None
    assert seen.rstrip().endswith("\n3000")
    (summary,) = cli.sessions()
    assert not (summary.path.parent / "spill").exists()


async def test_tools_call_prints_the_whole_result(cli: Cli) -> None:
    done = await cli.run("tools", "call", "bash", '{"command": "seq 1 20000", "description": "x"}')

    assert done.code == 0
    assert "Full formatted result stored at" not in done.stdout
    assert "\n19999\n20000\n\n[output truncated; full output: " in done.stdout
    assert len(done.stdout.encode()) > 60_000


async def test_the_model_can_read_the_spilled_text_back(
    cli: Cli, server: ScriptedModelServer
) -> None:
    server.push(tool_calls_reply(bash("seq 1 20000")))
    await cli.run("run", "--yolo", "count")
    (summary,) = cli.sessions()
    saved = summary.path.parent / "spill" / "t1.txt"
    read = ("t2", "read", json.dumps({"file_path": str(saved), "offset": 2, "limit": 2}))
    server.push(tool_calls_reply(read), text_reply("read it"))

    done = await cli.run("run", "--yolo", "--resume", summary.id, "read the rest")

    assert (done.code, done.stdout) == (0, "read it\n")
    (message,) = [m for m in server.requests[-1].messages if m["role"] == "tool"][-1:]
    lines = saved.read_text().splitlines()
    assert f"\n2: {lines[1]}\n3: {lines[2]}\n" in str(message["content"])
    assert "\n4: " not in str(message["content"])


async def test_the_model_can_read_a_truncated_commands_full_output(
    cli: Cli, server: ScriptedModelServer
) -> None:
    def read_the_full_output(request: RecordedRequest) -> ScriptedResponse:
        (message,) = [m for m in request.messages if m["role"] == "tool"]
        full = re.search(r"\[output truncated; full output: (\S+)\]", str(message["content"]))
        assert full is not None
        arguments = json.dumps({"file_path": full.group(1), "offset": 1, "limit": 2})
        return tool_calls_reply(("t2", "read", arguments))

    server.push(tool_calls_reply(bash("seq 1 20000")), read_the_full_output, text_reply("read it"))

    done = await cli.run("run", "--yolo", "count")

    assert (done.code, done.stdout) == (0, "read it\n")
    read = [m for m in server.requests[2].messages if m["role"] == "tool"][-1]
    assert "\n1: 1\n2: 2\n" in str(read["content"])
    assert str(cli.home / "run" / "spill") in str(read["content"])
