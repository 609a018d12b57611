"""How a process that runs tool calls ends: a terminating signal (or the end of the input that
carries its conversation) becomes the abort of its work, and a second one ends it at once.

Owns: `Ended`, the abort reason (which signal, the cause a turn records, the exit status
`128 + N`); `ProcessEnding`, which turns SIGINT, SIGTERM, SIGHUP and SIGQUIT on the running event
loop into that abort — the first aborts `ending.signal` with an `Ended`, any later one (or a
later `end()`) ends the process at once with its status (`exit_now`); and `exit_now` itself.
Every `tether` command and a host application of `tether.agent.Agent` use it the same way: fuse
`ending.signal` into the signal of the work (`AbortSignal.any(turn, ending.signal)`), let the
work drain (every started call awaited, its `ABORTED` result published and recorded), then exit
with `ending.reason.exit_code`. Does not own what a command prints, nor the drain itself.

Why an immediate exit leaves nothing running: a contained command runs in a PID namespace
whose bwrap dies with tether (`--die-with-parent`), and the kernel then kills the namespace; an
uncontained one (no namespaces on the machine) is in the orphan ledger, which the next tether
sweeps (`tether.plugins.shell`).

A hung-up terminal (SIGHUP) cannot be written to any more (EIO): the standard streams that are
character devices are pointed at /dev/null before the abort, so the drain's output cannot fail.
One hang-up is often reported more than once — the shell forwards SIGHUP to its jobs, the kernel
sends the foreground group another when the shell exits, a read of the terminal fails with EIO
(`hang_up()`) — so a SIGHUP after a hang-up is the same event, never the second signal.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal as os_signal
import stat
import sys
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Final, NoReturn

from .json import JsonValue
from .signals import AbortController, AbortError, AbortSignal

__all__ = ["ENDING_SIGNALS", "INPUT_CLOSED_STATUS", "Ended", "ProcessEnding", "exit_now"]

ENDING_SIGNALS: Final[tuple[os_signal.Signals, ...]] = (
    os_signal.SIGINT,
    os_signal.SIGTERM,
    os_signal.SIGHUP,
    os_signal.SIGQUIT,
)
"""The signals that end a tether process (Ctrl-C, `kill`/`docker stop`/`systemctl stop`,
a closed terminal, Ctrl-\\)."""

INPUT_CLOSED_STATUS: Final = 1
"""The exit status of a process whose conversation input ended under a running turn."""


class Ended(AbortError):
    """The abort reason of work stopped because its process is ending: by the signal `signum`,
    or (`signum` None) because the input that carried the conversation reached its end."""

    signum: int | None

    def __init__(self, signum: int | None = None) -> None:
        self.signum = signum
        what = "the input ended" if signum is None else f"tether got {_name(signum)}"
        super().__init__(None, what)

    @property
    def name(self) -> str:
        """`SIGTERM`, `SIGHUP`, ... or `input-closed`."""
        return "input-closed" if self.signum is None else _name(self.signum)

    @property
    def exit_code(self) -> int:
        """`128 + N` for signal N (143 SIGTERM, 129 SIGHUP, 131 SIGQUIT, 130 SIGINT);
        `INPUT_CLOSED_STATUS` for the input's end."""
        return INPUT_CLOSED_STATUS if self.signum is None else 128 + self.signum

    @property
    def cause(self) -> dict[str, JsonValue]:
        """What an aborted turn records as its reason: `{"kind": "signal", "signal":
        "SIGTERM"}`, or `{"kind": "input-closed"}`."""
        if self.signum is None:
            return {"kind": "input-closed"}
        return {"kind": "signal", "signal": self.name}


def _name(signum: int) -> str:
    try:
        return os_signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def exit_now(code: int) -> NoReturn:
    """End the process at once with `code`: the standard streams flushed, nothing else run
    (the way `tether.cli.app.run` ends every command, without waiting for anything)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _silence_terminal() -> None:
    """Point each standard stream that is a character device (the hung-up terminal) at
    /dev/null, so writing to it neither fails (EIO) nor blocks."""
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in (0, 1, 2):
            with contextlib.suppress(OSError):
                if stat.S_ISCHR(os.fstat(fd).st_mode):
                    os.dup2(devnull, fd)
    finally:
        os.close(devnull)


class ProcessEnding:
    """The ending of this process: install on the running loop (`with ProcessEnding() as
    ending:`), fuse `signal` into the work, and exit with `reason.exit_code` once it drained.

    The first of `signals` (or `end()`) aborts `signal` with an `Ended` and calls `on_end`; any
    later one calls `exit_now(code)` of that signal — by default the process ends at once. The
    handlers are the loop's (`loop.add_signal_handler`); leaving the block removes them (the
    default action returns)."""

    def __init__(
        self,
        signals: Sequence[int] = ENDING_SIGNALS,
        *,
        on_end: Callable[[Ended], None] | None = None,
        exit: Callable[[int], object] = exit_now,
    ) -> None:
        self._signals = tuple(signals)
        self._on_end = on_end
        self._exit = exit
        self._controller = AbortController()
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def signal(self) -> AbortSignal:
        """Aborted, with an `Ended`, when the process began to end."""
        return self._controller.signal

    @property
    def reason(self) -> Ended | None:
        """Why the process is ending; None while it is not."""
        reason = self._controller.signal.reason
        return reason if isinstance(reason, Ended) else None

    def exit_code(self, otherwise: int) -> int:
        """The ending's exit status, or `otherwise` when the process is not ending."""
        reason = self.reason
        return otherwise if reason is None else reason.exit_code

    def install(self) -> None:
        """Handle `signals` on the running loop (idempotent)."""
        if self._loop is not None:
            return
        loop = asyncio.get_running_loop()
        for signum in self._signals:
            loop.add_signal_handler(signum, self._received, signum)
        self._loop = loop

    def uninstall(self) -> None:
        """Give `signals` back their default action (idempotent)."""
        loop, self._loop = self._loop, None
        if loop is None or loop.is_closed():
            return
        for signum in self._signals:
            with contextlib.suppress(RuntimeError, ValueError):
                loop.remove_signal_handler(signum)

    def end(self, reason: Ended) -> None:
        """Begin to end (abort `signal` with `reason`), or, when already ending, exit now with
        `reason.exit_code`. The input-at-EOF path of a command calls this as a signal does."""
        if self._controller.signal.aborted:
            self._exit(reason.exit_code)
            return
        self._controller.abort(reason)
        if self._on_end is not None:
            self._on_end(reason)

    def hang_up(self) -> None:
        """The terminal is gone (a read of it failed with EIO or met its end): as SIGHUP."""
        self._received(os_signal.SIGHUP)

    def _received(self, signum: int) -> None:
        if signum == os_signal.SIGHUP:
            reason = self.reason
            if reason is not None and reason.signum == os_signal.SIGHUP:
                return  # one hang-up, reported again (the shell's SIGHUP, the kernel's, EIO)
            if reason is None:
                _silence_terminal()
        self.end(Ended(signum))

    def __enter__(self) -> ProcessEnding:
        self.install()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.uninstall()
