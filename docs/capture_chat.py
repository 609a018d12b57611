"""Render a demo `tether chat` session to text: `docs/chat-screen.txt`.

Runs the installed `tether chat` on a pseudo-terminal (100 x 40; lines scrolled off the top
are kept) against the scripted model server, types a short session, and feeds everything the
chat prints through `pyte` (a VT100 emulator), so the file holds the screen a user would see
(colours dropped). Regenerate with

    PYTHONPATH=src .venv/bin/python docs/capture_chat.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

import pyte

from tether.testing.scripted_model import (
    ScriptedModelServer,
    finish,
    reasoning,
    reply,
    text,
    tool_call,
    usage,
)

COLUMNS, LINES = 100, 40
TETHER = Path(sys.executable).parent / "tether"
OUT = Path(__file__).parent / "chat-screen.txt"
_LAUNCH = (
    "import fcntl, os, sys, termios, struct\n"
    "os.setsid()\n"
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"
    f"fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', {LINES}, {COLUMNS}, 0, 0))\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)

EDIT = {
    "file_path": "greet.py",
    "old_string": 'print("helo, world")',
    "new_string": 'print("hello, world")',
}


class Screen:
    """A pty whose output is emulated by pyte; cursor position requests are answered."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.screen = pyte.HistoryScreen(COLUMNS, LINES, history=2000)
        self.stream = pyte.ByteStream(self.screen)
        self.changed = asyncio.Event()
        self.text = ""
        asyncio.get_running_loop().add_reader(master, self._readable)

    def _readable(self) -> None:
        try:
            data = os.read(self.master, 65536)
        except OSError:
            data = b""
        if not data:
            asyncio.get_running_loop().remove_reader(self.master)
            return
        for _ in range(data.count(b"\x1b[6n")):
            row, col = self.screen.cursor.y + 1, self.screen.cursor.x + 1
            os.write(self.master, f"\x1b[{row};{col}R".encode())
        self.stream.feed(data)
        self.text += data.decode("utf-8", "replace")
        self.changed.set()

    def lines(self) -> list[str]:
        """The lines scrolled off the top, then the screen."""
        scrolled = [
            "".join(line[x].data for x in range(COLUMNS)) for line in self.screen.history.top
        ]
        return [*scrolled, *self.screen.display]

    def rendered(self) -> str:
        return "\n".join(line.rstrip() for line in self.lines()).strip("\n") + "\n"

    async def expect(self, needle: str, count: int = 1, timeout_s: float = 60.0) -> None:
        """Wait until `needle` is on the screen `count` times (or, with `count` 1, once)."""
        async with asyncio.timeout(timeout_s):
            while "\n".join(self.lines()).count(needle) < count:
                self.changed.clear()
                await self.changed.wait()

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        (work / "greet.py").write_text('def main():\n    print("helo, world")\n\n\nmain()\n')
        (work / "test_greet.py").write_text("def test_greets():\n    assert True\n")
        async with ScriptedModelServer(
            reply(
                reasoning("The user wants the typo fixed; greet.py is attached already."),
                tool_call(0, id="c1", name="edit", arguments=json.dumps(EDIT)),
                finish("tool_calls"),
                usage(1840, 96, cached_tokens=1024),
            ),
            reply(
                tool_call(
                    0,
                    id="c2",
                    name="bash",
                    arguments=json.dumps({"command": "python3 greet.py", "description": "run it"}),
                ),
                tool_call(
                    1, id="c3", name="read", arguments=json.dumps({"file_path": "test_greet.py"})
                ),
                finish("tool_calls"),
                usage(2110, 64, cached_tokens=1792),
            ),
            reply(
                text("Fixed the typo in `greet.py`:\n\n"),
                text("- `helo` → `hello` in the `print` call\n"),
                text("- ran `python greet.py`, which prints **hello, world**\n\n"),
                text("The test file needs no change."),
                finish("stop"),
                usage(2290, 58, cached_tokens=2048),
            ),
        ) as server:
            env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TETHER_"))}
            env.update(
                OPENAI_BASE_URL=server.base_url,
                OPENAI_MODEL="demo-model",
                TETHER_HOME=str(Path(tmp) / "home"),
                HOME=tmp,
                TERM="xterm-256color",
                COLUMNS=str(COLUMNS),
                LINES=str(LINES),
            )
            master, slave = os.openpty()
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                _LAUNCH,
                str(TETHER),
                "chat",
                cwd=work,
                env=env,
                stdin=slave,
                stdout=slave,
                stderr=slave,
            )
            os.close(slave)
            screen = Screen(master)
            try:
                await screen.expect("›")
                screen.type("fix the typo in @greet.py\r")
                await screen.expect("approve?")
                screen.type("y\r")
                await screen.expect("approve?", count=2)  # bash asks too
                screen.type("a\r")  # and is not asked again: saved to .claude/settings.local.json
                await screen.expect("The test file needs no change.")
                await screen.expect("›", count=2)
                screen.type("!ls\r")  # bash mode: no model, the output goes with the next message
                await screen.expect("test_greet.py", count=2)
                await screen.expect("›", count=3)
                screen.type("/cost\r")
                await screen.expect("total")
                await screen.expect("›", count=4)
                OUT.write_text(screen.rendered())
                screen.type("/exit\r")
                await asyncio.wait_for(process.wait(), 30)
            except TimeoutError:
                print(screen.rendered(), file=sys.stderr)
                raise
            finally:
                if process.returncode is None:
                    process.kill()
                    await process.wait()
                os.close(master)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    asyncio.run(main())
