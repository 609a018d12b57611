"""One child agent: spawned for a `task` call, run for one turn, disposed to quiescence.

Owns the child's lifecycle:

1. spawn (`spawn_child`): a session log under the caller's store with
   `parent_session`, `origin: "subagent"` and `delegation_depth` (caller's + 1); an `AgentLoop`
   with `depth` and `parent`; its scope, `ctx.scope(child)` chained under the caller's scope,
   with the type's tool list installed as `restrict` — all before anything runs; and a
   `subagent/spawned` event in the caller's log (synced), which links the call to the child
   for `sessions show` and crash repair.
2. run (`Child.run`): the `subagent/start` event (Claude Code's SubagentStart hooks; a listener
   may `child.inject(message)`), one turn whose signal is the signal it is given — the `task`
   call's own `exec.signal` in the foreground, the job's in the background — then `subagent/end`
   (SubagentStop) when it was not aborted.
3. dispose (`Child.dispose`): every background job the child started is killed and awaited
   until it has settled (its process group gone), the scope is disposed (its restriction and
   everything registered through it removed), and the child's log is closed. The turn itself
   already awaited every child tool call and closed the log with `turn/end`.

`model_called` records whether the child began its first model request with its signal still
unaborted (the `StepStarted` event precedes the request with no suspension between them): a
child aborted before that never dispatched anything, which the tool reports as
`ABORTED_BEFORE_DISPATCH`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ...core.json import JsonValue
from ...core.signals import AbortController, AbortSignal
from ...kernel import Context
from ...plugins.jobs.model import owner_session
from ...plugins.jobs.registry import JobRegistry
from ...tools.results import user_message
from ..events import LoopEvent, StepStarted
from ..llm.service import Llm
from ..loop import AgentLoop, AgentSettings, TurnOutcome
from ..session import SessionLog, SessionStore
from ..session.events import ASSISTANT_MESSAGE, SUBAGENT_SPAWNED, TURN_START
from .agent_types import GENERAL_PURPOSE, AgentType
from .errors import NoCallingAgent
from .host import END_EVENT, START_EVENT, Host

__all__ = [
    "END_EVENT",
    "PARTIAL_OUTPUT_MAX",
    "START_EVENT",
    "Caller",
    "Child",
    "Host",
    "caller_of",
    "spawn_child",
]

_log = logging.getLogger("tether.agent.subagents")

PARTIAL_OUTPUT_MAX: Final = 10_000
"""How much of an aborted child's text the caller gets back (the rest is in the child's log)."""

_JOB_STOP_WAIT_MS: Final = 60_000


@dataclass(frozen=True, slots=True)
class Caller:
    """The agent loop a `task` call came from, checked (`caller_of`)."""

    loop: AgentLoop
    session: SessionLog
    llm: Llm
    settings: AgentSettings
    depth: int


def caller_of(agent: object | None) -> Caller:
    """The calling agent loop of a call. Raises NoCallingAgent when `agent` is not one."""
    if not isinstance(agent, AgentLoop):
        raise NoCallingAgent()
    return Caller(agent, agent.session, agent.llm, agent.settings, agent.depth)


class Child:
    """A spawned child (see the module note)."""

    def __init__(
        self,
        host: Host,
        caller: Caller,
        agent_type: AgentType,
        call_id: str,
        session: SessionLog,
    ) -> None:
        self.host = host
        self.caller = caller
        self.agent_type = agent_type
        self.call_id = call_id
        self.session = session
        self.loop: AgentLoop | None = None
        self.scoped: Context | None = None
        self.model_called = False
        self._signal: AbortSignal | None = None
        self._disposed = False

    @property
    def session_id(self) -> str:
        return self.session.id

    def _watch(self, event: LoopEvent) -> None:
        signal = self._signal
        if isinstance(event, StepStarted) and signal is not None and not signal.aborted:
            self.model_called = True

    async def run(self, prompt: str, *, signal: AbortSignal) -> TurnOutcome:
        """Run the child's one turn under `signal` (see the module note)."""
        self._signal = signal
        ctx, name = self.host.ctx, self.agent_type.name
        if not signal.aborted:
            await ctx.serial(START_EVENT, self.caller.loop, self.loop, name, signal)
        message = user_message(
            prompt,
            {
                "kind": "plugin",
                "plugin": "subagents",
                "parent_session": self.caller.session.id,
                "call_id": self.call_id,
            },
        )
        if self.loop is None:
            raise RuntimeError("the child was never spawned (use spawn_child)")
        outcome = await self.loop.run_turn(message, signal=signal)
        if not signal.aborted:
            await ctx.serial(END_EVENT, self.caller.loop, self.loop, name, outcome, signal)
        return outcome

    def output(self) -> str:
        """The text of the child's assistant messages in its last turn (interrupted ones
        included), joined by blank lines and cut at `PARTIAL_OUTPUT_MAX` characters."""
        texts: list[str] = []
        for event in self.session.events:
            if event.type == TURN_START:
                texts.clear()
            elif event.type == ASSISTANT_MESSAGE:
                texts.extend(_texts(event.data.get("message")))
        text = "\n\n".join(t for t in texts if t.strip())
        if len(text) > PARTIAL_OUTPUT_MAX:
            cut = len(text) - PARTIAL_OUTPUT_MAX
            text = text[:PARTIAL_OUTPUT_MAX] + f"\n[... {cut} more characters in the child's log]"
        return text

    async def dispose(self) -> None:
        """Stop the child's jobs, dispose its scope, close its log (idempotent)."""
        if self._disposed:
            return
        self._disposed = True
        try:
            await self._stop_jobs()
        finally:
            try:
                if self.scoped is not None:
                    await self.scoped.dispose()
            finally:
                self.session.close()
                if self.loop is not None:
                    self.host.scopes.pop(self.loop, None)

    async def _stop_jobs(self) -> None:
        jobs = self.host.ctx.get("jobs")
        if not isinstance(jobs, JobRegistry) or self.loop is None:
            return
        mine = owner_session(self.loop)
        running = [
            job.id
            for job in jobs.list(self.loop)
            if job.owner_session == mine and not job.status.terminal
        ]
        for job_id in running:
            jobs.kill(job_id, self.loop, "its subagent finished")
        waiting = AbortController()  # disposal waits for quiescence; nothing aborts it
        for job_id in running:
            while not jobs.get(job_id, self.loop).status.terminal:
                snapshot = await jobs.wait(
                    job_id, signal=waiting.signal, timeout_ms=_JOB_STOP_WAIT_MS, caller=self.loop
                )
                if not snapshot.status.terminal:
                    _log.warning(
                        "subagents: job %s of subagent session %s has not stopped after %d s",
                        job_id,
                        self.session_id,
                        _JOB_STOP_WAIT_MS // 1000,
                    )


