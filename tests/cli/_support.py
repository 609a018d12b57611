"""Helpers for the command-line tests: the installed `tether` script run as a real subprocess.

`Cli` runs `tether` from the venv next to `sys.executable`, with `TETHER_HOME` and the working
directory under the test's `tmp_path` and the model routed to a `ScriptedModelServer` on
127.0.0.1 (`OPENAI_BASE_URL`, `OPENAI_MODEL=scripted`; no key needed for a custom base URL).
`Terminal` runs a command on a fresh pseudo-terminal that is its controlling terminal, so writing
`\\x03` is a real Ctrl-C (SIGINT to the terminal's foreground process group). Waiting is always
on a real condition (output seen, a file line written, a process present), bounded by a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

from tether.agent.session import SessionStore, SessionSummary

from ..patience import PATIENCE_S

__all__ = [
    "PATIENCE_S",
    "TETHER",
    "Cli",
    "Finished",
    "Terminal",
    "eventually",
    "gone",
    "process_running",
    "python_in",
]

TETHER = Path(sys.executable).parent / "tether"
"""The installed console script of this venv."""


_LAUNCH = (
    "import fcntl, os, sys, termios\n"
    "os.setsid()\n"
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)
"""Become a session leader whose controlling terminal is stdin, then exec the command."""

_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


@dataclass(frozen=True)
class Finished:
    """How a `tether` run ended."""

    code: int
    stdout: str
    stderr: str


async def eventually(
    condition: Callable[[], object], *, timeout_s: float = PATIENCE_S, what: str = "condition"
) -> None:
    """Poll `condition()` until it is truthy (every 10 ms, at most `timeout_s`)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        await asyncio.sleep(0.01)


def python_in(tmp_path: Path, body: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run `body` (`python -c`) in a fresh interpreter of this venv, in `tmp_path` with its own
    TETHER_HOME and HOME and no model settings; stdout and stderr captured as text."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TETHER_"))}
    env.update(TETHER_HOME=str(tmp_path / "home"), HOME=str(tmp_path), COLUMNS="100")
    return subprocess.run(
        [sys.executable, "-c", body, *argv],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )


def process_running(root_pid: int, argv: Sequence[str]) -> psutil.Process | None:
    """A live descendant of `root_pid` (or any process in its tree) whose argv is `argv`."""
    try:
        children = psutil.Process(root_pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return None
    for child in children:
        with contextlib.suppress(psutil.Error):
            if child.cmdline() == list(argv) and child.status() != psutil.STATUS_ZOMBIE:
                return child
    return None


def gone(process: psutil.Process) -> bool:
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


class Cli:
    """`tether` for one test: its home, workspace and environment."""

    def __init__(self, tmp_path: Path, base_url: str) -> None:
        self.home = tmp_path / "home"
        self.work = tmp_path / "work"
        self.work.mkdir()
        (self.work / "notes.txt").write_text("hello from the workspace\n")
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("OPENAI_", "DEEPSEEK_", "TETHER_"))
        }
        env.update(
            OPENAI_BASE_URL=base_url,
            OPENAI_MODEL="scripted",
            TETHER_HOME=str(self.home),
            NO_COLOR="1",
            COLUMNS="100",
            PYTHONUNBUFFERED="1",
        )
        self.env = env

    @property
    def store(self) -> SessionStore:
        return SessionStore(self.home / "sessions")

    def sessions(self) -> list[SessionSummary]:
        return self.store.list_sessions()

    async def spawn(
        self, *args: str, new_session: bool = False, stdin: int | None = None
    ) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            str(TETHER),
            *args,
            cwd=self.work,
            env=self.env,
            stdin=asyncio.subprocess.DEVNULL if stdin is None else stdin,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=new_session,
        )

    async def run(
        self, *args: str, input: bytes | None = None, timeout_s: float = PATIENCE_S
    ) -> Finished:
        """Run `tether *args` to completion (killed after `timeout_s`)."""
        process = await asyncio.create_subprocess_exec(
            str(TETHER),
            *args,
            cwd=self.work,
            env=self.env,
            stdin=asyncio.subprocess.PIPE if input is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            async with asyncio.timeout(timeout_s):
                out, err = await process.communicate(input)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise AssertionError(
                f"tether {' '.join(args)} did not finish in {timeout_s} s"
            ) from None
        assert process.returncode is not None
        return Finished(process.returncode, out.decode(), err.decode())


class Terminal:
    """A command on its own pseudo-terminal; `output` is what it printed, ANSI-stripped."""

    def __init__(self, process: asyncio.subprocess.Process, master: int) -> None:
        self.process = process
        self._master = master
        self._raw = bytearray()
        self._cursor = 0
        self._changed = asyncio.Event()
        self.closed = False
        asyncio.get_running_loop().add_reader(master, self._readable)

    @classmethod
    async def open(cls, argv: Sequence[str], *, cwd: Path, env: dict[str, str]) -> Terminal:
        master, slave = os.openpty()
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                _LAUNCH,
                *argv,
                cwd=cwd,
                env=env,
                stdin=slave,
                stdout=slave,
                stderr=slave,
            )
        finally:
            os.close(slave)
        return cls(process, master)

    def _readable(self) -> None:
        try:
            data = os.read(self._master, 65536)
        except OSError:  # EIO: every slave descriptor is closed
            data = b""
        if not data:
            self._stop_reading()
        for _ in range(data.count(b"\x1b[6n")):  # a cursor position request: answer it
            os.write(self._master, b"\x1b[1;1R")
        self._raw += data
        self._changed.set()

    def _stop_reading(self) -> None:
        if not self.closed:
            self.closed = True
            asyncio.get_running_loop().remove_reader(self._master)

    def screen(self, columns: int = 100, lines: int = 40) -> list[str]:
        """What a VT100 terminal would show now (lines scrolled off the top first)."""
        import pyte

        screen = pyte.HistoryScreen(columns, lines, history=5000)
        pyte.ByteStream(screen).feed(bytes(self._raw))
        top = ["".join(line[x].data for x in range(columns)) for line in screen.history.top]
        return [line.rstrip() for line in [*top, *screen.display]]

    @property
    def output(self) -> str:
        return _ANSI.sub(b"", bytes(self._raw)).decode("utf-8", "replace")

    def send(self, data: bytes) -> None:
        os.write(self._master, data)

    async def expect(self, text: str, *, timeout_s: float = PATIENCE_S) -> None:
        """Wait until `text` appears after everything matched so far; move past it."""
        async with asyncio.timeout(timeout_s):
            while True:
                found = self.output.find(text, self._cursor)
                if found >= 0:
                    self._cursor = found + len(text)
                    return
                if self.closed:
                    raise AssertionError(f"terminal closed before {text!r}:\n{self.output}")
                self._changed.clear()
                await self._changed.wait()

    async def wait(self, *, timeout_s: float = PATIENCE_S) -> int:
        async with asyncio.timeout(timeout_s):
            code = await self.process.wait()
            while not self.closed:
                self._changed.clear()
                await self._changed.wait()
        return code

    def hang_up(self) -> None:
        """Close the terminal, as closing its window does: the kernel hangs up the command's
        session (SIGHUP to its leader; reading or writing the terminal fails from then on)."""
        self._stop_reading()
        if self._master >= 0:
            os.close(self._master)
            self._master = -1

    async def aclose(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
        self.hang_up()
