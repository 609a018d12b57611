"""A started `Agent`'s state: what its boot built, and the loop over its current session.

Owns `Booted` — the agent's context, the model clients it built, the session store, the compactor
and the loop over the current session — moving that loop to another session (a new, resumed or
compacted one, the old log closed), compacting a turn that would not fit the window, picking a
model, and releasing all of it in reverse (`dispose`); and restoring a resumed session's grants.
Does not own building it (`tether.agent.agent_boot`), nor the turn slot, the turns' events and
the public methods (`tether.agent.api`).
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ..core.signals import AbortSignal
from ..kernel import Context
from ..plugins.permissions import Permissions
from ..tools.results import UserMessage
from .claude_options import Scratch
from .compactor import Compactor, overflowed
from .events import AgentEvent
from .llm import LlmConfig
from .llm.plugin import build_llm
from .llm.service import Llm
from .loop import AgentLoop, AgentSettings, TurnOutcome
from .session import SessionLog, SessionStore
from .session.events import APPROVAL_DECIDED
from .stream import quiesce

if TYPE_CHECKING:
    from .compaction import Compacted

__all__ = ["Booted", "restore_grants", "shielded"]


class Booted:
    """What `Agent.start()` built, released in reverse by `dispose`."""

    def __init__(self, ctx: Context, dispatch: Callable[[AgentEvent], None]) -> None:
        self.ctx = ctx
        self.dispatch = dispatch
        """Where the loop's and the compactor's events go (the agent's)."""
        self.owned_llms: list[Llm] = []
        """Clients the agent built (closed with it), the configured one included."""
        self.configured_llm: Llm | None = None
        self.store: SessionStore
        self.compactor: Compactor
        self.settings: AgentSettings
        self.session: SessionLog | None = None
        self.retired: list[SessionLog] = []
        self.loop: AgentLoop
        self.detach_approver: Callable[[], None] | None = None
        self.scratch: Scratch | None = None
        self.private_home: tempfile.TemporaryDirectory[str] | None = None
        """A library agent's own home when it was given none (its sessions), removed last."""
        self.disposed = False

    async def dispose(self) -> None:
        try:
            if self.detach_approver is not None:
                self.detach_approver()
            for session in (*self.retired, self.session):
                if session is not None:
                    session.close()
            for llm in self.owned_llms:
                await llm.aclose()
        finally:
            try:
                await self.ctx.dispose()
            finally:
                if self.scratch is not None:
                    self.scratch.close()
                if self.private_home is not None:
                    self.private_home.cleanup()

    def new_loop(self, llm: Llm, session: SessionLog) -> AgentLoop:
        loop = AgentLoop(
            tools=self.ctx.tools.runtime,
            llm=llm,
            session=session,
            settings=self.settings,
            on_event=self.dispatch,
            ctx=self.ctx,
        )
        if self.compactor.window is not None:
            loop.compactor = self.compact_between_steps
        return loop

    def switch(self, session: SessionLog, *, carry_context: bool) -> None:
        old = self.loop
        self.loop = self.new_loop(old.llm, session)
        if carry_context:
            for message in old.parked_contexts:
                self.loop.inject(message)
        self.session = session
        old.session.close()

    def pick_model(self, model: LlmConfig | Llm | str | None) -> Llm:
        if isinstance(model, Llm):
            return model
        if isinstance(model, LlmConfig):
            llm = build_llm(model)
            self.owned_llms.append(llm)
            return llm
        if model is not None and not isinstance(model, str):
            raise TypeError(f"model: {model!r} is not an LlmConfig, an Llm, a model name or None")
        configured = self.ctx.get("llm")
        if configured is not None and not isinstance(configured, Llm):
            raise ValueError(
                f"the `llm` service is a {type(configured).__name__}, not a tether Llm; "
                "pass model=LlmConfig(...) or mount tether.agent.llm.plugin"
            )
        if configured is None:
            configured = self.configured_llm
        if configured is None:
            configured = self.configured_llm = build_llm()
            self.owned_llms.append(configured)
        if model is None:
            return configured
        return Llm(
            configured.transport,
            provider=configured.provider,
            model=model,
            retry=configured.retry_policy,
        )

    # -- compaction ------------------------------------------------------------------------------

    async def compacting_turn(self, prompt: str | UserMessage, signal: AbortSignal) -> TurnOutcome:
        """The turn, compacted first when it would not fit the window, and once more after
        compaction when the model refused it as too long."""
        compactor = self.compactor
        if compactor.window is None:
            return await self.loop.run_turn(prompt, signal=signal)
        text = prompt if isinstance(prompt, str) else _text_of(prompt)
        if not compactor.fits(self.loop.session, text):
            await self.compact_into(signal, extra=text)
        outcome = await self.loop.run_turn(prompt, signal=signal)
        if overflowed(outcome) and not signal.aborted:
            compactor.learn_overflow(self.loop.session)
            if await self.compact_into(signal, overflow=True):
                outcome = await self.loop.run_turn(prompt, signal=signal)
        return outcome

    async def compact_into(
        self, signal: AbortSignal, *, extra: str = "", overflow: bool = False
    ) -> bool:
        done = await self.compactor.run(
            self.loop, trigger="auto", signal=signal, extra=extra, overflow=overflow
        )
        if done is None:
            return False
        self.switch(done.session, carry_context=True)
        self.loop.start_source = "compact"
        return True

    async def compact_between_steps(
        self, loop: AgentLoop, signal: AbortSignal
    ) -> SessionLog | None:
        """`AgentLoop.compactor`: the loop goes on in the new session; the old one is closed
        after the turn."""
        if self.compactor.fits(loop.session):
            return None
        done: Compacted | None = await self.compactor.run(loop, trigger="auto", signal=signal)
        if done is None:
            return None
        self.retired.append(loop.session)
        return done.session


async def shielded(work: Coroutine[Any, Any, None]) -> None:
    """Run a disposal to its end even if the caller is cancelled meanwhile (re-raised after;
    a failure of the disposal itself wins)."""
    task = asyncio.ensure_future(work)
    try:
        await quiesce(task)
    finally:
        task.result()


def restore_grants(ctx: Context, session: SessionLog) -> None:
    """The rules the user allowed "for this session" in `session` (its `approval/decided`
    events) hold again when it is resumed."""
    permissions = ctx.get("permissions")
    if not isinstance(permissions, Permissions):
        return
    granted = permissions.session_rules
    for event in session.events:
        rule = event.data.get("session_rule") if event.type == APPROVAL_DECIDED else None
        mine = isinstance(rule, str) and event.data.get("answered_by") == "user"
        if mine and isinstance(rule, str) and rule not in granted:
            try:
                permissions.allow_for_session(rule)
            except ValueError:
                continue  # a rule this version cannot read: it asks again
            granted = permissions.session_rules


def _text_of(message: UserMessage) -> str:
    return "".join(
        str(block.get("text", "")) for block in message.content if block.get("type") == "text"
    )
