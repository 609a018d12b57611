"""The `tether chat` session driver: read a message, run a turn, repeat.

Owns: wiring input, renderer, approval prompter and slash commands to a `Runner`; switching the
runner's session (`/clear`, `/resume`, compaction); auto-compaction before a turn whose request
would not fit the context window (minus a reserve), and, when the model still answers
`CONTEXT_WINDOW_EXCEEDED`, compaction and one more try of the same message; `@path`
attachments; and the Ctrl-C contract at the prompt (see `input`) and during turns and
compactions (`Interrupts`: the first Ctrl-C aborts, the second quits). Returns the exit code.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
from collections.abc import Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Literal

from rich.console import Console
from rich.markup import escape

from ...agent.compaction import (
    DEFAULT_CONTEXT_WINDOW,
    Compacted,
    compact,
    context_tokens,
    needs_compaction,
    summarise,
)
from ...agent.llm import LlmError
from ...agent.llm.service import Llm
from ...agent.loop import AgentLoop, TurnOutcome, default_system_prompt
from ...agent.session import SessionLog
from ...core.signals import AbortController, AbortSignal
from ...plugins.approval import Approval
from ..approval import TerminalPrompter
from ..session import Interrupts, Runner, notice
from .commands import COMMANDS, run_command
from .input import ChatInput, LineInput, PromptInput, is_terminal
from .mentions import attach_mentions
from .status import ChatRenderer

__all__ = ["ChatApp", "context_window_from_env"]


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


def _overflowed(outcome: TurnOutcome) -> bool:
    """Whether the turn ended because the request did not fit the model's context window."""
    error = outcome.reason.get("error")
    return isinstance(error, Mapping) and error.get("code") == "CONTEXT_WINDOW_EXCEEDED"