def _texts(message: object) -> list[str]:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [
        str(block.get("text"))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    ]


def child_system_prompt(agent_type: AgentType, cwd: Path, depth: int) -> str:
    """The type's prompt (the general-purpose one when it has none), then where it works."""
    base = agent_type.system_prompt or GENERAL_PURPOSE.system_prompt
    return (
        f"{base}\n\nWorkspace: {cwd}\nYou are a subagent (delegation depth {depth}): your final "
        "message is the whole answer the agent that started you receives."
    )


def _model(caller: Caller, agent_type: AgentType) -> Llm:
    llm = caller.llm
    if agent_type.model is None or agent_type.model == llm.model:
        return llm
    return Llm(llm.transport, provider=llm.provider, model=agent_type.model, retry=llm.retry_policy)


def _restriction(host: Host, caller: Caller, agent_type: AgentType) -> dict[str, list[str]] | None:
    """The `restrict` spec for the type over what the caller sees, None for no restriction.
    Names the caller cannot see are left out (logged once per type)."""
    visible = caller.loop.tools.names(caller.loop)
    spec: dict[str, list[str]] = {}
    if agent_type.tools is not None:
        allow = [t for t in agent_type.tools if t in visible]
        missing = tuple(t for t in agent_type.tools if t not in visible)
        if missing and (agent_type.name, missing) not in host.warned:
            host.warned.add((agent_type.name, missing))
            _log.warning(
                'subagents: type "%s" (%s) names tool(s) this agent does not have: %s; its '
                "children run without them",
                agent_type.name,
                agent_type.source,
                ", ".join(missing),
            )
        spec["allow"] = allow
    deny = [t for t in agent_type.disallowed_tools if t in visible and t != "run_code"]
    if deny:
        spec["deny"] = deny
    return spec or None


async def spawn_child(
    host: Host,
    caller: Caller,
    agent_type: AgentType,
    *,
    call_id: str,
    background: bool,
    on_event: Callable[[LoopEvent], None] | None = None,
) -> Child:
    """Create the child's log, loop and restricted scope and record the link in the caller's
    log (see the module note). Raises SessionError when a log cannot be created or written;
    nothing is left behind then."""
    depth = caller.depth + 1
    cwd = caller.settings.cwd
    store = SessionStore(caller.session.path.parent.parent)
    session = store.create(
        cwd=cwd,
        parent_session=caller.session.id,
        origin="subagent",
        delegation_depth=depth,
    )
    child = Child(host, caller, agent_type, call_id, session)
    try:
        settings = AgentSettings(
            cwd=cwd,
            system_prompt=child_system_prompt(agent_type, cwd, depth),
            max_steps=caller.settings.max_steps,
            max_parallel_tool_calls=caller.settings.max_parallel_tool_calls,
            max_tokens=caller.settings.max_tokens,
        )

        def observe(event: LoopEvent) -> None:
            child._watch(event)
            if on_event is not None:
                on_event(event)

        above = host.scope_of(caller.loop)
        loop = AgentLoop(
            tools=caller.loop.tools,
            llm=_model(caller, agent_type),
            session=session,
            settings=settings,
            on_event=observe,
            ctx=above,
            depth=depth,
            parent=caller.loop,
        )
        child.loop = loop
        scoped = above.scope(loop)
        child.scoped = scoped
        spec = _restriction(host, caller, agent_type)
        if spec is not None:
            scoped.tools.restrict(spec)
        host.scopes[loop] = scoped
        loop.env.update(caller.loop.env)
        link: dict[str, JsonValue] = {
            "turn": caller.session.open_turn,
            "call_id": call_id,
            "session_id": session.id,
            "agent_type": agent_type.name,
            "background": background,
        }
        caller.session.append(SUBAGENT_SPAWNED, link)
        caller.session.sync()
    except BaseException:
        await child.dispose()
        raise
    return child
