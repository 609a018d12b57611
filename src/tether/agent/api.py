"""The public agent: `Agent(...)`, an agent of your own (or, with `preset="coding"`, tether's
coding agent as the command line boots it), run turn by turn.

Owns: building an agent from a model, tools, plugins and instructions on the boot `tether run`
uses (`tether.agent.boot`: the tool registry and the timeout policy, the JSONL session store;
with the coding preset also the built-in plugins, `$TETHER_HOME/config.yml` and the project's
`tether.yml`), running turns
over its one durable session (`run`, `run_stream`), and disposing everything it started. Does not
own the turn algorithm (`tether.agent.loop`), the events (`tether.agent.events`) or the stream
object (`tether.agent.stream`).

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
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, Final, TypeAlias

from ..core.json import JsonValue
from ..core.signals import AbortController, AbortError, AbortSignal
from ..kernel import Context, tether_home
from ..plugins.approval import Approval, Prompter
from ..plugins.permissions import Permissions
from ..tools.definition import ToolDefinition, tool
from ..tools.execution import ToolExecution, ToolExecutionInput
from ..tools.results import ToolExecutionResult, UserMessage, user_message
from ..tools.slow_stop import SLOW_STOP, SlowStop
from .boot import SandboxChoice, start
from .claude_options import (
    ClaudeOptions,
    Scratch,
    added_directories,
    apply_after_boot,
    builtin_overrides,
)
from .compaction import Compacted
from .compactor import Compactor, overflowed
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
from .instructions import with_instructions
from .llm import LlmConfig
from .llm.plugin import build_llm
from .llm.service import Llm
from .loop import AgentLoop, AgentSettings, TurnOutcome, default_system_prompt
from .policy import LIBRARY_PROMPT, PRESETS, Check, DenyRules, Preset, install_policy
from .session import SessionLog, SessionStore
from .session.events import APPROVAL_DECIDED
from .stream import RunStream, quiesce

__all__ = ["Agent", "AgentClosed", "PluginSpec", "ToolSpec"]

ToolSpec: TypeAlias = ToolDefinition | Callable[..., object]
"""A tool for `Agent(tools=...)`: a `ToolDefinition` (`define_tool`, `@tool`) or a plain typed
function, which is made one with `tool(fn)`."""

PluginSpec: TypeAlias = object | tuple[object, Mapping[str, object]]
"""A plugin for `Agent(plugins=...)`: a plugin object (module, class or function, as
`ctx.plugin` takes), or `(plugin, config)`."""

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
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}: one of {', '.join(map(repr, PRESETS))}")
        coding = preset == "coding"
        builtins = coding if builtins is None else builtins
        instruction_files = coding if instruction_files is None else instruction_files
        if instructions is None and not coding:
            instructions = LIBRARY_PROMPT
        if context_window is not None and (isinstance(context_window, bool) or context_window < 1):
            raise ValueError(
                f"context_window must be a positive number of tokens, got {context_window!r}"
            )
        self._on_event = on_event
        self._approver = approver
        self._context_window = context_window
        self._sandbox = sandbox
        self._claude_options = claude_options or ClaudeOptions()
        self._permission_mode = permission_mode
        self._allow = tuple(allow)
        self._cwd = Path(cwd if cwd is not None else Path.cwd()).resolve()
        self._home = Path(home).expanduser().resolve() if home is not None else None
        self._private_home = home is None and not coding
        """A library agent given no `home` keeps its state in a directory of its own, removed
        when it closes, and reads no config file it was not given."""
        self._settings = AgentSettings(
            cwd=self._cwd,
            system_prompt=instructions,
            max_steps=max_steps,
            max_parallel_tool_calls=max_parallel_tool_calls,
            max_tokens=max_tokens,
        )
        self._tools = tuple(_definition(spec) for spec in tools)
        self._deny = DenyRules(deny, workspace=self._cwd, home=self._home) if deny else None
        self._checks: tuple[Check, ...] = (policy,) if callable(policy) else tuple(policy)
        self._plugins = tuple(plugins)
        self._model = model
        self._instruction_files = instruction_files
        self._config = None if config is None else Path(config)
        self._builtins = builtins
        self._resume = session
        self._state: _Booted | None = None
        self._closed = False
        self._closing = AbortController()
        self._active: asyncio.Future[None] | None = None
        self._sink: Callable[[AgentEvent], None] | None = None

    # -- what a started agent has -------------------------------------------------------------

    @property
    def cwd(self) -> Path:
        return self._cwd

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
        return self._context_window if state is None else state.compactor.window

    def _booted(self) -> _Booted:
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
                await _shielded(_end_session(state))
            except asyncio.CancelledError:
                cancelled = True
            try:
                await _shielded(state.dispose())
            except asyncio.CancelledError:
                cancelled = True
        if cancelled:
            raise asyncio.CancelledError

    async def _boot(self) -> None:
        if self._state is not None:
            return
        home = self._home
        options = self._claude_options
        scratch = Scratch()
        private = (
            tempfile.TemporaryDirectory(prefix="tether-agent-", ignore_cleanup_errors=True)
            if self._private_home
            else None
        )
        if private is not None:
            home = Path(private.name)
        if self._config is not None:
            config_paths: list[Path] | None = [self._config]
        else:
            config_paths = [] if self._private_home else None
        try:
            settings_file = (
                None
                if options.settings is None
                else scratch.file_for(options.settings, "--settings")
            )
            mcp_files = [scratch.file_for(value, "--mcp-config") for value in options.mcp_config]
            directories = added_directories(options, self._cwd, settings_file)
            ctx = await start(
                cwd=self._cwd,
                config_paths=config_paths,
                agent=True,
                home=home,
                builtins=self._builtins,
                sandbox=self._sandbox,
                added_dirs=directories,
                overrides=builtin_overrides(options, settings_file, mcp_files, directories),
            )
        except BaseException:
            scratch.close()
            if private is not None:
                private.cleanup()
            raise
        booted = _Booted(ctx)
        booted.scratch = scratch
        booted.private_home = private
        try:
            for spec in self._plugins:
                plugin, config = spec if isinstance(spec, tuple) else (spec, None)
                await ctx.plugin(plugin, config)
            for definition in self._tools:
                ctx.tools.register(definition)
            apply_after_boot(ctx, options, settings_file)
            self._apply_permissions(ctx)
            self._attach_approver(ctx, booted)
            self._own_tools(ctx)
            checks = self._checks if self._deny is None else (self._deny.check, *self._checks)
            install_policy(ctx, checks)
            ctx.on(SLOW_STOP, self._slow_stop)
            llm = self._pick_model(ctx, booted, self._model)
            booted.store = store = SessionStore(None if home is None else home / "sessions")
            _sweep_once(store)  # what writers killed mid-creation left behind
            booted.compactor = Compactor(store, self._context_window, self._dispatch)
            if self._resume is not None:
                session = store.open(self._resume)
                _restore_grants(ctx, session)
            else:
                session = store.create(cwd=self._cwd)
            booted.session = session
            base = self._settings.system_prompt or default_system_prompt(self._cwd)
            if self._instruction_files:
                base = with_instructions(base, self._cwd, self._home or tether_home())
            booted.settings = replace(self._settings, system_prompt=base)
            booted.loop = self._new_loop(booted, llm, session)
        except BaseException:
            await _shielded(booted.dispose())
            raise
        self._state = booted

    def _apply_permissions(self, ctx: Context) -> None:
        if self._permission_mode is None and not self._allow:
            return
        permissions = ctx.get("permissions")
        if not isinstance(permissions, Permissions):
            raise ValueError(
                "permission_mode and allow need the permissions plugin, which this agent does "
                "not mount (builtins=False, or disabled in the config); drop them or mount it"
            )
        for rule in self._allow:
            permissions.allow(rule)
        if self._permission_mode is not None:
            permissions.set_mode(self._permission_mode)

    def _own_tools(self, ctx: Context) -> None:
        """The tools the application passed are the application's: the permission rules allow
        them (deny rules and `policy` checks still apply; a check can `Ask`)."""
        permissions = ctx.get("permissions")
        if isinstance(permissions, Permissions):
            for definition in self._tools:
                permissions.allow(definition.name)

    def _attach_approver(self, ctx: Context, booted: _Booted) -> None:
        if self._approver is None:
            return
        approval = ctx.get("approval")
        if not isinstance(approval, Approval):
            raise ValueError(
                "approver needs the approval plugin, which this agent does not mount "
                "(builtins=False, or disabled in the config); mount tether.plugins.approval"
            )
        booted.detach_approver = approval.attach(self._approver)

    def _new_loop(self, booted: _Booted, llm: Llm, session: SessionLog) -> AgentLoop:
        loop = AgentLoop(
            tools=booted.ctx.tools.runtime,
            llm=llm,
            session=session,
            settings=booted.settings,
            on_event=self._dispatch,
            ctx=booted.ctx,
        )
        if booted.compactor.window is not None:
            loop.compactor = self._compact_between_steps
        return loop

    def _pick_model(
        self, ctx: Context, booted: _Booted, model: LlmConfig | Llm | str | None
    ) -> Llm:
        if isinstance(model, Llm):
            return model
        if isinstance(model, LlmConfig):
            llm = build_llm(model)
            booted.owned_llms.append(llm)
            return llm
        if model is not None and not isinstance(model, str):
            raise TypeError(f"model: {model!r} is not an LlmConfig, an Llm, a model name or None")
        configured = ctx.get("llm")
        if configured is not None and not isinstance(configured, Llm):
            raise ValueError(
                f"the `llm` service is a {type(configured).__name__}, not a tether Llm; "
                "pass model=LlmConfig(...) or mount tether.agent.llm.plugin"
            )
        if configured is None:
            configured = booted.configured_llm
        if configured is None:
            configured = booted.configured_llm = build_llm()
            booted.owned_llms.append(configured)
        if model is None:
            return configured
        return Llm(
            configured.transport,
            provider=configured.provider,
            model=model,
            retry=configured.retry_policy,
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
                booted.loop.llm = self._pick_model(booted.ctx, booted, model)

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
            session = booted.store.create(cwd=self._cwd)
            self._switch(booted, session, carry_context=False)
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
            _restore_grants(booted.ctx, session)
            self._switch(booted, session, carry_context=False)
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
            self._switch(booted, done.session, carry_context=True)
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

    def _switch(self, booted: _Booted, session: SessionLog, *, carry_context: bool) -> None:
        old = booted.loop
        booted.loop = self._new_loop(booted, old.llm, session)
        if carry_context:
            for message in old.parked_contexts:
                booted.loop.inject(message)
        booted.session = session
        old.session.close()

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
                outcome = await self._compacting_turn(booted, prompt, turn_signal)
            finally:
                self._sink = None
                for retired in booted.retired:  # left by compaction between steps
                    retired.close()
                booted.retired.clear()
                booted.session = booted.loop.session
        session_id = booted.loop.session.id
        return RunResult(outcome.text, outcome, tuple(collector.records), session_id)

    async def _compacting_turn(
        self, booted: _Booted, prompt: str | UserMessage, signal: AbortSignal
    ) -> TurnOutcome:
        """The turn, compacted first when it would not fit the window, and once more after
        compaction when the model refused it as too long."""
        compactor = booted.compactor
        if compactor.window is None:
            return await booted.loop.run_turn(prompt, signal=signal)
        text = prompt if isinstance(prompt, str) else _text_of(prompt)
        if not compactor.fits(booted.loop.session, text):
            await self._compact_into(booted, signal, extra=text)
        outcome = await booted.loop.run_turn(prompt, signal=signal)
        if overflowed(outcome) and not signal.aborted:
            compactor.learn_overflow(booted.loop.session)
            if await self._compact_into(booted, signal, overflow=True):
                outcome = await booted.loop.run_turn(prompt, signal=signal)
        return outcome

    async def _compact_into(
        self, booted: _Booted, signal: AbortSignal, *, extra: str = "", overflow: bool = False
    ) -> bool:
        done = await booted.compactor.run(
            booted.loop, trigger="auto", signal=signal, extra=extra, overflow=overflow
        )
        if done is None:
            return False
        self._switch(booted, done.session, carry_context=True)
        booted.loop.start_source = "compact"
        return True

    async def _compact_between_steps(
        self, loop: AgentLoop, signal: AbortSignal
    ) -> SessionLog | None:
        """`AgentLoop.compactor`: the loop goes on in the new session; the old one is closed
        after the turn."""
        booted = self._booted()
        if booted.compactor.fits(loop.session):
            return None
        done: Compacted | None = await booted.compactor.run(loop, trigger="auto", signal=signal)
        if done is None:
            return None
        booted.retired.append(loop.session)
        return done.session

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
    async def _slot(self) -> AsyncIterator[_Booted]:
        """Hold the turn slot (booting first if needed) for work between turns."""
        await self._claim()
        try:
            await self._boot()
            yield self._booted()
        finally:
            self._release()


_SWEPT: set[Path] = set()
"""The sessions roots an agent of this process has swept."""


def _sweep_once(store: SessionStore) -> None:
    """Sweep a sessions root once per process: a sweep looks into every session directory whose
    writer is alive (it cannot know them clean), so an agent per sweep would make starting a
    thousand agents over one home quadratic. Leftovers of a writer killed later are swept by the
    next process (every `tether` command sweeps)."""
    root = store.root.resolve()
    if root not in _SWEPT:
        store.sweep()
        _SWEPT.add(root)


async def _shielded(work: Coroutine[Any, Any, None]) -> None:
    """Run a disposal to its end even if the caller is cancelled meanwhile (re-raised after;
    a failure of the disposal itself wins)."""
    task = asyncio.ensure_future(work)
    try:
        await quiesce(task)
    finally:
        task.result()


async def _end_session(booted: _Booted) -> None:
    """`agent/session-end` ("other") for the session the closed agent was in, with a signal of
    its own (the agent's is aborted by now): its hooks run to their own timeouts."""
    await booted.loop.end_session("other", signal=AbortController().signal)


class _Booted:
    """What `Agent.start()` built, released in reverse by `dispose`."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
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


def _restore_grants(ctx: Context, session: SessionLog) -> None:
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


def _definition(spec: ToolSpec) -> ToolDefinition:
    if isinstance(spec, ToolDefinition):
        return spec
    if callable(spec):
        return tool(spec)
    raise TypeError(
        f"tools: {spec!r} is neither a ToolDefinition nor a function; pass a @tool function, "
        "define_tool(...) or a typed function"
    )