class ChatApp:
    """One chat: see the module note."""

    def __init__(
        self,
        runner: Runner,
        interrupts: Interrupts,
        stack: AsyncExitStack,
        *,
        cwd: Path,
        context_window: int,
        show_reasoning: bool,
    ) -> None:
        self.runner = runner
        self.cwd = cwd
        self.context_window = context_window
        self._interrupts = interrupts
        self._stack = stack
        terminal = is_terminal()
        editing = terminal and importlib.util.find_spec("prompt_toolkit") is not None
        self.console = Console(file=sys.stdout, highlight=False)
        self.renderer = ChatRenderer(
            self.console,
            live=terminal and self.console.is_terminal,
            show_reasoning=show_reasoning,
            cwd=cwd,
        )
        self.input: ChatInput
        if terminal and not editing:
            notice("line editing needs prompt_toolkit: pip install 'tether[chat]'")
        if editing:
            prompt_input = PromptInput(cwd=cwd, commands=COMMANDS, on_interrupt=interrupts.press)
            stack.callback(prompt_input.close)
            self.input = prompt_input
        else:
            self.input = LineInput()
        self._retired: list[SessionLog] = []
        runner.agent.compactor = self._compact_in_turn

    # -- set-up ----------------------------------------------------------------------------------

    def attach_prompter(self) -> None:
        approval = self.runner.ctx.get("approval")
        if isinstance(approval, Approval):
            prompter = TerminalPrompter(
                self.input.ask,
                self.console,
                cwd=self.cwd,
                pause=self.renderer.paused,
                on_wait=self.renderer.waited,
            )
            self._stack.callback(approval.attach(prompter))

    def _new_agent(self) -> None:
        runner = self.runner
        runner.agent = AgentLoop(
            tools=runner.ctx.tools.runtime,
            llm=runner.llm,
            session=runner.session,
            settings=runner.agent.settings,
            on_event=self.renderer,
            ctx=runner.ctx,
        )
        runner.agent.compactor = self._compact_in_turn

    def _adopt(self, session: SessionLog) -> None:
        old = self.runner.session
        self.runner.session = session
        self._stack.callback(session.close)
        self._new_agent()
        old.close()

    # -- commands --------------------------------------------------------------------------------

    def switch_to_new_session(self) -> None:
        self._adopt(self.runner.store.create(cwd=self.cwd))

    def resume(self, session_id: str) -> None:
        if session_id == self.runner.session.id:
            return
        session = self.runner.store.open(session_id)
        self._adopt(session)
        for line in session.repair.describe() if session.repair else ():
            notice(f"repaired the session log: {line}")

    def switch_model(self, model: str) -> None:
        llm = self.runner.llm
        self.runner.llm = Llm(
            llm.transport, provider=llm.provider, model=model, retry=llm.retry_policy
        )
        self.runner.agent.llm = self.runner.llm

    async def compact(
        self, *, trigger: Literal["manual", "auto"], focus: str | None = None, extra: str = ""
    ) -> bool:
        """Summarise into a new session (between turns); False (with a notice) when it failed or
        was aborted (Ctrl-C)."""
        controller = AbortController()
        self._interrupts.arm(controller)
        try:
            done = await self._summarise_into_new(trigger, focus, extra, controller.signal)
        finally:
            self._interrupts.arm(None)
        if done is None:
            return False
        self._adopt(done.session)
        return True

    async def _compact_in_turn(self, agent: AgentLoop, signal: AbortSignal) -> SessionLog | None:
        """`AgentLoop.compactor`: between two steps of a turn, compact when the next request would
        not fit; the agent goes on in the new session (the old one is closed after the turn)."""
        if not needs_compaction(context_tokens(agent.session), self.context_window):
            return None
        done = await self._summarise_into_new("auto", None, "", signal)
        if done is None:
            return None
        self._retired.append(self.runner.session)
        self.runner.session = done.session
        self._stack.callback(done.session.close)
        return done.session

    async def _summarise_into_new(
        self,
        trigger: Literal["manual", "auto"],
        focus: str | None,
        extra: str,
        signal: AbortSignal,
    ) -> Compacted | None:
        runner = self.runner
        session = runner.agent.session
        messages = session.messages()
        if not messages:
            self.console.print("[dim]nothing to compact yet[/dim]")
            return None
        tokens = context_tokens(session, extra)
        what = "auto-compacting" if trigger == "auto" else "compacting"
        self.console.print(
            f"[yellow]⟳ {what}: about {tokens:,} tokens of a {self.context_window:,}-token "
            "window; the model summarises the conversation…[/yellow]",
            highlight=False,
        )
        try:
            settings = runner.agent.settings
            summary = await summarise(
                runner.llm,
                messages,
                system=settings.system_prompt or default_system_prompt(settings.cwd),
                tools=runner.ctx.tools.runtime.schemas(),
                focus=focus,
                signal=signal,
            )
        except (LlmError, ValueError) as exc:
            self.console.print(f"[red]compaction failed: {escape(str(exc))}[/red]")
            return None
        done = compact(
            runner.store, session, summary, trigger=trigger, tokens_before=tokens, focus=focus
        )
        self.console.print(
            f"[dim]compacted session {session.id} into {done.session.id} "
            f"(summary of {len(summary.split())} words; the old log is kept)[/dim]",
            highlight=False,
        )
        return done

    # -- the loop --------------------------------------------------------------------------------

    async def run(self) -> int:
        runner = self.runner
        self.console.print(
            f"[bold]tether chat[/bold] · session {runner.session.id} · model "
            f"{escape(runner.llm.model)}\n[dim]Ctrl-C aborts a turn, twice quits; /help lists "
            "commands; @path attaches a file.[/dim]",
            highlight=False,
        )
        try:
            while True:
                self._interrupts.arm(None)
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
        runner = self.runner
        controller = AbortController()
        self._interrupts.arm(controller)
        message, attachments = await attach_mentions(
            line,
            cwd=self.cwd,
            tools=runner.ctx.tools.runtime,
            agent=runner.agent,
            signal=controller.signal,
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
        tokens = context_tokens(runner.session, message)
        if runner.session.messages() and needs_compaction(tokens, self.context_window):
            await self.compact(trigger="auto", extra=message)
        self._interrupts.arm(controller)
        outcome = await runner.agent.run_turn(message, signal=controller.signal)
        self.renderer.end_turn()
        if _overflowed(outcome) and not controller.signal.aborted:
            # the model's window is smaller than assumed: learn it, compact, send again once
            self.context_window = min(self.context_window, context_tokens(runner.session))
            notice("the conversation no longer fits the model's context window; compacting")
            if await self.compact(trigger="auto"):
                controller = AbortController()
                self._interrupts.arm(controller)
                outcome = await self.runner.agent.run_turn(message, signal=controller.signal)
                self.renderer.end_turn()
        for retired in self._retired:
            retired.close()
        self._retired.clear()
        if outcome.kind == "aborted":
            notice("turn aborted; tool outcomes are recorded")
        elif not outcome.completed:
            from ..commands.agent import exit_code

            exit_code(outcome)
