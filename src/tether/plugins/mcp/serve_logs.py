"""`tether mcp serve`'s logging capability: tether's log records as MCP log notifications.

Owns `LogRelay`. A client's `logging/setLevel` records the level for that client's session; from
then on every record of tether's loggers (`tether.*`) at or above it is sent to that session as
`notifications/message` (`level`, `logger` = the record's logger name, `data` = the formatted
message). Before a `setLevel` a session gets no log notifications. Python levels map to MCP's
syslog levels (DEBUG→debug, INFO→info, WARNING→warning, ERROR→error, CRITICAL→critical). While a
client asks for a level below what tether's loggers let through, the `tether` logger is lowered to
it (what reaches stderr is unchanged: stderr's handler stays at WARNING); `close` restores it. A
session whose send fails is dropped. Nothing is ever logged from here (no feedback loop). Imports
the `mcp` SDK's types only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Final

import mcp_types as types
from mcp.server.context import ServerRequestContext

__all__ = ["MCP_LEVELS", "LogRelay", "mcp_level"]

MCP_LEVELS: Final[tuple[types.LoggingLevel, ...]] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
_PYTHON_LEVEL: Final[dict[str, int]] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL + 5,
    "emergency": logging.CRITICAL + 10,
}


def mcp_level(levelno: int) -> types.LoggingLevel:
    """The MCP level of a Python level: the highest MCP level at or below it."""
    chosen: types.LoggingLevel = "debug"
    for level in MCP_LEVELS:
        if _PYTHON_LEVEL[level] <= levelno:
            chosen = level
    return chosen


class LogRelay(logging.Handler):
    """Installed on the `tether` logger while serving; relays records to the sessions that asked."""

    def __init__(self) -> None:
        super().__init__(level=logging.NOTSET)
        self._loop = asyncio.get_running_loop()
        self._levels: dict[Any, types.LoggingLevel] = {}  # session -> its level
        self._sending: set[asyncio.Task[None]] = set()
        self._logger = logging.getLogger("tether")
        self._saved_level = self._logger.level
        self._stderr: logging.Handler | None = None
        if not _has_handlers(self._logger) and logging.lastResort is not None:
            # A handler here would otherwise switch off Python's last-resort stderr output.
            self._stderr = logging.lastResort
            self._logger.addHandler(self._stderr)
        self._logger.addHandler(self)

    async def set_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """The `logging/setLevel` handler."""
        self._levels[ctx.session] = params.level
        lowest = min(_PYTHON_LEVEL[level] for level in self._levels.values())
        if lowest < self._logger.getEffectiveLevel():
            self._logger.setLevel(lowest)
        return types.EmptyResult()

    def emit(self, record: logging.LogRecord) -> None:
        if not self._levels:
            return
        level = mcp_level(record.levelno)
        try:
            data = record.getMessage()
        except Exception:
            return
        for session, wanted in list(self._levels.items()):
            if MCP_LEVELS.index(level) >= MCP_LEVELS.index(wanted):
                self._loop.call_soon_threadsafe(self._send, session, level, data, record.name)

    def _send(self, session: Any, level: types.LoggingLevel, data: str, name: str) -> None:
        task = self._loop.create_task(self._deliver(session, level, data, name))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _deliver(self, session: Any, level: types.LoggingLevel, data: str, name: str) -> None:
        try:
            await session.send_log_message(level=level, data=data, logger=name)
        except Exception:  # the session is gone: stop sending to it
            self._levels.pop(session, None)

    async def close_relay(self) -> None:
        """Stop relaying; restore the `tether` logger; wait for the sends in flight."""
        self._logger.removeHandler(self)
        if self._stderr is not None:
            self._logger.removeHandler(self._stderr)
        self._logger.setLevel(self._saved_level)
        self._levels.clear()
        for task in list(self._sending):
            with contextlib.suppress(BaseException):
                await task


def _has_handlers(logger: logging.Logger) -> bool:
    current: logging.Logger | None = logger
    while current is not None:
        if current.handlers:
            return True
        current = current.parent if current.propagate else None
    return False
