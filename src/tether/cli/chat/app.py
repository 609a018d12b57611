"""The `tether chat` session driver: read a message, run a turn, repeat.

Owns: building the chat's parts (input, renderer, approval prompter) and the public `Agent` they
drive (`tether.agent.Agent`, the same one `tether run` and library users get: the chat is its
client — model switches, session switches and compaction are the agent's methods, its events
are what the renderer draws); the loop over messages and slash commands; `@path` attachments;
and the Ctrl-C contract at the prompt (see `input`) and during turns and compactions
(`Interrupts`: the first Ctrl-C aborts, the second quits). Returns the exit code.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from ...agent.api import Agent
from ...agent.compaction import DEFAULT_CONTEXT_WINDOW
from ...core.signals import AbortController
from ..approval import TerminalPrompter
from ..session import Interrupts, exit_code, notice, open_agent
from .commands import COMMANDS, run_command
from .input import ChatInput, LineInput, PromptInput, is_terminal
from .mentions import attach_mentions
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
    """What `tether chat` was asked for on its command line."""

    cwd: Path
    config: Path | None = None
    model: str | None = None
    resume: str | None = None
    yolo: bool = False
    allow: tuple[str, ...] = ()
    sandbox: str | None = None
    context_window: int = DEFAULT_CONTEXT_WINDOW
    show_reasoning: bool = False


async def run_chat(options: ChatOptions) -> int:
    """Run one chat to its exit code: 2 when the agent cannot start (one line on stderr)."""
    async with AsyncExitStack() as stack:
        app = ChatApp(options, stack)
        agent = await open_agent(
            stack,
            cwd=options.cwd,
            config=options.config,
            model=options.model,
            resume=options.resume,
            on_event=app.renderer,
            yolo=options.yolo,
            allow=options.allow,
            approver=app.prompter,
            context_window=options.context_window,
            sandbox=options.sandbox,
        )
        if agent is None:
            return 2
        app.interrupts.install()
        stack.callback(app.interrupts.uninstall)
        for line in agent.session.repair.describe() if agent.session.repair else ():
            notice(f"repaired the session log: {line}")
        return await app.run(agent)


class ChatApp:
    """One chat: see the module note. `agent` is set by `run`."""

    agent: Agent

    def __init__(self, options: ChatOptions, stack: AsyncExitStack) -> None:
        self.cwd = options.cwd
        self.interrupts = Interrupts(notice)
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
        if terminal and not editing:
            notice("line editing needs prompt_toolkit: pip install 'tether[chat]'")
        if editing:
            prompt_input = PromptInput(
                cwd=options.cwd, commands=COMMANDS, on_interrupt=self.interrupts.press
            )
            stack.callback(prompt_input.close)
            self.input = prompt_input
        else:
            self.input = LineInput()
        self.prompter = TerminalPrompter(
            self.input.ask,
            self.console,
            cwd=options.cwd,
            pause=self.renderer.paused,
            on_wait=self.renderer.waited,
        )

    # -- what slash commands use -------------------------------------------------------------

    async def compact(self, focus: str | None) -> None:
        """`/compact [focus]`: summarise into a new session (Ctrl-C aborts it)."""
        if not self.agent.session.messages():
            self.console.print("[dim]nothing to compact yet[/dim]")
            return
        controller = AbortController()
        self.interrupts.arm(controller)
        try:
            await self.agent.compact(signal=controller.signal, focus=focus)
        finally:
            self.interrupts.arm(None)
            self.renderer.end_turn()

    # -- the loop --------------------------------------------------------------------------------

    async def run(self, agent: Agent) -> int:
        self.agent = agent
        self.console.print(
            f"[bold]tether chat[/bold] · session {agent.session_id} · model "
            f"{escape(agent.llm.model)}\n[dim]Ctrl-C aborts a turn, twice quits; /help lists "
            "commands; @path attaches a file.[/dim]",
            highlight=False,
        )
        try:
            while True:
                self.interrupts.arm(None)
                line = await self.input.read()
                if line is None:
                    break
                text = line.strip()
                if text.startswith("/") and not text.startswith("//"):
                    if not await run_command(self, text):
                        break
                    continue
                if text.startswith("//"):
                    line = line.lstrip()[1:]
                await self._turn(line)
        except asyncio.CancelledError:
            notice("quit; the session log is closed and balanced")
            return 130
        return 0

    async def _turn(self, line: str) -> None:
        agent = self.agent
        controller = AbortController()
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
        try:
            result = await agent.run(message, signal=controller.signal)
        finally:
            self.renderer.end_turn()
        outcome = result.outcome
        if outcome.kind == "aborted":
            notice("turn aborted; tool outcomes are recorded")
        elif not outcome.completed:
            exit_code(outcome)  # says how the turn ended; the chat goes on
