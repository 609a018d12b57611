"""Claude Code's `idle_prompt` notification: the chat's prompt has waited for the user.

Owns `idle_delay` (`$TETHER_IDLE_PROMPT_S`, seconds; default 60, Claude Code's) and
`idle_notice`, around one wait at the prompt after a turn: once the wait has lasted the delay,
`approval/notification` fires once with `idle_prompt` (the hooks' Notification, message
"tether is waiting for your input"); a wait that ends first fires nothing; a wait that ends
while the listeners run aborts their signal and awaits them (an aborted hook is stopped as any
is). Does not own the hooks (`tether.plugins.hooks.lifecycle`) or reading the line (`input`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
from collections.abc import AsyncIterator
from typing import Final

from ...agent.api import Agent
from ...core.errors import error_message
from ...core.signals import AbortController
from ...plugins.approval.service import NOTIFICATION_EVENT

__all__ = ["DEFAULT_IDLE_S", "IDLE_VARIABLE", "idle_delay", "idle_notice"]

_log = logging.getLogger("tether.cli.chat")

IDLE_VARIABLE: Final = "TETHER_IDLE_PROMPT_S"
DEFAULT_IDLE_S: Final = 60.0


def idle_delay() -> float:
    """`$TETHER_IDLE_PROMPT_S` (a non-negative number of seconds), else 60. Raises ValueError
    naming the variable for anything else."""
    raw = os.environ.get(IDLE_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_IDLE_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{IDLE_VARIABLE} must be a number of seconds (>= 0), got {raw!r}")
    return value


@contextlib.asynccontextmanager
async def idle_notice(agent: Agent, delay: float | None) -> AsyncIterator[None]:
    """Fire `idle_prompt` once if the body is still waiting after `delay` seconds (None: never;
    see the module note)."""
    if delay is None:
        yield
        return
    controller = AbortController()
    notifying = False

    async def notify() -> None:
        nonlocal notifying
        await asyncio.sleep(delay)
        notifying = True
        await agent.context.parallel(
            NOTIFICATION_EVENT, agent.loop, "idle_prompt", "", controller.signal
        )

    task = asyncio.ensure_future(notify())
    try:
        yield
    finally:
        controller.abort()
        if not notifying:
            task.cancel()  # our own timer, still sleeping: nothing started
        await asyncio.wait({task})
        if not task.cancelled() and (failure := task.exception()) is not None:
            _log.warning("idle_prompt: a notification listener failed: %s", error_message(failure))
