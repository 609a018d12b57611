"""One interactive or one-shot agent session from the command line: the agent, and Ctrl-C.

Owns: starting the public `Agent` for a command (`tether.agent.api`: the boot, model, session
store and loop a library user gets; `tether run` and `tether chat` are both its clients), the
exit code a turn's outcome gives, and the Ctrl-C contract of the chat — the first Ctrl-C
aborts the running turn through its signal (tools get cancellation, outcomes are recorded), a
second one within 2 s cancels the run (the turn is still closed durably and every started tool
is awaited), a third exits at once. The other ways a process ends (SIGTERM, SIGHUP, SIGQUIT;
every signal for `tether run`) are `tether.core.ending`'s: `Interrupts.end` routes one to the
chat's running turn (or quits at the prompt), and once the process is ending a Ctrl-C exits at
once.
"""

from __future__ import annotations

import asyncio
import signal as os_signal
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..agent.api import Agent
from ..agent.claude_options import ClaudeOptions
from ..agent.events import AgentEvent
from ..agent.loop import TurnOutcome
from ..agent.session import SessionError, SessionStore, SessionSummary
from ..agent.unattended import apply_flags
from ..core.ending import Ended, ProcessEnding, exit_now
from ..core.signals import AbortController
from ..kernel import ConfigError
from .visible import visible

if TYPE_CHECKING:
    from ..plugins.approval import Prompter

__all__ = [
    "CHAT_ENDING_SIGNALS",
    "Interrupts",
    "announce_ending",
    "exit_code",
    "latest_session",
    "notice",
    "open_agent",
    "workspace_sessions",
]


class Interrupts:
    """SIGINT policy: abort the current turn, then cancel `task`, then exit."""

    def __init__(self, on_notice: Callable[[str], None]) -> None:
        self._notice = on_notice
        self._controller: AbortController | None = None
        self._last = 0.0
        self._task: asyncio.Task[object] | None = None
        self._presses = 0
        self._ending: Ended | None = None

    def arm(self, controller: AbortController | None) -> None:
        """Route the next Ctrl-C to `controller` (None: at the prompt); once the process is
        ending, `controller` is aborted at once with the ending's reason."""
        self._controller = controller
        if controller is not None and self._ending is not None:
            controller.abort(self._ending)

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        loop.add_signal_handler(os_signal.SIGINT, self._pressed)

    def uninstall(self) -> None:
        try:
            asyncio.get_running_loop().remove_signal_handler(os_signal.SIGINT)
        except RuntimeError:
            pass

    def press(self) -> None:
        """A Ctrl-C that arrived as a key (a prompt in raw mode), handled like the signal."""
        self._pressed()

    def escape(self) -> None:
        """Esc during a turn: abort it (it never counts towards quitting)."""
        controller = self._controller
        if controller is not None and not controller.signal.aborted:
            controller.abort()
            self._notice("interrupted (Esc); the turn is aborted")

    def end(self, reason: Ended) -> None:
        """The process is ending (`ProcessEnding.on_end`): abort the running turn with `reason`
        as its cause, or, at the prompt, cancel the task (the chat quits)."""
        self._ending = reason
        controller = self._controller
        self._notice(f"{reason.name}: ending; the running turn is aborted and recorded")
        if controller is not None and not controller.signal.aborted:
            controller.abort(reason)
        elif controller is None and self._task is not None:
            self._task.cancel()

    def _pressed(self) -> None:
        if self._ending is not None:  # a second signal while the process drains
            exit_now(130)
        now = time.monotonic()
        recent = now - self._last < 2.0
        self._last = now
        self._presses = self._presses + 1 if recent else 1
        controller = self._controller
        if self._presses >= 3:
            exit_now(130)
        if self._presses == 1 and controller is not None and not controller.signal.aborted:
            controller.abort()
            self._notice("aborting the turn (Ctrl-C again to quit)")
            return
        if self._presses == 1:
            self._notice("press Ctrl-C again to quit")
            return
        self._notice("quitting")
        if self._task is not None:
            self._task.cancel()


