"""One interactive or one-shot agent session from the command line: the agent, and Ctrl-C.

Owns: starting the public `Agent` for a command (`tether.agent.api`: the boot, model, session
store and loop a library user gets), and the Ctrl-C contract of the CLI — the first Ctrl-C
aborts the running turn through its signal (tools get cancellation, outcomes are recorded), a
second one within 2 s cancels the run (the turn is still closed durably and every started tool
is awaited), a third exits at once.
"""

from __future__ import annotations

import asyncio
import os
import signal as os_signal
import sys
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

from ..agent.api import Agent
from ..agent.events import AgentEvent
from ..agent.llm.service import Llm
from ..agent.loop import AgentLoop
from ..agent.session import SessionLog, SessionStore
from ..core.signals import AbortController
from ..kernel import Context

__all__ = ["Interrupts", "Runner", "open_runner"]


class Interrupts:
    """SIGINT policy: abort the current turn, then cancel `task`, then exit."""

    def __init__(self, on_notice: Callable[[str], None]) -> None:
        self._notice = on_notice
        self._controller: AbortController | None = None
        self._last = 0.0
        self._task: asyncio.Task[object] | None = None
        self._presses = 0

    def arm(self, controller: AbortController | None) -> None:
        """Route the next Ctrl-C to `controller` (None: at the prompt)."""
        self._controller = controller

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

    def _pressed(self) -> None:
        now = time.monotonic()
        recent = now - self._last < 2.0
        self._last = now
        self._presses = self._presses + 1 if recent else 1
        controller = self._controller
        if self._presses >= 3:
            os._exit(130)
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


@dataclass
class Runner:
    """The public agent a command drives (`api`), and the parts of it `tether chat` switches:
    the model, the session and the loop over it (`/clear`, `/resume`, `/model`, compaction)."""

    api: Agent
    ctx: Context
    llm: Llm
    store: SessionStore
    session: SessionLog
    agent: AgentLoop


async def open_runner(
    stack: AsyncExitStack,
    *,
    cwd: Path,
    config: Path | None,
    model: str | None,
    resume: str | None,
    on_event: Callable[[AgentEvent], None],
    sandbox: str | None = None,
) -> Runner:
    """Start the public `Agent` for the command line — the built-ins that police an agent
    (`permissions`), the configured model (or `model` on its route), a new session or the
    resumed (repaired) one, the system prompt followed by the `AGENTS.md` / `CLAUDE.md`
    instructions — with `on_event` receiving every turn's events, and `sandbox` (`--sandbox`)
    over the configured one; `stack` closes it."""
    agent = Agent(
        model=model,
        cwd=cwd,
        config=config,
        session=resume,
        on_event=on_event,
        sandbox=sandbox,
    )
    await agent.start()
    stack.push_async_callback(agent.aclose)
    loop = agent.loop
    return Runner(agent, agent.context, loop.llm, agent.store, loop.session, loop)


def notice(message: str) -> None:
    """A status line on stderr."""
    sys.stderr.write(f"\ntether: {message}\n")
    sys.stderr.flush()
