"""The `tether chat` session driver: read a message, run a turn, repeat.

Owns: building the chat's parts (input, renderer, approval prompter, the key reader of a turn)
and the public `Agent` they drive (`tether.agent.Agent`, the same one `tether run` and library
users get: the chat is its client — model switches, session switches and compaction are the
agent's methods, its events are what the renderer draws); which session it opens (`--continue`:
the latest of this workspace; `--resume ID`; `--resume` alone: a picker) and showing a resumed
session's earlier conversation; the loop over lines — a message, a slash command (built-in or
custom, `tether.cli.chat.custom`), or `!command` (bash mode, `tether.cli.chat.bashmode`);
`@path` attachments, and a mention of a file that does not exist, which is not sent but put back
in the input to fix; and the interrupt contract: Esc aborts a running turn (`keys`), the first
Ctrl-C aborts it too, a second quits (`Interrupts`; at the prompt see `input`); SIGTERM, SIGHUP
(a closed terminal) and SIGQUIT abort the running turn with the signal as its cause and end the
chat with 128 + N (`tether.core.ending`; a second signal exits at once).

Without a terminal, stdin is read as one message per line (a script, a pipe, a file) and end of
input ends the chat; an input that ends before any line (`tether chat </dev/null`) is refused
with exit code 2 and one line saying what `tether chat` reads — the session is left empty — since
a chat with no message is a mistake, and `tether run` is the command for one task.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from ...agent.api import Agent
from ...agent.claude_options import ClaudeOptions
from ...agent.compaction import DEFAULT_CONTEXT_WINDOW
from ...agent.events import result_text
from ...agent.messages import UserMessage
from ...agent.session import SessionStore
from ...core.ending import ProcessEnding
from ...core.signals import AbortController
from ...kernel import Context
from ...plugins.permissions import Permissions
from ...tools.results import ToolFailure, user_message
from ..approval import TerminalPrompter
from ..session import (
    CHAT_ENDING_SIGNALS,
    Interrupts,
    exit_code,
    latest_session,
    notice,
    open_agent,
    workspace_sessions,
)
from .bashmode import run_shell_line
from .commands import COMMANDS, run_command
from .custom import CustomCommand, Loaded, expand, load_commands
from .idle import idle_delay, idle_notice
from .input import ChatInput, LineInput, PromptInput, is_terminal, terminal_alive
from .keys import TurnKeys
from .mentions import attach_mentions, missing_mentions
from .modes import current_mode, cycle_mode, mode_label
from .replay import replay
from .status import ChatRenderer

__all__ = ["ChatApp", "ChatOptions", "context_window_from_env", "run_chat"]


def context_window_from_env(value: int | None) -> int:
    """The context window: `--context-window`, else `$TETHER_CONTEXT_WINDOW`, else 128 000.
    Raises ValueError for a value that is not a positive integer."""
    if value is None:
        raw = os.environ.get("TETHER_CONTEXT_WINDOW", "").strip()
        if not raw:
            return DEFAULT_CONTEXT_WINDOW
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(
                f"TETHER_CONTEXT_WINDOW must be a positive integer (tokens), got {raw!r}"
            ) from None
    if value < 1:
        raise ValueError(f"--context-window must be a positive integer (tokens), got {value}")
    return value


@dataclass(frozen=True, slots=True)
class ChatOptions:
    """What `tether chat` was asked for on its command line. `resume` True: pick one."""

    cwd: Path
    config: Path | None = None
    model: str | None = None
    resume: str | bool | None = None
    continue_: bool = False
    yolo: bool = False
    allow: tuple[str, ...] = ()
    sandbox: str | None = None
    context_window: int = DEFAULT_CONTEXT_WINDOW
    show_reasoning: bool = False
    prompt: str | None = None
    """The first message, sent before the first prompt (`tether "prompt"`)."""
    instructions: str | None = None
    max_steps: int | None = None
    permission_mode: str | None = None
    claude_options: ClaudeOptions | None = None


async def _session_to_open(options: ChatOptions) -> tuple[str | None, int | None]:
    """The session id to resume (None: a new one), or the exit code when there is none to
    open (with the line on stderr)."""
    if options.continue_ and options.resume not in (None, False):
        notice("--continue and --resume cannot be combined; pick one")
        return None, 2
    store = SessionStore()
    if options.continue_:
        found = latest_session(store, options.cwd)
        if found is None:
            notice(f"--continue: no session to continue in {options.cwd}; start one: tether chat")
            return None, 2
        return found, None
    if options.resume is True:
        sessions = workspace_sessions(store, options.cwd)
        if not sessions:
            notice(f"--resume: no session to resume in {options.cwd}; start one: tether chat")
            return None, 2
        if not is_terminal() or importlib.util.find_spec("prompt_toolkit") is None:
            notice(
                "--resume without an id needs a terminal to pick on; pass the id "
                "(tether sessions list shows them) or use --continue for the latest"
            )
            return None, 2
        from .picker import pick_session

        picked = await pick_session(sessions)
        if picked is None:
            notice("no session chosen")
            return None, 0
        return picked, None
    return (options.resume if isinstance(options.resume, str) else None), None


async def run_chat(options: ChatOptions) -> int:
    """Run one chat to its exit code: 2 when the agent cannot start (one line on stderr)."""
    resume, code = await _session_to_open(options)
    if code is not None:
        return code
    async with AsyncExitStack() as stack:
        app = ChatApp(options, stack)
        agent = await open_agent(
            stack,
            cwd=options.cwd,
            config=options.config,
            model=options.model,
            resume=resume,
            on_event=app.renderer,
            yolo=options.yolo,
            allow=options.allow,
            approver=app.prompter,
            context_window=options.context_window,
            sandbox=options.sandbox,
            instructions=options.instructions,
            max_steps=options.max_steps,
            permission_mode=options.permission_mode,
            claude_options=options.claude_options,
        )
        if agent is None:
            return 2
        app.interrupts.install()
        stack.callback(app.interrupts.uninstall)
        app.ending = stack.enter_context(
            ProcessEnding(CHAT_ENDING_SIGNALS, on_end=app.interrupts.end)
        )
        for line in agent.session.repair.describe() if agent.session.repair else ():
            notice(f"repaired the session log: {line}")
        return await app.run(agent, resumed=resume is not None)


class ChatApp:
    """One chat: see the module note. `agent` is set by `run`."""

    agent: Agent

    def __init__(self, options: ChatOptions, stack: AsyncExitStack) -> None:
        self.cwd = options.cwd
        self.config = options.config
        self._first_prompt = options.prompt
        self.interrupts = Interrupts(notice)
        self.ending = ProcessEnding(CHAT_ENDING_SIGNALS)  # installed by `run_chat`
        terminal = is_terminal()
        editing = terminal and importlib.util.find_spec("prompt_toolkit") is not None
        self.console = Console(file=sys.stdout, highlight=False)
        self.renderer = ChatRenderer(
            self.console,
            live=terminal and self.console.is_terminal,
            show_reasoning=options.show_reasoning,
            cwd=options.cwd,
        )
        self.input: ChatInput
        self._prompt_input: PromptInput | None = None
        self._keys: TurnKeys | None = None
        if terminal and not editing:
            notice("line editing needs prompt_toolkit: pip install 'tether[chat]'")
        if editing:
            prompt_input = PromptInput(
                cwd=options.cwd,
                commands=self.command_table,
                on_interrupt=self.interrupts.press,
                on_escape=self.interrupts.escape,
                on_backtab=self.cycle_mode,
                toolbar=self.mode_line,
            )
            stack.callback(prompt_input.close)
            self.input = self._prompt_input = prompt_input
            self._keys = TurnKeys(
                prompt_input.fd, on_closed=self._hung_up, on_backtab=self.cycle_mode
            )
        else:
            self.input = LineInput()
        self.renderer.mode_line = self.mode_line
        self.prompter = TerminalPrompter(
            self.input.ask,
            self.console,
            cwd=options.cwd,
            pause=self._paused,
            on_wait=self.renderer.waited,
        )
        self._prefill = ""
        self._read_any = False
        self._terminal = terminal
        self._idle_after = idle_delay()
        self._answered = False
        """Whether a turn has run: the prompt's idle notification waits for an answer."""

    # -- what slash commands use -------------------------------------------------------------

    async def compact(self, focus: str | None) -> None:
        """`/compact [focus]`: summarise into a new session (Esc or Ctrl-C aborts it)."""
        if not self.agent.session.messages():
            self.console.print("[dim]nothing to compact yet[/dim]")
            return
        controller = AbortController()
        self.interrupts.arm(controller)
        try:
            with self._watching():
                await self.agent.compact(signal=controller.signal, focus=focus)
        finally:
            self.interrupts.arm(None)
            self.renderer.end_turn()

    def custom_commands(self) -> Loaded:
        """The custom commands of the workspace and of `~/.claude/commands`, read now."""
        reserved = frozenset(name.lstrip("/") for name, _ in COMMANDS) | {"quit"}
        return load_commands(self.cwd, Path.home(), reserved=reserved)

    def command_table(self) -> Sequence[tuple[str, str]]:
        """Every `/command` with its help, built-ins first (Tab completion, `/help`)."""
        custom = self.custom_commands().commands
        return [*COMMANDS, *((f"/{name}", c.help) for name, c in sorted(custom.items()))]

    def show_history(self) -> None:
        """Print the current session's earlier conversation (`/resume`)."""
        replay(self.console, self.agent.session)

    async def send(self, prompt: str, *, typed: str) -> None:
        """Run a turn with `prompt`, recorded as the user typed it (`/init`)."""
        await self._turn(prompt, typed=typed)

    # -- the loop --------------------------------------------------------------------------------

    def _context(self) -> Context | None:
        agent = getattr(self, "agent", None)
        return agent.context if agent is not None and agent.started else None

    def cycle_mode(self) -> None:
        """Shift+Tab: the next permission mode (default → acceptEdits → plan → default)."""
        cycle_mode(self._context())

    def mode_line(self) -> str | None:
        """The permission mode as the prompt's toolbar and the live status show it (None in the
        default mode)."""
        return mode_label(current_mode(self._context()))

    async def run(self, agent: Agent, *, resumed: bool = False) -> int:
        self.agent = agent
        self.console.print(
            f"[bold]tether chat[/bold] · session {agent.session_id} · model "
            f"{escape(agent.llm.model)}\n[dim]Esc or Ctrl-C aborts a turn, Ctrl-C twice quits; "
            "/help lists commands; @path attaches a file; !command runs it in the shell.[/dim]",
            highlight=False,
        )
        if resumed:
            self.show_history()
        try:
            first, self._first_prompt = self._first_prompt, None
            if first is not None and first.strip():
                self._read_any = True
                if not await self._line(first):
                    return self.ending.exit_code(0)
            while self.ending.reason is None:
                self.interrupts.arm(None)
                prefill, self._prefill = self._prefill, ""
                async with idle_notice(agent, self._idle_after if self._answered else None):
                    line = await self.input.read(prefill)
                if line is None:
                    if self._terminal and not terminal_alive():
                        self._hung_up()  # EOF or EIO at the prompt: the terminal was closed
                        break
                    await self._left_at_prompt()
                    break
                self._read_any = True
                if not await self._line(line):
                    await self._left_at_prompt()
                    break
        except asyncio.CancelledError:
            notice("quit; the session log is closed and balanced")
            return self.ending.exit_code(130)
        if self.ending.reason is not None:
            notice("quit; the session log is closed and balanced")
            return self.ending.exit_code(130)
        if not self._read_any and not self._terminal:
            notice(
                "stdin ended before any message: without a terminal, tether chat reads one "
                'message per line (for one task, use tether run "...")'
            )
            return 2
        return 0

    async def _left_at_prompt(self) -> None:
        """The user ended the chat at the prompt (Ctrl-D, `/exit`): SessionEnd says
        `prompt_input_exit`, as in Claude Code (a signal or a closed terminal: "other")."""
        if self.ending.reason is None:
            await self.agent.end_session("prompt_input_exit")

    async def _line(self, line: str) -> bool:
        """Act on one line; False when the chat should end."""
        text = line.strip()
        if text.startswith("!"):
            await self._shell(text[1:].strip())
            return True
        if text.startswith("/") and not text.startswith("//"):
            name, _, arguments = text.partition(" ")
            custom = self.custom_commands().commands.get(name[1:])
            if name not in dict(COMMANDS) and custom is not None:
                await self._custom(custom, arguments.strip())
                return True
            return await run_command(self, text)
        if text.startswith("//"):
            line = line.lstrip()[1:]
        await self._turn(line)
        return True

    async def _turn(
        self, line: str, *, controller: AbortController | None = None, typed: str | None = None
    ) -> None:
        """Send `line` as a turn; `typed`: what the user typed when it is not `line` (a slash
        command), recorded with the message so the resume replay shows it."""
        agent = self.agent
        missing = missing_mentions(line, self.cwd)
        if missing:
            for path in missing:
                self.console.print(
                    f"[red]✗ @{escape(path)}[/red] [dim]no such file in {escape(str(self.cwd))}"
                    "[/dim]",
                    highlight=False,
                )
            self.console.print(
                "[dim]not sent: fix the path and press Enter (write \\@ to send an @ as "
                "text)[/dim]",
                highlight=False,
            )
            self._prefill = line
            return
        controller = controller or AbortController()
        self.interrupts.arm(controller)
        message, attachments = await attach_mentions(
            line, cwd=self.cwd, agent=agent, signal=controller.signal
        )
        for attached in attachments:
            if attached.content is None:
                self.console.print(
                    f"[red]✗ @{escape(attached.path)}[/red] [dim]{escape(attached.error or '')}"
                    "[/dim]",
                    highlight=False,
                )
            else:
                numbered = sum(1 for x in attached.content.splitlines() if x[:1].isdigit())
                lines = numbered or attached.content.count("\n") + 1
                self.console.print(
                    f"[dim]attached @{escape(attached.path)} ({lines} lines)[/dim]",
                    highlight=False,
                )
        if controller.signal.aborted:
            notice("turn aborted; tool outcomes are recorded")
            return
        sent: str | UserMessage = message
        if typed is not None:
            sent = user_message(message, {"kind": "user", "form": "command", "typed": typed})
        try:
            with self._watching():
                result = await agent.run(sent, signal=controller.signal)
        finally:
            self.renderer.end_turn()
            self._answered = True
        outcome = result.outcome
        if outcome.kind == "aborted":
            notice("turn aborted; tool outcomes are recorded")
        elif not outcome.completed:
            exit_code(outcome)  # says how the turn ended; the chat goes on

    async def _shell(self, command: str) -> None:
        """`!command`: bash mode."""
        if not command:
            self.console.print("[dim]!command runs the command in the shell[/dim]")
            return
        controller = AbortController()
        self.interrupts.arm(controller)
        with self._watching():
            await run_shell_line(
                self.agent, command, console=self.console, signal=controller.signal
            )

    async def _custom(self, command: CustomCommand, arguments: str) -> None:
        """A custom slash command: expand it (its `!` commands run with its `allowed-tools`
        allowed), then send the prompt as a turn, with its `model` if it names one."""
        agent = self.agent
        controller = AbortController()
        self.interrupts.arm(controller)
        permissions = agent.context.get("permissions")
        remove = None
        if command.allowed_tools and isinstance(permissions, Permissions):
            try:
                remove = permissions.allow_temporarily(command.allowed_tools)
            except ValueError as exc:
                self.console.print(
                    f"[yellow]/{escape(command.name)}: allowed-tools ignored: "
                    f"{escape(str(exc))}[/yellow]",
                    highlight=False,
                )
        previous = agent.llm
        try:
            if command.model is not None:
                await agent.set_model(command.model)

            async def run(shell_command: str) -> str:
                result = await agent.call_tool(
                    "bash",
                    {"command": shell_command, "description": f"/{command.name}"},
                    signal=controller.signal,
                )
                failed = isinstance(result, ToolFailure)
                mark = "[red]✗" if failed else "[green]✓"
                self.console.print(f"{mark} ! {escape(shell_command)}[/]", highlight=False)
                return result_text(result).rstrip("\n")

            with self._watching():
                expansion = await expand(command, arguments, run)
            if controller.signal.aborted:
                notice(f"/{command.name} aborted")
                return
            typed = f"/{command.name} {arguments}".rstrip()
            await self._turn(expansion.prompt, controller=controller, typed=typed)
        finally:
            if remove is not None:
                remove()
            if command.model is not None:
                await agent.set_model(previous)

    # -- keys and prompts during a turn ----------------------------------------------------------

    @contextmanager
    def _watching(self) -> Iterator[None]:
        """Esc aborts what runs now; other keys wait for the next prompt."""
        keys = self._keys
        if keys is None:
            yield
            return
        try:
            with keys.watching(self.interrupts.escape):
                yield
        finally:
            if self._prompt_input is not None:
                self._prompt_input.type_ahead(keys.take())

    def _hung_up(self) -> None:
        """The terminal was closed (its reads fail): end the chat as SIGHUP does."""
        self.ending.hang_up()

    @contextmanager
    def _paused(self) -> Iterator[None]:
        """An approval prompt owns the terminal: no live status, no key reader."""
        with self.renderer.paused():
            if self._keys is None:
                yield
            else:
                with self._keys.paused():
                    yield
