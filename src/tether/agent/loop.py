"""The agent loop: turns and steps over the model, the tool registry and the durable session.

Owns: one turn's algorithm (capabilities spec §7.3–§7.5) — `turn/start`, steps (claim the inbox,
model request with the tool schemas, stream and record the assistant message, run its tool calls
through the step scheduler), the turn-end reason, and `turn/end` on every path — plus the
next-step inbox where tool contexts wait, and progress events for a UI. Does not own the model
transport (`tether.agent.llm`), the log format (`tether.agent.session`) or scheduling
(`tether.agent.scheduler`).

Extension points, dispatched on the context the agent is given (`AgentLoop(ctx=...)`; none without
one). Listeners receive the agent first; plugins reach its session as `agent.session` and park
context messages for the next step with `agent.inject(message)`:

    agent/session-start  parallel  (agent, source, signal) -> None, before the first turn this
                                   agent runs (inside it); source "startup" (turn 1) or "resume"
    agent/prompt         serial    (agent, prompt, signal) -> str | None: a str rejects the prompt
                                   — the turn ends {"kind": "blocked", "message": <str>} with no
                                   model request, the prompt is not recorded, and contexts injected
                                   while screening it are dropped
    agent/turn-stopping  serial    (agent, turn, stop_hook_active, signal) -> UserMessage | None,
                                   when a step ends the turn normally: a message continues the turn
                                   with another step (bounded by max_steps); stop_hook_active is
                                   true once a listener has continued this turn

Compaction: `agent.compactor`, when set, is awaited before every step after a turn's first; a
session it returns replaces `agent.session` for the rest of the turn (see `AgentLoop.compactor`).

Cancellation: the caller owns the turn's `AbortSignal` (the CLI aborts it on Ctrl-C). The signal
reaches the model stream (closed on abort) and every tool call; started calls are awaited and
recorded, unstarted ones get synthetic `ABORTED_BEFORE_DISPATCH` pairs, and the turn ends
`{"kind": "aborted", "reason": cause}`: the signal's `Ended.cause` when the process is ending
(`{"kind": "signal", "signal": "SIGTERM"}`, `tether.core.ending`), else `{"kind": "user"}`.
Contexts accepted during a turn that ends before a step delivers them (an aborted turn: a
subagent's partial output) are recorded in that turn, after its last results: the next turn
reads them from the log — in this process, or after `--resume` in another.

A session log that cannot be written (`SessionWriteFailed`: a full disk, an I/O error) stops the
turn: the step's started calls are aborted and awaited (their results stay held by the log), and
`run_turn` returns `{"kind": "error", "error": {"code": "SESSION_WRITE_FAILED", ...}}` — a reason
the log could not record. The next `run_turn` first recovers the log (`SessionLog.recover()`:
the cut turn is closed with the held results); while the file still refuses writes, it returns
that reason again without starting a turn.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, cast

from ..core.ending import Ended
from ..core.errors import error_message
from ..core.json import JsonValue, snapshot
from ..core.signals import AbortSignal
from ..kernel import Context, declare_event
from ..kernel.warm_up import WARM_UP_EVENT
from ..tools.arrivals import settle_tools
from ..tools.registry import ToolRuntime
from ..tools.results import UserMessage, user_message
from .events import (
    LoopEvent,
    Notice,
    ReasoningDelta,
    ResponseComplete,
    Retrying,
    StepStarted,
    TextDelta,
)
from .llm import LlmError, LlmRequest
from .llm.service import Llm, RetryNotice
from .messages import ReasoningDelta as ReasoningChunk
from .messages import StreamChunk, TokenUsage, failure_to_json
from .messages import TextDelta as TextChunk
from .offered import offered
from .session import SessionLog, SessionWriteFailed
from .session.events import LLM_RETRY, LLM_RETRY_STARTED, REQUEST_CONTEXT, REQUEST_HEADER

__all__ = [
    "POST_COMPACT_EVENT",
    "PRE_COMPACT_EVENT",
    "PROMPT_EVENT",
    "SESSION_END_EVENT",
    "SESSION_START_EVENT",
    "TURN_STOPPING_EVENT",
    "AgentLoop",
    "AgentSettings",
    "Compactor",
    "TurnOutcome",
    "default_system_prompt",
]


_log = logging.getLogger("tether.agent")

SESSION_START_EVENT: Final = declare_event("agent/session-start")
SESSION_END_EVENT: Final = declare_event("agent/session-end")
"""`(loop, reason, signal)`, parallel: the session the loop runs in ends ("clear": replaced by a
new empty one; "other": the agent is closed). Only after `agent/session-start` ran for it."""
PRE_COMPACT_EVENT: Final = declare_event("agent/pre-compact")
"""`(loop, trigger, focus, signal)`, parallel: the conversation is about to be summarised
(`trigger` "manual" or "auto"; `focus` the instructions given, or "")."""
POST_COMPACT_EVENT: Final = declare_event("agent/post-compact")
"""`(loop, trigger, summary, signal)`, parallel: the conversation was summarised."""
PROMPT_EVENT: Final = declare_event("agent/prompt")
TURN_STOPPING_EVENT: Final = declare_event("agent/turn-stopping")


def default_system_prompt(cwd: Path) -> str:
    """The built-in system prompt: who the agent is, where it works, how it uses tools."""
    return (
        "You are tether, a coding agent working in a terminal on the user's machine.\n"
        f"Workspace: {cwd}\n"
        "Use the tools to inspect and change files and to run commands; read a file before "
        "editing it; prefer small, verifiable steps. When a tool call fails, read the error and "
        "decide what to do next instead of retrying blindly. When the task is done, answer with "
        "a short summary of what you did and what you verified."
    )


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """How the loop runs. `max_steps` bounds model requests per turn."""

    cwd: Path
    system_prompt: str | None = None
    max_steps: int = 50
    max_parallel_tool_calls: int = 10
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.max_steps, bool) or self.max_steps < 1:
            raise ValueError("max_steps must be a positive integer")
        mp = self.max_parallel_tool_calls
        if isinstance(mp, bool) or not isinstance(mp, int) or mp < 1:
            raise ValueError("max_parallel_tool_calls must be a positive integer")


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """How a turn ended: `reason` is the durable `turn/end` reason; `text` the last answer."""

    turn: int
    reason: Mapping[str, JsonValue]
    text: str

    @property
    def kind(self) -> str:
        return str(self.reason.get("kind"))

    @property
    def completed(self) -> bool:
        return self.kind == "completed"


Compactor = Callable[["AgentLoop", AbortSignal], Awaitable[SessionLog | None]]
"""See `AgentLoop.compactor`."""


_UNREAD: Final = object()


def _latest(session: SessionLog, event_type: str, key: str | None) -> object:
    """The data (or one key of it) of the last event of `event_type` in the log, or None."""
    for event in reversed(session.events):
        if event.type == event_type:
            return event.data if key is None else event.data.get(key)
    return None


class _TurnAborted(Exception):
    pass


class AgentLoop:
    """One agent over one session. `await agent.run_turn(prompt, signal=...)` runs a turn.

    The loop is the agent its tool calls carry (`exec.agent`): plugins read `session`,
    `settings`, `llm`, `depth` (delegation depth: 0 for a top-level agent, a subagent's parent
    depth + 1) and `parent` (the delegating agent's loop, None at the top) from it. The public,
    booted agent is `tether.agent.Agent`, which builds one of these.
    """

    def __init__(
        self,
        *,
        tools: ToolRuntime,
        llm: Llm,
        session: SessionLog,
        settings: AgentSettings,
        on_event: Callable[[LoopEvent], None] | None = None,
        ctx: Context | None = None,
        depth: int = 0,
        parent: AgentLoop | None = None,
    ) -> None:
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
            raise ValueError(f"depth must be a non-negative integer, got {depth!r}")
        self.tools = tools
        self.llm = llm
        self.session = session
        self.settings = settings
        self.depth = depth
        self.parent = parent
        self._on_event = on_event
        self._ctx = ctx
        self.env: dict[str, str | None] = {}
        """Environment overlay for the commands this agent's tools run (the `bash` tool applies
        it; a None value unsets a variable): settings `env`, `CLAUDE_ENV_FILE` exports."""
        self._next_step: list[UserMessage] = []
        self._last_header: object = _UNREAD
        self._last_context: object = None
        self._session_started = False
        self._warmed = False  # `kernel/warm-up` emitted (at the first chunk of a response)
        self.start_source: str | None = None
        """How this loop's session began when not by its first turn ("startup") or a resumed
        one ("resume"): "clear" (a new empty session replaced another) or "compact" (it starts
        from a summary of another) — what `agent/session-start` says."""
        self.compactor: Compactor | None = None
        """Asked before every step after the first: a new session (that starts from a summary of
        this one) to continue the turn in, or None to go on. The turn ends `{"kind":
        "compacted", "into_session"}` in the old log and goes on as a new turn in the new one."""

    @property
    def parked_contexts(self) -> Sequence[UserMessage]:
        """Contexts accepted from tool results that the next step (or turn) will deliver."""
        return tuple(self._next_step)

    def inject(self, message: UserMessage) -> None:
        """Park a context message for the next step (it follows the step's other input)."""
        self._next_step.append(message)

    def notify(self, source: str, text: str) -> None:
        """Show `text` to the person running the agent (a `Notice` event), not to the model."""
        self._emit(Notice(source, text))

    def _emit(self, event: LoopEvent) -> None:
        if self._on_event is not None:
            self._on_event(event)

    async def run_turn(self, prompt: str | UserMessage, *, signal: AbortSignal) -> TurnOutcome:
        """Run one turn for `prompt`; always ends with a durable `turn/end`.

        Model and tool failures end the turn (reason `error`), not the caller; an aborted
        `signal` ends it `aborted`. Cancelling the awaiting task records `aborted` and re-raises.
        A log that cannot be written ends it with `SESSION_WRITE_FAILED` (see the module note).
        """
        session = self.session
        message = prompt if isinstance(prompt, UserMessage) else user_message(prompt)
        reason: dict[str, JsonValue] = {"kind": "completed"}
        text = ""
        try:
            if session.failure is not None:  # else a no-op: the repair machinery stays unloaded
                session.recover()
            turn = session.last_turn + 1
            session.turn_start(turn)
        except SessionWriteFailed:
            return TurnOutcome(session.last_turn + 1, self._write_failed(), "")
        try:
            signal.throw_if_aborted()
            await self._start_session(turn, signal)
            rejection = await self._screen(message, signal)
            if rejection is not None:
                reason = {"kind": "blocked", "message": rejection}
            else:
                entering: list[UserMessage] = [message]
                stop_hook_active = False
                for step in range(1, self.settings.max_steps + 1):
                    if step > 1 and self.compactor is not None:
                        replaced = await self.compactor(self, signal)
                        if replaced is not None:
                            session.turn_end(
                                turn, {"kind": "compacted", "into_session": replaced.id}
                            )
                            self.session = session = replaced
                            self._last_header = _UNREAD
                            turn = session.last_turn + 1
                            session.turn_start(turn)
                            self._session_started, self.start_source = False, "compact"
                            await self._start_session(turn, signal)
                    entering += self._next_step
                    self._next_step.clear()
                    session.step_start(turn, step)
                    self._emit(StepStarted(turn, step))
                    for item in entering:
                        session.user_message(item)
                    entering = []
                    try:
                        ending, answer = await self._step(turn, step, signal)
                    finally:
                        with contextlib.suppress(SessionWriteFailed):  # the log's failure sticks
                            session.step_end(turn, step)
                    text = answer or text
                    if ending == "max-tokens":
                        reason = {"kind": "max-tokens"}
                        break
                    if ending == "completed" and not self._next_step:
                        if not await self._keep_going(turn, stop_hook_active, signal):
                            break
                        stop_hook_active = True
                else:
                    reason = {"kind": "max-steps", "steps": self.settings.max_steps}
        except Exception as exc:
            reason = _failure_reason(exc, signal)
        except BaseException:
            with contextlib.suppress(SessionWriteFailed):
                self._record_parked(session)
                session.turn_end(turn, {"kind": "aborted", "reason": {"kind": "interrupted"}})
            raise
        try:
            if session.failure is None:
                if reason.get("kind") != "blocked":
                    self._record_parked(session)
                session.turn_end(turn, reason, sync=False)
                await session.durable()  # before the end is reported (and off the event loop)
        except SessionWriteFailed:
            pass
        if session.failure is not None:
            return TurnOutcome(turn, self._write_failed(), text)
        return TurnOutcome(turn, reason, text)

    def _record_parked(self, session: SessionLog) -> None:
        """Record the contexts still parked when a turn ends (an aborted subagent's partial
        output, a hook's context) as user messages of that turn: the next turn reads them from
        the log, in this process or after a resume. Raises SessionWriteFailed (what was not
        written stays parked)."""
        while self._next_step:
            session.user_message(self._next_step[0])
            del self._next_step[0]

    def _write_failed(self) -> dict[str, JsonValue]:
        """The reason of a turn the session log could not record (never itself recorded)."""
        failure = self.session.failure
        cause = failure.message if failure is not None else "the session log cannot be written"
        if self.session.next_seq == 0:  # nothing was ever written: there is no session file
            message = f"{cause}; the session was not created and the turn did not start"
        else:
            message = (
                f"{cause}; the turn stopped (its started tool calls were stopped and awaited);"
                f" once there is space, `tether sessions resume {self.session.id}` records"
                " their outcome"
            )
        return {"kind": "error", "error": {"message": message, "code": "SESSION_WRITE_FAILED"}}

    async def _start_session(self, turn: int, signal: AbortSignal) -> None:
        if self._ctx is None or self._session_started:
            return
        self._session_started = True
        source = self.start_source or ("startup" if turn == 1 else "resume")
        await self._ctx.parallel(SESSION_START_EVENT, self, source, signal)

    async def end_session(self, reason: str, *, signal: AbortSignal) -> None:
        """`agent/session-end` (see `SESSION_END_EVENT`), once, when the session started here.
        A listener's failure is logged, never raised: the session ends anyway."""
        if self._ctx is None or not self._session_started:
            return
        self._session_started = False
        await self._announce(SESSION_END_EVENT, reason, signal)

    async def compacting(self, trigger: str, focus: str | None, *, signal: AbortSignal) -> None:
        """`agent/pre-compact` (see `PRE_COMPACT_EVENT`); a listener's failure is logged."""
        await self._announce(PRE_COMPACT_EVENT, trigger, focus or "", signal)

    async def compacted(self, trigger: str, summary: str, *, signal: AbortSignal) -> None:
        """`agent/post-compact` (see `POST_COMPACT_EVENT`); a listener's failure is logged."""
        await self._announce(POST_COMPACT_EVENT, trigger, summary, signal)

    async def _announce(self, event: str, *args: object) -> None:
        if self._ctx is None:
            return
        try:
            await self._ctx.parallel(event, self, *args)
        except Exception as exc:
            _log.warning("%s: a listener failed: %s", event, error_message(exc))

    async def _screen(self, prompt: UserMessage, signal: AbortSignal) -> str | None:
        """`agent/prompt`: the rejection reason, or None to go ahead."""
        if self._ctx is None:
            return None
        parked = len(self._next_step)
        rejection = await self._ctx.serial(PROMPT_EVENT, self, prompt, signal)
        if rejection is None:
            return None
        del self._next_step[parked:]
        return rejection if isinstance(rejection, str) and rejection else "prompt rejected"

    async def _keep_going(self, turn: int, stop_hook_active: bool, signal: AbortSignal) -> bool:
        """`agent/turn-stopping`: whether a listener continued the turn with a message."""
        if self._ctx is None:
            return False
        follow_up = await self._ctx.serial(
            TURN_STOPPING_EVENT, self, turn, stop_hook_active, signal
        )
        if not isinstance(follow_up, UserMessage):
            return False
        self._next_step.append(follow_up)
        return True

    def _record_request(self, request: LlmRequest) -> None:
        """`request/header` when the request's header (config, system prompt, tools) is new for
        the log — `initial`, `resume` (this agent's first request over an existing log) or
        `change` — and `request/context` when the provider or model changes (spec §7.4)."""
        session = self.session
        config: dict[str, JsonValue] = {"provider": self.llm.provider, "model": self.llm.model}
        if request.max_tokens is not None:
            config["max_tokens"] = request.max_tokens
        header: dict[str, JsonValue] = {
            "config": config,
            "system": request.system,
            "tools": [cast(dict[str, JsonValue], dict(t)) for t in request.tools],
        }
        if self._last_header is _UNREAD:
            self._last_header = _latest(session, REQUEST_HEADER, "header")
            self._last_context = _latest(session, REQUEST_CONTEXT, None)
            reason = "initial" if self._last_header is None else "resume"
        else:
            reason = "change"
        frozen_header = snapshot(header)
        if reason != "change" or frozen_header != self._last_header:
            session.append(REQUEST_HEADER, {"header": frozen_header, "reason": reason})
            self._last_header = frozen_header
        context = {"provider": self.llm.provider, "model": self.llm.model}
        if context != self._last_context:
            session.append(REQUEST_CONTEXT, context)
            self._last_context = context

    def _system_prompt(self) -> str:
        """The configured (or default) prompt, then the sections of the `prompt_sections`
        service (Code Mode's `tools:code-only` and `tools:sdk`), each after a blank line."""
        base = self.settings.system_prompt or default_system_prompt(self.settings.cwd)
        if self._ctx is None:  # an agent without a context has no prompt sections
            return base
        provider = self._ctx.get("prompt_sections")
        mode = getattr(self.tools, "mode", "native")
        if provider is None:
            if mode != "native":
                raise RuntimeError(
                    f'tools: mode "{mode}" requires a code runtime — mount '
                    'tether.plugins.code_mode.plugin or set the tools mode to "native"'
                )
            return base
        sections: list[str] = provider.sections(self)  # type: ignore[attr-defined]
        return "\n\n".join([base, *(section for section in sections if section)])

    def offered_tools(self) -> list[dict[str, JsonValue]]:
        """The tool schemas the model is sent (`tether.agent.offered`)."""
        return offered(self.tools.schemas(self), self._ctx)

    async def _step(self, turn: int, step: int, signal: AbortSignal) -> tuple[str, str]:
        session = self.session
        if self._ctx is not None:
            await settle_tools(self._ctx, signal=signal)  # tools still arriving (MCP servers)
        request = LlmRequest(
            messages=session.messages(),
            system=self._system_prompt(),
            tools=self.offered_tools(),
            model=self.llm.model,
            max_tokens=self.settings.max_tokens,
            session_id=session.id,
        )
        self._record_request(request)
        await session.durable()  # a durability point: what the request is built from is on disk
        chunk_seqs: list[int] = []

        def on_retry(notice: RetryNotice) -> None:
            session.append(
                LLM_RETRY,
                {
                    "turn": turn,
                    "step": step,
                    "retry": notice.retry,
                    "delay_ms": notice.delay_ms,
                    "failure": failure_to_json(notice.failure),
                },
            )
            policy = notice.policy
            limit = policy.max_retries if policy.mode == "normal" else None
            failure = notice.failure
            self._emit(
                Retrying(notice.retry, limit, notice.delay_ms, failure.message, failure.code)
            )

        def on_retry_started(notice: RetryNotice) -> None:
            session.append(LLM_RETRY_STARTED, {"turn": turn, "step": step, "retry": notice.retry})

        def on_chunk(chunk: StreamChunk) -> None:
            if not self._warmed:  # the first answer is arriving: background work may start
                self._warmed = True
                if self._ctx is not None:
                    self._ctx.emit(WARM_UP_EVENT)
            chunk_seqs.append(session.assistant_chunk(turn, step, chunk).seq)
            if isinstance(chunk, TextChunk):
                self._emit(TextDelta(chunk.text))
            elif isinstance(chunk, ReasoningChunk):
                self._emit(ReasoningDelta(chunk.text))

        try:
            generation = await self.llm.generate(
                request,
                signal=signal,
                on_chunk=on_chunk,
                on_retry=on_retry,
                on_retry_started=on_retry_started,
            )
        except LlmError as exc:
            if exc.partial is not None and signal.aborted:
                session.assistant_message(
                    turn, step, exc.partial, interrupted=True, source_event_seqs=chunk_seqs
                )
            raise
        message = generation.message
        usage: TokenUsage | None = generation.usage
        session.assistant_message(turn, step, message, usage=usage, source_event_seqs=chunk_seqs)
        self._emit(ResponseComplete(turn, step, message, usage, generation.finish.kind))
        if generation.finish.kind == "max-tokens":
            return "max-tokens", message.text
        calls = message.tool_calls
        if not calls:
            return "completed", message.text
        # the step scheduler and its recorder: imported at the first tool call (issue 36)
        from .scheduler import ToolCallRequest, execute_tool_calls
        from .step_log import StepLog

        outcome = await execute_tool_calls(
            self.tools,
            [ToolCallRequest(c.id, c.name, c.arguments) for c in calls],
            signal=signal,
            agent=self,
            recorder=StepLog(session, turn, step, self._emit),
            accept_context=self._next_step.append,
            max_parallel=self.settings.max_parallel_tool_calls,
        )
        if outcome.aborted:
            raise _TurnAborted
        return ("completed" if outcome.concluded else "continue"), message.text


def _failure_reason(exc: BaseException, signal: AbortSignal) -> dict[str, JsonValue]:
    if signal.aborted or isinstance(exc, _TurnAborted):
        ended = signal.reason
        cause: dict[str, JsonValue] = ended.cause if isinstance(ended, Ended) else {"kind": "user"}
        return {"kind": "aborted", "reason": cause}
    if isinstance(exc, LlmError):
        error: dict[str, JsonValue] = {"message": exc.message, "code": exc.code}
        if exc.failure.status is not None:
            error["status"] = exc.failure.status
        return {"kind": "error", "error": error}
    return {"kind": "error", "error": {"message": error_message(exc), "code": "UNKNOWN"}}
