"""What an MCP server writes that is not the protocol: its stderr, and noise on its stdout.

Owns `StderrRelay` and `printable`. A stdio server's stderr is not the terminal's: the server is
started with the write end of a pipe the relay reads, and each line reaches the log (logger
`tether.mcp.stderr`, which the command line shows on stderr) as `mcp <server>: <line>`, made
printable first — escape sequences (colours, cursor moves, titles) and other control characters
removed, a line redrawn with `\\r` reduced to what it finally showed, at most 1,000 characters.
One pipe serves every process the connection starts (a reconnect, a restart); it is closed when
the connection stops and the relay has read what was left. `printable` also cleans a line a
server wrote on stdout that is not JSON-RPC (a start-up banner), which the connection reports in
one line and drops (`wire.WatchedRead`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from typing import IO, Final, TextIO

__all__ = ["StderrRelay", "printable"]

_log = logging.getLogger("tether.mcp.stderr")

_ESCAPES: Final = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks
    r"|\x1b[@-Z\\-_]"  # other two-character escapes
    r"|[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]"  # control characters but tab
)
_LIMIT: Final = 1000
_DRAIN_S: Final = 2.0


def printable(line: str) -> str:
    """`line` as a terminal can show it safely (see the module note)."""
    shown = line.rstrip("\n").rstrip("\r").rsplit("\r", 1)[-1]
    shown = _ESCAPES.sub("", shown).replace("\t", " ").rstrip()
    return shown if len(shown) <= _LIMIT else shown[: _LIMIT - 1] + "…"


class StderrRelay:
    """The stderr of one connection's server processes (see the module note)."""

    def __init__(self, server: str) -> None:
        self._server = server
        read_fd, write_fd = os.pipe()
        os.set_inheritable(write_fd, False)  # the spawn dups it onto the child's fd 2
        self.file: TextIO = os.fdopen(write_fd, "w", encoding="utf-8")
        """What the server's stderr is (the SDK's `errlog`)."""
        self._reader: asyncio.Task[None] = asyncio.get_running_loop().create_task(
            self._relay(os.fdopen(read_fd, "rb", buffering=0)), name=f"mcp {server} stderr"
        )

    async def _relay(self, pipe: IO[bytes]) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 20)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        try:
            while True:
                try:
                    raw = await reader.readuntil(b"\n")
                except asyncio.IncompleteReadError as end:
                    raw = end.partial
                except asyncio.LimitOverrunError as long:
                    raw = await reader.readexactly(long.consumed)
                if not raw:
                    return
                shown = printable(raw.decode("utf-8", "replace"))
                if shown:
                    _log.warning("mcp %s: %s", self._server, shown)
        finally:
            transport.close()

    async def close(self) -> None:
        """Close tether's end and relay what is left (the processes are gone by now); a process
        that escaped and still holds the pipe is not waited for beyond a short drain."""
        self.file.close()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_DRAIN_S):
                await asyncio.shield(self._reader)
        if not self._reader.done():
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
