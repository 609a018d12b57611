"""One interactive or one-shot agent session from the command line: boot, agent, Ctrl-C.

Owns: wiring a booted context, the model and a durable session into an `Agent`, and the Ctrl-C
contract of the CLI — the first Ctrl-C aborts the running turn through its signal (tools get
cancellation, outcomes are recorded), a second one within 2 s cancels the run (the turn is still
closed durably and every started tool is awaited), a third exits at once.
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

from ..agent.llm.service import Llm
from ..agent.loop import Agent, AgentEvent, AgentSettings, default_system_prompt
from ..agent.session import SessionLog, SessionStore
from ..core.signals import AbortController
from ..kernel import Context, tether_home
from .boot import start
from .instructions import with_instructions

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
    """A booted context, its model and one session's agent."""

    ctx: Context
    llm: Llm
    store: SessionStore
    session: SessionLog
    agent: Agent


async def open_runner(
    stack: AsyncExitStack,
    *,
    cwd: Path,
    config: Path | None,
    model: str | None,
    resume: str | None,
    on_event: Callable[[AgentEvent], None],
    store: SessionStore | None = None,
) -> Runner:
    """Boot (with the built-ins that police an agent: `permissions`), pick the model, open (or
    resume) a session and build the agent — its system prompt followed by the `AGENTS.md` /
    `CLAUDE.md` instructions (`tether.cli.instructions`); everything is released by `stack`."""
    ctx = await start(cwd=cwd, config_paths=None if config is None else [config], agent=True)
    stack.push_async_callback(ctx.dispose)
    llm = ctx.get("llm")
    if not isinstance(llm, Llm):
        raise RuntimeError("no `llm` plugin is mounted; add one to tether.yml")
    if model is not None:
        llm = Llm(llm.transport, provider=llm.provider, model=model, retry=llm.retry_policy)
    store = store or SessionStore()
    store.sweep()  # what writers killed mid-creation left behind
    session = store.open(resume) if resume is not None else store.create(cwd=cwd)
    stack.callback(session.close)
    agent = Agent(
        tools=ctx.tools.runtime,
        llm=llm,
        session=session,
        settings=AgentSettings(
            cwd=cwd,
            system_prompt=with_instructions(default_system_prompt(cwd), cwd, tether_home()),
        ),
        on_event=on_event,
        ctx=ctx,
    )
    return Runner(ctx, llm, store, session, agent)


def notice(message: str) -> None:
    """A status line on stderr."""
    sys.stderr.write(f"\ntether: {message}\n")
    sys.stderr.flush()
