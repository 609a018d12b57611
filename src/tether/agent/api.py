"""The public agent: `Agent(...)`, an agent of your own (or, with `preset="coding"`, tether's
coding agent as the command line boots it), run turn by turn.

Owns: building an agent from a model, tools, plugins and instructions on the boot `tether run`
uses (`tether.agent.boot`: the tool registry and the timeout policy, the JSONL session store;
with the coding preset also the built-in plugins, `$TETHER_HOME/config.yml` and the project's
`tether.yml`), running turns
over its one durable session (`run`, `run_stream`), and disposing everything it started. Does not
own the turn algorithm (`tether.agent.loop`), the events (`tether.agent.events`) or the stream
object (`tether.agent.stream`). The arguments are checked and resolved against the preset in
`tether.agent.agent_options`, the boot runs in `tether.agent.agent_boot`, and what it built (the
loop over the current session, switching and compacting sessions) is `tether.agent.agent_state`.

    async with Agent(model=LlmConfig(provider="openai", base_url=..., model="qwen"),
                     tools=[add], instructions="You are a calculator.") as agent:
        result = await agent.run("What is 2 + 3?", signal=AbortController().signal)
        result.text, result.outcome.kind, result.tool_calls
        again = await agent.run("And times 4?", signal=...)         # the same session

Lifetime: construction does nothing; `start()` (or `async with`, or the first run) boots.
`aclose()` (or leaving `async with`) aborts a running turn, awaits it (every tool call settled,
every process group it started gone, the log balanced), then closes the session log and disposes
the context (plugins, background jobs, the model client it built).

Turns run one after another: a run started while another turn of this agent runs waits for it.
The caller owns each turn's `signal`; aborting it ends the turn `aborted` after its started tool
calls were awaited (a call that never started is recorded `ABORTED_BEFORE_DISPATCH`). The agent
installs no signal handlers: the host decides what SIGTERM, SIGHUP, SIGQUIT and SIGINT do. To end
a turn on them as `tether run` does, fuse `ProcessEnding().signal` (`tether.core.ending`) into the
turn's signal — or abort the turn from the host's own handler with an `Ended(signum)` reason —
and exit with `ending.reason.exit_code` once `run` returned (docs/ending.md).

Between turns an interactive front end (`tether chat` is one) can switch the model
(`set_model`), start a new session or continue another (`new_session`, `resume`), summarise the
conversation into a new session (`compact`; automatic with `context_window`), run one tool call
as the agent outside the conversation (`call_tool`: an `@file` attachment), and park context
for the next turn (`inject`). Each waits for a running turn first. Calls the permission rules
ask about go to the `approver` (an `approval` prompter: the user at a terminal); without one
they are refused and the model is told why.

`run_stream` runs the turn in a task of its own and yields its events; the consumer never blocks
the turn (events are buffered). Leaving early aborts the turn and awaits it: `async with
agent.run_stream(...) as events:` (or `await events.aclose()`) returns only once the turn is
quiescent. A bare `async for` that breaks drops the stream: the turn is aborted at once, and the
agent's next run or `aclose()` awaits it (Python gives an iterator no hook at `break`; a stream
still referenced elsewhere is aborted only when closed).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Final

from ..core.json import JsonValue
from ..core.signals import AbortController, AbortError, AbortSignal
from ..kernel import Context
from ..plugins.approval import Prompter
from ..tools.execution import ToolExecution, ToolExecutionInput
from ..tools.results import ToolExecutionResult, UserMessage, user_message
from ..tools.slow_stop import SlowStop
from .agent_boot import boot_agent
from .agent_options import PluginSpec, ToolSpec, agent_options
from .agent_state import Booted, restore_grants, shielded
from .boot import SandboxChoice
from .claude_options import ClaudeOptions
from .events import (
    AgentEvent,
    CompactionFinished,
    RunResult,
    ToolCallFinished,
    ToolCallRecord,
    ToolCallStarted,
    ToolSlowToStop,
    TurnFinished,
    result_text,
)
from .llm import LlmConfig
from .llm.service import Llm
from .loop import AgentLoop
from .policy import Check, Preset
from .session import SessionLog, SessionStore
from .stream import RunStream

__all__ = ["Agent", "AgentClosed", "PluginSpec", "ToolSpec"]

_NOT_STARTED: Final = (
    "the agent has not started: use `async with Agent(...) as agent:` or `await agent.start()`"
)


class AgentClosed(AbortError):
    """The abort reason of a turn that `Agent.aclose()` stopped."""

    def __init__(self) -> None:
        super().__init__(None, "the agent was closed")


class Agent:
    """An agent: a booted context, a model, and one durable session. See the module note.

    `model`: an `LlmConfig` (a client is built and closed with the agent), an `Llm` (yours to
    close), a model name on the configured route, or None — the `llm` plugin's model
    (`tether.yml`, else the environment: `DEEPSEEK_API_KEY`, `OPENAI_BASE_URL`, ...).
    `tools` are registered and `plugins` mounted on the agent's context after the boot.
    `instructions` is the system prompt (default: the preset's); with `instruction_files` the
    `AGENTS.md` / `CLAUDE.md` files of `home` and of the project follow it, as in `tether run`.
    `cwd` is the workspace (default: the current directory); `home` the tether home
    (`config.yml`, `sessions/`). Given a `home`, an agent reads `home/config.yml` and
    `cwd/tether.yml` and keeps its sessions there. Without one, the coding preset uses
    `$TETHER_HOME` or `~/.tether` as `tether run` does, and the library preset reads no config
    file and keeps its session in a private temporary directory removed when the agent closes
    (pass `home` to resume sessions later). `config` is a `tether.yml` to read instead.
    `builtins=False` boots only the registry and the timeout policy (no shell, files, web...).
    `session` resumes that session (repairing a log a crash cut short, as `tether sessions
    resume` does: `agent.session.repair` says what was done), the rules the user allowed "for
    this session" in it included; None starts a new one.
    `permission_mode` (`default`, `acceptEdits`, `plan`, `dontAsk`, `bypassPermissions`) and
    `allow`
    (rules in Claude Code syntax, e.g. `Bash(npm test:*)`) set the `permissions` plugin, as
    `--yolo` and `--allow` do for `tether run`: with nobody to ask, a call the rules would ask
    about is refused and the model is told why; deny rules always hold.
    `on_event` receives the events of every turn (before a run's own `on_event` or stream)
    and those of `compact()`; like those, it runs inside the turn, so what it raises ends the
    turn with an error.
    `approver` answers the calls the permission rules ask about (the `approval` plugin's
    `Prompter`: `async ask(question) -> "allow-once" | "allow-session" | "allow-always" |
    "reject" | Rejection(reason)`); without one they are refused and the model is told why.
    `context_window` (tokens) turns on automatic compaction: a request that would not fit it
    (minus a reserve), before a turn or between its steps, is preceded by a summary of the
    conversation into a new, linked session; a model that refuses a request as too long gets
    the turn once more after compaction. None (default): only `compact()` compacts.
    `sandbox` is where the agent's commands may write and whether they reach the network:
    `read-only`, `workspace-write` (the default: `cwd`, a private /tmp and the configured
    `writable_roots`, no network) or `danger-full-access` — a mode keeps the config's
    `writable_roots`, a `SandboxPolicy` (`tether.plugins.sandbox`) says everything; every
    command is contained in any mode, and a sandbox that cannot be had refuses commands
    (docs/sandbox.md).
    `claude_options` are Claude Code's session options (`tether.agent.claude_options`: deny
    rules, the tool set, a settings file, added directories, MCP config files), as the command
    line's `--disallowedTools`, `--tools`, `--settings`, `--add-dir` and `--mcp-config` give them.
    `preset` picks the defaults: `"library"` (the default) is an agent of your own — a short
    neutral prompt, no instruction files, no built-ins (only the registry, the timeout policy
    and your `tools`), nothing read or written under `~/.tether` unless `home` is given;
    `"coding"` (what `tether run` and `chat` ask for) is tether's coding agent — its prompt,
    the `AGENTS.md`/`CLAUDE.md` files, the built-in tools, `$TETHER_HOME`. `instructions`,
    `instruction_files` and `builtins`, when given, override the preset.
    `deny` are deny rules in the settings syntax (`Bash(rm:*)`, `Read(./secrets/**)`): a
    matching call is refused with the rule named, whatever the mode. `policy` is a check
    function, or several, `(call: ToolExecution) -> Deny | Ask | None` (sync or async), run in
    the `tools/pre-execute` waterfall for every call (tether.agent.policy, docs/library.md).
    The tools passed in `tools` are the application's: the permission rules allow them without
    asking (deny rules and checks still apply).
    """

    def __init__(
        self,
        *,
        model: LlmConfig | Llm | str | None = None,
        tools: Sequence[ToolSpec] = (),
        plugins: Sequence[PluginSpec] = (),
        instructions: str | None = None,
        instruction_files: bool | None = None,
        cwd: Path | str | None = None,
        home: Path | str | None = None,
        config: Path | str | None = None,
        builtins: bool | None = None,
        session: str | None = None,
        max_steps: int = 50,
        max_parallel_tool_calls: int = 10,
        max_tokens: int | None = None,
        permission_mode: str | None = None,
        allow: Sequence[str] = (),
        on_event: Callable[[AgentEvent], None] | None = None,
        approver: Prompter | None = None,
        context_window: int | None = None,
        sandbox: SandboxChoice | None = None,
        claude_options: ClaudeOptions | None = None,
        deny: Sequence[str] = (),
        policy: Check | Sequence[Check] = (),
        preset: Preset = "library",
    ) -> None:
        self._options = agent_options(
            model=model,
            tools=tools,
            plugins=plugins,
            instructions=instructions,
            instruction_files=instruction_files,
            cwd=cwd,
            home=home,
            config=config,
            builtins=builtins,
            session=session,
            max_steps=max_steps,
            max_parallel_tool_calls=max_parallel_tool_calls,
            max_tokens=max_tokens,
            permission_mode=permission_mode,
            allow=allow,
            approver=approver,
            context_window=context_window,
            sandbox=sandbox,
            claude_options=claude_options,
            deny=deny,
            policy=policy,
            preset=preset,
        )
        self._on_event = on_event
        self._state: Booted | None = None
        self._closed = False
        self._closing = AbortController()
        self._active: asyncio.Future[None] | None = None
        self._sink: Callable[[AgentEvent], None] | None = None

    # -- what a started agent has -------------------------------------------------------------

    @property
    def cwd(self) -> Path:
        return self._options.cwd

    @property
    def started(self) -> bool:
        """Booted (and maybe closed since: the session and its log stay readable)."""
        return self._state is not None

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def context(self) -> Context:
        """The root context the agent booted (its plugins, `ctx.tools`, services)."""
        return self._booted().ctx

    @property
    def llm(self) -> Llm:
        return self._booted().loop.llm

    @property
    def loop(self) -> AgentLoop:
        """The loop that runs the turns; `exec.agent` in the agent's tool calls."""
        return self._booted().loop

    @property
    def session(self) -> SessionLog:
        """The durable session log (`.id`, `.path`, `.events`, `.repair`)."""
        return self._booted().loop.session

    @property
    def session_id(self) -> str:
        """The session's id: `Agent(session=agent.session_id)` continues it later."""
        return self.session.id

    @property
    def store(self) -> SessionStore:
        """The session store under the agent's home (`list_sessions`, `check`, `load`...)."""
        return self._booted().store

    @property
    def context_window(self) -> int | None:
        """The window automatic compaction keeps to (None: off); it shrinks when the model
        refuses a request as too long."""
        state = self._state
        return self._options.context_window if state is None else state.compactor.window

    def _booted(self) -> Booted:
        if self._state is None:
            raise RuntimeError(_NOT_STARTED)
        return self._state

    # -- lifetime --------------------------------------------------------------------------------

    async def start(self) -> Agent:
        """Boot (once): mount the plugins, register the tools, pick the model, open the session.

        Raises `tether.kernel.ConfigError` (bad config), `tether.agent.session.SessionError`
        (the session to resume is missing, locked or unreadable), `ValueError` (a bad argument);
        whatever was mounted is disposed first.
        """
        await self._claim()
        try:
            await self._boot()
        finally:
            self._release()
        return self

    async def __aenter__(self) -> Agent:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Abort the running turn and await it, then release everything the agent started.
        Idempotent. A cancellation while it waits is held until everything is released."""
        self._closed = True
        self._closing.abort(AgentClosed())
        cancelled = False
        while self._active is not None:
            try:
                await asyncio.wait({self._active})
            except asyncio.CancelledError:
                cancelled = True
        state = self._state
        if state is not None and not state.disposed:
            state.disposed = True
            try:
                await shielded(_end_session(state))
            except asyncio.CancelledError:
                cancelled = True
            try:
                await shielded(state.dispose())
            except asyncio.CancelledError:
                cancelled = True
        if cancelled:
            raise asyncio.CancelledError

    async def _boot(self) -> None:
        if self._state is not None:
            return
        self._state = await boot_agent(
            self._options, dispatch=self._dispatch, slow_stop=self._slow_stop
        )

    # -- between turns ---------------------------------------------------------------------------

    async def set_model(self, model: LlmConfig | Llm | str) -> None:
        """Ask `model` from the next turn on (waits for a running turn): an `LlmConfig` (a client
        built and closed with the agent), an `Llm` (yours to close) or a model name on the
        current model's route. The session log records the change with the next request."""
        async with self._slot() as booted:
            current = booted.loop.llm
            if isinstance(model, str):
                booted.loop.llm = Llm(
                    current.transport,
                    provider=current.provider,
                    model=model,
                    retry=current.retry_policy,
                )
            else:
                booted.loop.llm = booted.pick_model(model)

    async def end_session(self, reason: str) -> None:
        """Announce the end of the current session now (`agent/session-end`: the hooks'
        SessionEnd) with `reason` — Claude Code's `prompt_input_exit` when the user left the
        chat at its prompt; closing the agent afterwards announces nothing more ("other" is what
        a close alone says). Nothing when no turn started the session. Waits for a running
        turn."""
        async with self._slot() as booted:
            await booted.loop.end_session(reason, signal=self._closing.signal)

    async def new_session(self) -> SessionLog:
        """Continue in a new, empty session with the same settings (the old log is closed);
        returns it. Waits for a running turn."""
        async with self._slot() as booted:
            await booted.loop.end_session("clear", signal=self._closing.signal)
            session = booted.store.create(cwd=self._options.cwd)
            booted.switch(session, carry_context=False)
            booted.loop.start_source = "clear"
            return session

    async def resume(self, session_id: str) -> SessionLog:
        """Continue in the session `session_id` (repaired first if a crash cut it short:
        `session.repair` says what was done); returns it. Resuming the current session changes
        nothing. Raises `tether.agent.session.SessionError` when it is missing, locked or
        unreadable (the agent stays in its session). Waits for a running turn."""
        async with self._slot() as booted:
            if session_id == booted.loop.session.id:
                return booted.loop.session
            session = booted.store.open(session_id)
            restore_grants(booted.ctx, session)
            booted.switch(session, carry_context=False)
            return session

    async def compact(
        self, *, signal: AbortSignal, focus: str | None = None
    ) -> CompactionFinished | None:
        """Summarise the conversation into a new session that starts from the summary (with
        `focus` stressed) and continue there; the old log is kept and linked. Emits
        `CompactionStarted` and `CompactionFinished` (returned) or `CompactionFailed` (None is
        returned, the conversation stays); None without events when there is nothing to
        summarise. Waits for a running turn."""
        async with self._slot() as booted:
            with AbortSignal.any(signal, self._closing.signal) as fused:
                done = await booted.compactor.run(
                    booted.loop, trigger="manual", focus=focus, signal=fused
                )
            if done is None:
                return None
            old = booted.loop.session.id
            booted.switch(done.session, carry_context=True)
            booted.loop.start_source = "compact"
            return CompactionFinished(old, done.session.id, len(done.summary.split()))

    async def call_tool(
        self, name: str, arguments: Mapping[str, JsonValue], *, signal: AbortSignal
    ) -> ToolExecutionResult:
        """Run one tool call as this agent, outside the conversation: through the whole pipeline
        (permission rules, the approver, hooks, timeouts), with `exec.agent` the agent's loop,
        but not recorded in the session log nor shown to the model. Waits for a running turn."""
        async with self._slot() as booted:
            with AbortSignal.any(signal, self._closing.signal) as fused:
                return await booted.loop.tools.execute(
                    ToolExecutionInput(
                        call_id=f"direct_{uuid.uuid4().hex[:16]}",
                        name=name,
                        arguments=dict(arguments),
                        signal=fused,
                        agent=booted.loop,
                    )
                )

    def inject(self, message: str | UserMessage) -> None:
        """Park `message` (a string is a user message) for the next turn's first request, after
        the prompt; it is recorded in the log with that request."""
        loop = self._booted().loop
        loop.inject(user_message(message) if isinstance(message, str) else message)

    # -- turns -------------------------------------------------------------------------------

    async def run(
        self,
        prompt: str | UserMessage,
        *,
        signal: AbortSignal,
        on_event: Callable[[AgentEvent], None] | None = None,
    ) -> RunResult:
        """Run one turn for `prompt` in the agent's session (boots first if needed) and return
        how it went. Model and tool failures end the turn (`result.outcome.kind == "error"`),
        not the call; an aborted `signal` ends it `aborted`. `on_event` receives the turn's
        events as they happen, `TurnFinished` last (it runs inside the turn: what it raises
        ends the turn with an error). Cancelling the awaiting task aborts the turn, awaits its
        tool calls, records it and re-raises."""
        return await self._run(prompt, signal, on_event, None)

    def run_stream(self, prompt: str | UserMessage, *, signal: AbortSignal) -> RunStream:
        """The turn's events as an async iterator, `TurnFinished` last; see the module note for
        what leaving early does. `async with agent.run_stream(...) as events:` guarantees the
        turn is over (aborted and awaited, if need be) when the block exits."""

        async def turn(deliver: Callable[[AgentEvent], None], stop: AbortSignal) -> RunResult:
            return await self._run(prompt, signal, deliver, stop)

        return RunStream(turn)

    async def _run(
        self,
        prompt: str | UserMessage,
        signal: AbortSignal,
        deliver: Callable[[AgentEvent], None] | None,
        stop: AbortSignal | None,
    ) -> RunResult:
        await self._claim()
        try:
            await self._boot()
            result = await self._turn(prompt, signal, deliver, stop)
        finally:
            self._release()
        finished = TurnFinished(result)
        if self._on_event is not None:
            self._on_event(finished)
        if deliver is not None:
            deliver(finished)
        return result

    async def _turn(
        self,
        prompt: str | UserMessage,
        signal: AbortSignal,
        deliver: Callable[[AgentEvent], None] | None,
        stop: AbortSignal | None,
    ) -> RunResult:
        booted = self._booted()
        collector = _Collector(deliver)
        inputs = [signal, self._closing.signal]
        if stop is not None:
            inputs.append(stop)
        with AbortSignal.any(*inputs) as turn_signal:
            self._sink = collector
            try:
                outcome = await booted.compacting_turn(prompt, turn_signal)
            finally:
                self._sink = None
                for retired in booted.retired:  # left by compaction between steps
                    retired.close()
                booted.retired.clear()
                booted.session = booted.loop.session
        session_id = booted.loop.session.id
        return RunResult(outcome.text, outcome, tuple(collector.records), session_id)

    def _slow_stop(self, exec: ToolExecution, stop: SlowStop) -> None:
        """`tools/slow-stop` for one of this agent's calls (or its subagents'): an event."""
        state = self._state
        agent = exec.agent
        while agent is not None and (state is None or agent is not state.loop):
            agent = getattr(agent, "parent", None)
        if agent is None:
            return
        self._dispatch(ToolSlowToStop(exec.call_id, exec.name, stop.waited_s, stop.where))

    def _dispatch(self, event: AgentEvent) -> None:
        if self._on_event is not None:
            self._on_event(event)
        sink = self._sink
        if sink is not None:
            sink(event)

    async def _claim(self) -> None:
        """Wait until no other turn (or boot) of this agent runs, then hold the slot."""
        while self._active is not None:
            await asyncio.wait({self._active})
        if self._closed:
            raise RuntimeError("the agent is closed; build a new Agent to run more turns")
        self._active = asyncio.get_running_loop().create_future()

    def _release(self) -> None:
        active, self._active = self._active, None
        if active is not None and not active.done():
            active.set_result(None)

    @contextlib.asynccontextmanager
    async def _slot(self) -> AsyncIterator[Booted]:
        """Hold the turn slot (booting first if needed) for work between turns."""
        await self._claim()
        try:
            await self._boot()
            yield self._booted()
        finally:
            self._release()


async def _end_session(booted: Booted) -> None:
    """`agent/session-end` ("other") for the session the closed agent was in, with a signal of
    its own (the agent's is aborted by now): its hooks run to their own timeouts."""
    await booted.loop.end_session("other", signal=AbortController().signal)


class _Collector:
    """One turn's tool call records, and the events passed on to the caller."""

    def __init__(self, deliver: Callable[[AgentEvent], None] | None) -> None:
        self._deliver = deliver
        self._started: dict[str, ToolCallStarted] = {}
        self.records: list[ToolCallRecord] = []

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, ToolCallStarted):
            self._started[event.call_id] = event
        elif isinstance(event, ToolCallFinished):
            started = self._started.pop(event.call_id, None)
            self.records.append(
                ToolCallRecord(
                    call_id=event.call_id,
                    name=event.name,
                    arguments="" if started is None else started.arguments,
                    code=event.code,
                    is_error=event.is_error,
                    duration_ms=event.duration_ms,
                    content=result_text(event.result),
                    queued_ms=event.queued_ms,
                    ran_ms=event.ran_ms,
                )
            )
        if self._deliver is not None:
            self._deliver(event)
