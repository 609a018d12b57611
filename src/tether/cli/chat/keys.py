"""The keys typed while a chat turn runs: Esc interrupts the turn, the rest is type-ahead.

Owns `TurnKeys`. While a turn runs (`watching`), the terminal is put in cbreak mode — no line
buffering and no echo, but Ctrl-C stays a signal (ISIG) — and every key is read as it is typed,
through prompt_toolkit's own VT100 parser. A lone Esc (nothing follows it for 50 ms, as
prompt_toolkit decides at its prompt; an Alt-key or an arrow starts with the same byte) calls
`on_escape`: the chat aborts the turn, as Claude Code does. Every other key is kept, in order, and
handed to the next prompt (`take`), so what was typed during a turn is waiting there, Enter
included. An approval prompt in the middle of a turn reads the terminal itself: `paused` stops
the reader meanwhile (the keys kept so far stay kept, and are never given to that prompt, so a
word typed ahead cannot answer a question it was not meant for).

Only on a terminal with prompt_toolkit (`PromptInput`); imports prompt_toolkit lazily.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import termios
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from prompt_toolkit.key_binding import KeyPress

__all__ = ["TurnKeys"]

_ESCAPE_WAIT_S: Final = 0.05
"""How long a lone Esc waits for the rest of an escape sequence (prompt_toolkit's `ttimeoutlen`
is 0.5 s for key bindings; 50 ms is what its input flush uses)."""


class TurnKeys:
    """See the module note. `fd` is the terminal (stdin); `on_closed` is called when reading it
    fails or meets its end (the terminal was closed)."""

    def __init__(self, fd: int, *, on_closed: Callable[[], None] | None = None) -> None:
        self._fd = fd
        self._on_closed = on_closed
        self._kept: list[KeyPress] = []
        self._on_escape: Callable[[], None] | None = None
        self._parser: Any = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._flush: asyncio.TimerHandle | None = None
        self._saved_mode: list[Any] | None = None
        self._reading = False
        self._flushing = False

    @contextmanager
    def watching(self, on_escape: Callable[[], None]) -> Iterator[None]:
        """Read keys until the block ends; a lone Esc calls `on_escape`."""
        self._on_escape = on_escape
        self._start()
        try:
            yield
        finally:
            self._stop()
            self._on_escape = None

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Let someone else read the terminal (an approval prompt) until the block ends."""
        was_reading = self._reading
        self._stop()
        try:
            yield
        finally:
            if was_reading and self._on_escape is not None:
                self._start()

    def take(self) -> list[KeyPress]:
        """The keys kept since the last `take`, in the order they were typed."""
        kept, self._kept = self._kept, []
        return kept

    # -- reading ---------------------------------------------------------------------------------

    def _start(self) -> None:
        if self._reading:
            return
        try:
            from prompt_toolkit.input.vt100_parser import Vt100Parser

            saved = termios.tcgetattr(self._fd)
            mode = termios.tcgetattr(self._fd)
            mode[3] &= ~(termios.ICANON | termios.ECHO)
            mode[6][termios.VMIN] = 1
            mode[6][termios.VTIME] = 0
            termios.tcsetattr(self._fd, termios.TCSANOW, mode)
        except (ImportError, OSError, ValueError, termios.error):
            return
        self._saved_mode = saved
        if self._parser is None:
            self._parser = Vt100Parser(self._deliver)
        asyncio.get_running_loop().add_reader(self._fd, self._readable)
        self._reading = True

    def _stop(self) -> None:
        if not self._reading:
            return
        self._reading = False
        asyncio.get_running_loop().remove_reader(self._fd)
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        saved, self._saved_mode = self._saved_mode, None
        if saved is not None:
            try:
                termios.tcsetattr(self._fd, termios.TCSANOW, saved)
            except (OSError, ValueError, termios.error):
                pass

    def _readable(self) -> None:
        try:
            data = os.read(self._fd, 1024)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:  # EIO: the terminal was closed
            self._closed()
            return
        if not data:  # a terminal in this mode ends only when it is closed
            self._closed()
            return
        self._parser.feed(self._decoder.decode(data))
        if self._flush is not None:
            self._flush.cancel()
        self._flush = asyncio.get_running_loop().call_later(_ESCAPE_WAIT_S, self._timeout)

    def _closed(self) -> None:
        self._stop()
        if self._on_closed is not None:
            self._on_closed()

    def _timeout(self) -> None:
        """Nothing followed: what the parser still holds is complete (a lone Esc)."""
        self._flush = None
        self._flushing = True
        try:
            self._parser.flush()
        finally:
            self._flushing = False

    def _deliver(self, press: KeyPress) -> None:
        if self._flushing and _is_escape(press) and self._on_escape is not None:
            self._on_escape()
            return
        self._kept.append(press)


def _is_escape(press: KeyPress) -> bool:
    from prompt_toolkit.keys import Keys

    return press.key == Keys.Escape