async def open_agent(
    stack: AsyncExitStack,
    *,
    cwd: Path,
    config: Path | None,
    model: str | None,
    resume: str | None,
    on_event: Callable[[AgentEvent], None] | None,
    yolo: bool,
    allow: Sequence[str],
    approver: Prompter | None = None,
    context_window: int | None = None,
    sandbox: str | None = None,
    instructions: str | None = None,
    max_steps: int | None = None,
    permission_mode: str | None = None,
    claude_options: ClaudeOptions | None = None,
) -> Agent | None:
    """Start the public `Agent` for a command — the built-ins that police an agent
    (`permissions`), the configured model (or `model` on its route), a new session or the
    resumed (repaired) one, the system prompt followed by the `AGENTS.md` / `CLAUDE.md`
    instructions — and apply `--yolo` / `--allow`, with `--sandbox` over the configured sandbox
    (`stack` closes it); `instructions` replaces the system prompt, `max_steps` bounds the model
    requests of a turn (`--max-turns`), `permission_mode` and `claude_options` are Claude Code's
    (`tether.agent.claude_options`). None, with the one-line error on stderr, when the config,
    a flag or the session cannot be used."""
    agent = Agent(
        preset="coding",
        model=model,
        cwd=cwd,
        config=config,
        session=resume,
        on_event=on_event,
        approver=approver,
        context_window=context_window,
        sandbox=sandbox,
        instructions=instructions,
        max_steps=50 if max_steps is None else max_steps,
        permission_mode=permission_mode,
        claude_options=claude_options,
    )
    try:
        await agent.start()
        stack.push_async_callback(agent.aclose)
        apply_flags(agent.context, yolo=yolo, allow=allow)
    except (ConfigError, SessionError, ValueError) as exc:
        sys.stderr.write(f"tether: {exc}\n")
        return None
    return agent


def workspace_sessions(store: SessionStore, cwd: Path) -> list[SessionSummary]:
    """The sessions of `cwd` a user talked in (not a subagent's), most recently written
    first."""
    mine = [s for s in store.list_sessions() if s.cwd == str(cwd) and s.origin != "subagent"]
    return sorted(mine, key=lambda s: (s.modified_at, s.id), reverse=True)


def latest_session(store: SessionStore, cwd: Path) -> str | None:
    """The session of `cwd` written last (`--continue`), or None."""
    sessions = workspace_sessions(store, cwd)
    return sessions[0].id if sessions else None


CHAT_ENDING_SIGNALS: Final = (os_signal.SIGTERM, os_signal.SIGHUP, os_signal.SIGQUIT)
"""The signals that end `tether chat` through `ProcessEnding` (SIGINT is `Interrupts`')."""


def exit_code(outcome: TurnOutcome, ending: ProcessEnding | None = None) -> int:
    """0 for a completed turn; for an aborted one 128 + N of the signal that is ending the
    process (130 otherwise); 1 otherwise (with the stderr line)."""
    if outcome.completed:
        return 0
    if outcome.kind == "aborted":
        notice("ABORTED: the turn was aborted; tool outcomes are recorded in the session")
        return 130 if ending is None else ending.exit_code(130)
    if outcome.kind == "blocked":
        sys.stderr.write(f"tether: BLOCKED: {visible(str(outcome.reason.get('message')))}\n")
        return 1
    if outcome.kind == "error":
        error = outcome.reason.get("error")
        code = message = "?"
        if isinstance(error, dict):
            code, message = str(error.get("code")), str(error.get("message"))
        sys.stderr.write(f"tether: {visible(code)}: {visible(message)}\n")
        return 1
    sys.stderr.write(f"tether: {outcome.kind.upper()}: the turn ended before completing\n")
    return 1


def announce_ending(reason: Ended) -> None:
    """Say that a signal (or the input's end) is ending `tether run` (`ProcessEnding.on_end`)."""
    notice(f"{reason.name}: aborting the turn; tool outcomes are recorded (again: quit at once)")


def notice(message: str) -> None:
    """A status line on stderr (nothing when stderr is gone)."""
    try:
        sys.stderr.write(f"\ntether: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
