"""What the user types in `tether chat`: a prompt_toolkit prompt on a terminal, lines otherwise.

Owns: line editing, the persistent per-project history (`$TETHER_HOME/history/<project>.txt`,
Ctrl-R searches it, ↑/↓ recall it), bracketed paste (a pasted block is one message; one of more
than `PASTE_LINES` lines shows as `[Pasted text #K +N lines]` in the line, as in Claude Code,
and is sent whole), newlines
inside a message (Alt-Enter or Ctrl-J; Enter sends), Tab completion of slash commands and `@`
paths, and the Ctrl-C keys at the prompt: with text, Ctrl-C clears the line; on an empty line it
goes to the chat's Ctrl-C policy (`on_interrupt`, the same counter as during a turn): "press
Ctrl-C again to quit", and a second press within 2 s quits.
Ctrl-D on an empty line quits.

Type-ahead: between prompts the terminal would turn Enter into a newline (Ctrl-J) and echo keys
into the agent's output. `PromptInput` therefore clears ICRNL and ECHO on the terminal for the
whole chat (ISIG stays: Ctrl-C is still SIGINT during a turn) and restores the modes on
`close()`. While a turn runs the chat reads the keys itself (`tether.cli.chat.keys`: Esc aborts
the turn) and hands the others to the next prompt (`type_ahead`), where they show up and Enter
sends; `read(default=...)` puts a message back in the line to edit. The approval prompt binds
Esc to the same abort as the chat (leaving the question first, so it is drawn once).

`PromptInput` is used when stdin and stdout are terminals; it imports prompt_toolkit lazily.
`LineInput` reads plain lines (pipes, files, dumb terminals). Both answer `read()` with the text
(None at end of input / quit) and `ask()` with one answer line for the approval prompt.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import sys
import termios
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...kernel import tether_home
from .replay import PASTE_LINES

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.completion import CompleteEvent, Completion
    from prompt_toolkit.document import Document

__all__ = [
    "ChatInput",
    "LineInput",
    "PromptInput",
    "history_path",
    "is_terminal",
    "terminal_alive",
]


class ChatInput(Protocol):
    async def read(self, default: str = "") -> str | None:
        """The next message (None: the user quit or input ended); `default` is put in the line
        to edit, where there is a line editor."""

    async def ask(self, prompt: str) -> str:
        """One answer line ("" at end of input). Ctrl-C calls the interrupt handler."""
        ...


def is_terminal() -> bool:
    """Whether stdin and stdout are both terminals (and TERM is not "dumb")."""
    try:
        tty = sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and os.environ.get("TERM", "") != "dumb"


def terminal_alive() -> bool:
    """Whether stdin is still a working terminal (a closed one fails its ioctls with EIO)."""
    try:
        termios.tcgetattr(sys.stdin.fileno())
    except (OSError, ValueError, termios.error):
        return False
    return True


def history_path(cwd: Path) -> Path:
    """The history file of the project at `cwd` under `$TETHER_HOME/history/`."""
    digest = hashlib.sha256(str(cwd.resolve()).encode("utf-8", "surrogatepass")).hexdigest()
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in cwd.name)[:40] or "root"
    return tether_home() / "history" / f"{name}-{digest[:12]}.txt"


class LineInput:
    """Plain lines from stdin (no editing, no history): a pipe, a file, `/dev/null`. One daemon
    thread reads them for the whole chat (a file or `/dev/null` cannot be watched by the event
    loop), so the prompt and the approval questions share one reader and an abandoned read
    never swallows a later line."""

    def __init__(self, prompt: str = "› ") -> None:
        self._prompt = prompt
        self._queue: asyncio.Queue[str | None] | None = None
        self._ended = False

    def _lines(self) -> asyncio.Queue[str | None]:
        if self._queue is not None:
            return self._queue
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._queue = queue

        def hand_over(line: str | None) -> None:
            with contextlib.suppress(RuntimeError):  # the chat is over: nobody reads
                loop.call_soon_threadsafe(queue.put_nowait, line)

        def read() -> None:
            try:
                for line in sys.stdin:
                    hand_over(line)
            except (OSError, ValueError):  # closed or unreadable: the input has ended
                pass
            hand_over(None)

        threading.Thread(target=read, name="tether-chat-stdin", daemon=True).start()
        return queue

    async def _line(self) -> str:
        """The next line ("" once the input has ended)."""
        if self._ended:
            return ""
        line = await self._lines().get()
        if line is None:
            self._ended = True
            return ""
        return line

    async def read(self, default: str = "") -> str | None:
        while True:
            sys.stdout.write(self._prompt)
            sys.stdout.flush()
            line = await self._line()
            if not line:
                return None
            if line.strip():
                return line.rstrip("\n")

    async def ask(self, prompt: str) -> str:
        sys.stdout.write(prompt)
        sys.stdout.flush()
        return await self._line()


class PromptInput:
    """prompt_toolkit input (see the module note). `on_interrupt` is the Ctrl-C policy, called for
    a Ctrl-C on an empty prompt and while an answer is awaited during a turn (the terminal is in
    raw mode then, so Ctrl-C is a key, not a signal)."""

    def __init__(
        self,
        *,
        cwd: Path,
        commands: Callable[[], Sequence[tuple[str, str]]],
        on_interrupt: Callable[[], None],
        on_escape: Callable[[], None] = lambda: None,
        on_backtab: Callable[[], None] = lambda: None,
        toolbar: Callable[[], str | None] = lambda: None,
        prompt: str = "› ",
    ) -> None:
        self._cwd = cwd
        self._on_backtab = on_backtab
        self._toolbar = toolbar
        self._commands = commands
        self._on_interrupt = on_interrupt
        self._on_escape = on_escape
        self._prompt = prompt
        self._session: PromptSession[str] | None = None
        self._answers: PromptSession[str] | None = None
        self._saved_modes: list[Any] | None = None
        self._typeahead: list[Any] = []
        self._pasted: dict[str, str] = {}
        self._quiet_terminal()  # from the start: keys typed while the agent boots wait too

    @property
    def fd(self) -> int:
        """The terminal the chat reads."""
        return sys.stdin.fileno()

    def type_ahead(self, keys: Sequence[Any]) -> None:
        """Keys (prompt_toolkit `KeyPress`es) typed during a turn, for the next prompt."""
        self._typeahead.extend(keys)

    def _build(self) -> PromptSession[str]:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory

        path = history_path(self._cwd)
        history: Any
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            history = FileHistory(str(path))
        except OSError:
            history = InMemoryHistory()
        return PromptSession(
            history=history,
            completer=_completer(self._commands, self._cwd),
            complete_while_typing=False,
            key_bindings=self._bindings(),
            enable_history_search=False,
            multiline=False,
            prompt_continuation=lambda width, line, soft: "… ".rjust(width),
            erase_when_done=False,
        )

    def _bindings(self) -> Any:
        from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
        from prompt_toolkit.keys import Keys

        kb = KeyBindings()

        @kb.add("escape", "enter")
        @kb.add("c-j")
        def _newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        @kb.add(Keys.BracketedPaste)
        def _paste(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text(self._placeholder(event.data))

        @kb.add("c-c")
        def _ctrl_c(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            if buffer.text:
                buffer.reset()
                return
            from prompt_toolkit.application import run_in_terminal

            run_in_terminal(self._on_interrupt)

        @kb.add("c-d")
        def _ctrl_d(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            if buffer.text:
                buffer.delete()
            else:
                event.app.exit(exception=EOFError())

        @kb.add("s-tab")
        def _shift_tab(event: KeyPressEvent) -> None:
            self._on_backtab()
            if self._session is not None:
                self._session.bottom_toolbar = self._toolbar()
            event.app.invalidate()

        return kb

    def _placeholder(self, data: str) -> str:
        """What a paste puts in the line: itself, or for more than `PASTE_LINES` lines
        `[Pasted text #K +N lines]`, replaced by the pasted text when the line is sent."""
        text = data.replace("\r\n", "\n").replace("\r", "\n")
        lines = len(text.rstrip("\n").splitlines())
        if lines <= PASTE_LINES:
            return text
        token = f"[Pasted text #{len(self._pasted) + 1} +{lines} lines]"
        self._pasted[token] = text
        return token

    def _expanded(self, line: str) -> str:
        for token, text in self._pasted.items():
            line = line.replace(token, text)
        return line

    def _quiet_terminal(self) -> None:
        if self._saved_modes is not None:
            return
        try:
            fd = sys.stdin.fileno()
            saved = termios.tcgetattr(fd)
            modes = termios.tcgetattr(fd)
            modes[0] &= ~termios.ICRNL
            modes[3] &= ~termios.ECHO
            termios.tcsetattr(fd, termios.TCSANOW, modes)
        except (OSError, ValueError, termios.error):
            return
        self._saved_modes = saved

    def close(self) -> None:
        """Restore the terminal modes changed for type-ahead."""
        saved, self._saved_modes = self._saved_modes, None
        if saved is None:
            return
        try:
            termios.tcsetattr(sys.stdin.fileno(), termios.TCSANOW, saved)
        except (OSError, ValueError, termios.error):
            pass

    async def read(self, default: str = "") -> str | None:
        self._quiet_terminal()
        if self._session is None:
            self._session = self._build()
        while True:
            if self._typeahead:
                from prompt_toolkit.input.typeahead import store_typeahead

                store_typeahead(self._session.input, self._typeahead)
                self._typeahead = []
            self._session.bottom_toolbar = self._toolbar()  # the mode, unless default
            try:
                text = await self._session.prompt_async(
                    self._prompt, handle_sigint=False, default=default
                )
            except (EOFError, KeyboardInterrupt):
                return None
            default = ""
            if text.strip():
                return self._expanded(text)

    async def ask(self, prompt: str) -> str:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

        if self._answers is None:
            kb = KeyBindings()

            @kb.add("c-c")
            def _ctrl_c(event: KeyPressEvent) -> None:
                self._on_interrupt()

            @kb.add("escape")
            def _escape(event: KeyPressEvent) -> None:
                # Leave the prompt first (its last drawing done), then abort: aborting while it
                # is drawn prints the notice over it, and the prompt is drawn a second time.
                event.app.exit(exception=_Escaped())

            self._answers = PromptSession(key_bindings=kb)
        try:
            return (await self._answers.prompt_async(prompt, handle_sigint=False)) + "\n"
        except EOFError:
            return ""
        except _Escaped:
            # Aborting the turn aborts the call's signal, whose `cancels()` scope (the approval
            # service's) cancels this task synchronously: the next await raises CancelledError.
            self._on_escape()
            await asyncio.sleep(0)
            return "n\n"  # nothing was running to abort: the answer is no


class _Escaped(Exception):
    """Esc at an approval question (see `PromptInput.ask`)."""


def _completer(commands: Callable[[], Sequence[tuple[str, str]]], cwd: Path) -> Any:
    from prompt_toolkit.completion import Completer, Completion

    class ChatCompleter(Completer):
        def get_completions(
            self, document: Document, complete_event: CompleteEvent
        ) -> Iterable[Completion]:
            before = document.text_before_cursor
            if before.startswith("/") and " " not in before:
                for name, help in commands():
                    if name.startswith(before):
                        yield Completion(name, start_position=-len(before), display_meta=help)
                return
            word = before.split()[-1] if before and not before[-1].isspace() else ""
            if word.startswith("@"):
                for path in path_candidates(cwd, word[1:]):
                    yield Completion("@" + path, start_position=-len(word))

    return ChatCompleter()


def path_candidates(cwd: Path, partial: str, limit: int = 50) -> list[str]:
    """Workspace paths that complete `partial` (directories end with "/"), hidden ones only
    when asked for, sorted; at most `limit`."""
    folder, _, stem = partial.rpartition("/")
    base = cwd / folder if folder else cwd
    try:
        entries = sorted(base.iterdir(), key=lambda p: p.name)
    except OSError:
        return []
    found: list[str] = []
    for entry in entries:
        name = entry.name
        if not name.startswith(stem) or (name.startswith(".") and not stem.startswith(".")):
            continue
        shown = f"{folder}/{name}" if folder else name
        try:
            if entry.is_dir():
                shown += "/"
        except OSError:
            continue
        found.append(shown)
        if len(found) >= limit:
            break
    return found
