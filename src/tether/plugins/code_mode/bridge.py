"""The dispatch bridge (spec §8.3 steps 2–7, tool-runtime §5.5): a program's binding calls
become nested tool calls through the registry's full pipeline, under a per-run scheduler.

Owns: the run-scoped `AbortController` (linked to the outer call's `exec.signal`, so an outer
abort or `TOOL_TIMEOUT` deadline reaches every inner call), the binding function (lossless
argument snapshot, nested `ToolExecutionInput` with `call_id` `<outer>:code:<n>`, the outer
`root_call_id`, `agent` and `parent` token), the per-run scheduler and the settlement
discipline. Does not own the sandbox (`sandbox.py`) or what the model sees (`tool.py`).

Design note
-----------
Scheduler. One driver task is the ordered lane: it starts calls strictly in submission order —
`create` + `policy` (pre-execute, approval, guards), never overlapping another call's — and
launches only the `dispatch` stage concurrently (in a task of its own; an exclusive call, or one
the program awaits alone, is dispatched by the lane itself, since nothing can overlap it).
Consecutive parallel-classified calls overlap up to `max_parallel`; an exclusive call waits
until nothing started is uncommitted, runs alone, and holds the barrier until its commit.
Classification is re-read right before each start. Commits
(`finalize`/`finish`, contexts forwarded to the outer call, the binding answered, the session
event) happen in submission order.

Settlement. When the program ends for any reason, `settle()` aborts the run controller (reason
`run_code settled`, unless the outer abort came first), abandons queued calls, and awaits the
live dispatches and their commits: every inner call publishes its one result inside the open
`run_code` call. After an abort nothing new is started: a binding call made after the run is
over is rejected (`... not dispatched`); a queued one is abandoned (`... tool call abandoned`)
and — a tether decision beyond the spec, which publishes nothing for it — still gets its one
result, `ABORTED_BEFORE_DISPATCH`, created with the aborted run signal so that no policy stage or
body runs; one in flight gets the abort through its own per-call signal, is awaited, and its
answer is discarded (`... result discarded`).

Log. With an owning agent whose session log takes appends (`agent.session.append`), each start
appends `tool/code-dispatch-start` and each commit `tool/code-dispatch` (children of the
`run_code` call: `parent_call_id`), both durable. The committed content first goes through the
`tools/code-dispatch-log` waterfall (`tether.tools.code_dispatch`; the spill policy bounds big
texts there); the binding is answered before that, and a commit waits only while more than
`max_parallel` appends are pending. Appends keep commit order, and settlement awaits them all, so
every child event is in the log before `run_code`'s own result.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from ...core.errors import error_message
from ...core.json import JsonValue, NotLosslessJson, snapshot
from ...core.signals import AbortController, AbortSignal
from ...tools.code_dispatch import (
    CODE_DISPATCH_LOG,
    CodeDispatchLog,
    ListenerSource,
    logged_content,
)
from ...tools.execution import Call, ToolExecutionInput, ToolRunContext
from ...tools.pipeline import Dispatched
from ...tools.registry import RUN_CODE, ToolRuntime
from ...tools.results import (
    ContentBlock,
    ToolExecutionResult,
    aborted_before_dispatch_result,
    failure_from,
    user_message,
)
from .records import ToolBindings
from .seam import BindingRejected

__all__ = [
    "CODE_DISPATCH",
    "CODE_DISPATCH_START",
    "RUN_CODE",
    "SETTLED",
    "DispatchBridge",
    "SessionAppender",
]


SETTLED: Final = "run_code settled"
CODE_DISPATCH_START: Final = "tool/code-dispatch-start"
CODE_DISPATCH: Final = "tool/code-dispatch"
_IMAGE_SOURCE: Final = {"kind": "plugin", "plugin": "tools-code-mode"}

_log = logging.getLogger("tether.code_mode")


class SessionAppender(Protocol):
    """The part of an agent's session log the bridge writes to (`agent.session`)."""

    def append(self, type: str, data: dict[str, JsonValue]) -> object: ...


@dataclass(slots=True, eq=False)
class _Sub:
    """One binding call on its way through the scheduler."""

    n: int
    name: str
    input: ToolExecutionInput
    answer: asyncio.Future[JsonValue]
    alone: bool = False
    exclusive: bool = False
    call: Call | None = None
    task: asyncio.Task[Dispatched] | None = None
    result: ToolExecutionResult | None = None
    needs_post: bool = False


def _retrieve(answer: asyncio.Future[JsonValue]) -> None:
    """A done callback: mark a rejection as seen (a stopped sandbox never reads it)."""
    if not answer.cancelled():
        answer.exception()


class DispatchBridge:
    """The binding side of one `run_code` execution (see the module note)."""

    def __init__(
        self,
        tools: ToolRuntime,
        exec: ToolRunContext,
        *,
        names: tuple[str, ...],
        max_parallel: int,
        events: ListenerSource | None = None,
    ) -> None:
        if isinstance(max_parallel, bool) or not isinstance(max_parallel, int) or max_parallel < 1:
            raise ValueError("max_parallel_calls must be a positive integer")
        self._tools = tools
        self._exec = exec
        self._max_parallel = max_parallel
        self._names = tuple(name for name in names if name != RUN_CODE)
        self._run = AbortController()
        self._remove_outer = exec.signal.add_listener(self._run.abort)
        self._loop = asyncio.get_running_loop()
        self._count = 0
        self._queue: deque[_Sub] = deque()
        self._started: deque[_Sub] = deque()  # started, not yet committed, in submission order
        self._in_flight = 0
        self._exclusive_open = False
        self._closing = False
        self._wakeup: asyncio.Future[None] | None = None
        self._poked = False
        self._driver: asyncio.Task[None] | None = None
        self._session = _session_of(exec.agent)
        self._events = events
        self._logging: deque[asyncio.Task[None]] = deque()  # shaping or appending, in order

    @property
    def signal(self) -> AbortSignal:
        """The run's signal: the runtime's request signal and every inner call's signal."""
        return self._run.signal

    @property
    def bindings(self) -> ToolBindings:
        """The `tools` namespace for the runtime (never `run_code` itself)."""
        return ToolBindings(self._names, self.call)

    @property
    def dispatched(self) -> int:
        """How many binding calls were submitted to the scheduler."""
        return self._count

    def _over(self) -> str | None:
        signal = self._run.signal
        return error_message(signal.reason) if signal.aborted else None

    # -- the binding function ------------------------------------------------------------------

    def call(
        self, name: str, raw_args: object, *, alone: bool = False
    ) -> asyncio.Future[JsonValue]:
        """Submit one binding call; the future settles when the call commits (spec §8.3 step 4).
        `alone`: nothing else can be submitted until it settles (see `ToolBindings`)."""
        answer: asyncio.Future[JsonValue] = self._loop.create_future()
        answer.add_done_callback(_retrieve)
        over = self._over()
        if over is not None:
            answer.set_exception(
                BindingRejected(f"run_code run is over ({over}); {name} not dispatched")
            )
            return answer
        try:
            arguments = snapshot(raw_args)
        except NotLosslessJson as problem:
            answer.set_exception(
                BindingRejected(f"tool arguments must be lossless JSON: {problem}")
            )
            return answer
        self._count += 1
        n = self._count
        exec = self._exec
        sub = _Sub(
            n,
            name,
            ToolExecutionInput(
                call_id=f"{exec.call_id}:code:{n}",
                root_call_id=exec.root_call_id,
                name=name,
                arguments=arguments,
                agent=exec.agent,
                parent=exec.token,
                signal=self._run.signal,
            ),
            answer,
            alone=alone,
        )
        self._queue.append(sub)
        if self._driver is None:
            self._driver = self._loop.create_task(self._drive(), name=f"run_code {exec.call_id}")
        else:
            self._wake()
        return answer

    # -- settlement ----------------------------------------------------------------------------

    async def settle(self) -> None:
        """Spec §8.3 step 7: end the run, abandon queued calls, await the live ones and their
        commits. Never abandons a started call, also if the awaiting task is cancelled."""
        self._run.abort(SETTLED)
        self._closing = True
        try:
            driver = self._driver
            if driver is None:
                return
            self._wake()
            cancelled: asyncio.CancelledError | None = None
            while not driver.done():
                try:
                    await asyncio.wait([driver])
                except asyncio.CancelledError as exc:
                    cancelled = exc
            driver.result()
            if cancelled is not None:
                raise cancelled
        finally:
            self._remove_outer()

    # -- the driver lane -----------------------------------------------------------------------

    def _wake(self, *_: object) -> None:
        wakeup = self._wakeup
        if wakeup is None:
            self._poked = True  # the lane is busy: it looks again before it next waits
        elif not wakeup.done():
            wakeup.set_result(None)

    async def _drive(self) -> None:
        while True:
            if self._run.signal.aborted:
                self._abandon_queue()
            await self._start_ready()
            await self._commit_ready()
            if self._closing and not self._queue and not self._started:
                await self._drain_logs(0)
                return
            if self._poked or self._startable():
                self._poked = False
                continue
            # Woken by a submission, a dispatch settling (its done callback) or settlement.
            wakeup = self._wakeup = self._loop.create_future()
            try:
                await wakeup
            finally:
                self._wakeup = None

    def _startable(self) -> bool:
        """Whether the lane has work now: a commit, an abandonment or a start."""
        if self._started:
            first = self._started[0]
            if first.result is not None or (first.task is not None and first.task.done()):
                return True  # something to commit
        if not self._queue:
            return False
        if self._run.signal.aborted:
            return True  # queued calls to abandon
        exclusive = self._tools.execution_mode(self._queue[0].input) == "exclusive"
        return self._can_start(exclusive)

    def _can_start(self, exclusive: bool) -> bool:
        if exclusive:
            return not self._started
        return not self._exclusive_open and self._in_flight < self._max_parallel

    def _abandon_queue(self) -> None:
        """The run is over: queued calls are never dispatched. Each still gets its one result —
        created with the run's aborted signal, the registry publishes `ABORTED_BEFORE_DISPATCH`
        without any policy stage or body — and commits in submission order."""
        over = self._over()
        while self._queue:
            sub = self._queue.popleft()
            if not sub.answer.done():
                sub.answer.set_exception(
                    BindingRejected(
                        f"run_code run is over ({over}); {sub.name} tool call abandoned"
                    )
                )
            self._log_start(sub)
            prepared = self._tools.create(sub.input)
            sub.call = prepared.call
            sub.result = prepared.result if prepared.kind != "dispatch" else None
            if sub.result is None:  # unreachable: the run's signal is aborted
                sub.result = aborted_before_dispatch_result()
            self._started.append(sub)

    async def _start_ready(self) -> None:
        while self._queue and not self._run.signal.aborted:
            sub = self._queue[0]
            exclusive = self._tools.execution_mode(sub.input) == "exclusive"
            if not self._can_start(exclusive):
                return
            self._queue.popleft()
            await self._start(sub, exclusive)

    async def _start(self, sub: _Sub, exclusive: bool) -> None:
        sub.exclusive = exclusive
        self._started.append(sub)
        if exclusive:
            self._exclusive_open = True
        self._log_start(sub)
        prepared = self._tools.create(sub.input)
        if prepared.kind == "dispatch":
            sub.call = prepared.call
            try:
                prepared = await self._tools.policy(prepared.call)
            except Exception as exc:  # an invariant violation: the call still gets its result
                sub.result = failure_from(exc)
                return
        sub.call = prepared.call
        if prepared.kind == "dispatch" and (exclusive or (sub.alone and not self._in_flight)):
            # Nothing else can start (exclusive) or arrive (alone) before this call commits:
            # the lane dispatches it itself. The driver task is never cancelled.
            try:
                dispatched = await self._tools.dispatch(prepared.call)
                sub.result = dispatched.result
                sub.needs_post = dispatched.kind == "post-result"
            except Exception as exc:  # only an invariant violation reaches here
                sub.result = failure_from(exc)
        elif prepared.kind == "dispatch":
            task = self._loop.create_task(
                self._tools.dispatch(prepared.call), name=f"tool {sub.name} {sub.input.call_id}"
            )
            task.add_done_callback(self._wake)
            sub.task = task
            self._in_flight += 1
        else:
            sub.result = prepared.result
            sub.needs_post = prepared.kind == "post-result"

    async def _commit_ready(self) -> None:
        while self._started:
            sub = self._started[0]
            task = sub.task
            if task is not None:
                if not task.done():
                    return
                sub.task = None
                self._in_flight -= 1
                try:
                    dispatched = task.result()
                    sub.result = dispatched.result
                    sub.needs_post = dispatched.kind == "post-result"
                except BaseException as exc:  # only an invariant violation reaches here
                    sub.result = failure_from(exc)
                    sub.needs_post = False
            result = sub.result
            if result is None:
                return
            self._started.popleft()
            call = sub.call
            assert call is not None  # set by _start before any result exists
            if sub.needs_post:
                final = await self._tools.finalize(call, result)
            else:
                final = self._tools.finish(call, result)
            if sub.exclusive:
                self._exclusive_open = False
            self._commit(sub, final)
            await self._drain_logs(self._max_parallel)

    def _commit(self, sub: _Sub, final: ToolExecutionResult) -> None:
        exec = self._exec
        if not final.is_error and any(block.get("type") == "image" for block in final.content):
            exec.defer_context(user_message(final.content, _IMAGE_SOURCE))
        for context in final.additional_contexts:
            exec.defer_context(context)
        if not final.is_error and final.concludes_turn:
            exec.conclude_turn()
        answer = sub.answer
        over = self._over()
        if not answer.done():
            if over is not None:
                answer.set_exception(
                    BindingRejected(f"run_code run is over ({over}); {sub.name} result discarded")
                )
            elif final.is_error:
                answer.set_exception(BindingRejected(final.error.message))
            else:
                answer.set_result(final.value)
        self._log_dispatch(sub, final)

    # -- the durable log -----------------------------------------------------------------------

    def _log_dispatch(self, sub: _Sub, final: ToolExecutionResult) -> None:
        """Append `tool/code-dispatch` for a committed sub-call, its content first shaped by the
        `tools/code-dispatch-log` waterfall. Without listeners (and nothing pending) the event is
        appended at once; otherwise a task shapes it and appends it after the ones before it, so
        the log keeps commit order."""
        if self._session is None:
            return
        exec = self._exec
        arguments = snapshot(sub.input.arguments)
        data: dict[str, JsonValue] = {
            "root_call_id": exec.root_call_id,
            "parent_call_id": exec.call_id,
            "sub_call_id": sub.input.call_id,
            "name": sub.name,
            "arguments": arguments,
            **final.to_json(),
        }
        events = self._events
        if events is None or not (self._logging or events.listeners(CODE_DISPATCH_LOG.name)):
            self._append_event(CODE_DISPATCH, data)
            return
        record = CodeDispatchLog(
            root_call_id=exec.root_call_id,
            parent_call_id=exec.call_id,
            sub_call_id=sub.input.call_id,
            name=sub.name,
            arguments=arguments,
            is_error=final.is_error,
            content=final.content,
            agent=exec.agent,
        )
        before = self._logging[-1] if self._logging else None
        task = self._loop.create_task(
            self._shape_and_append(events, record, data, before),
            name=f"log {sub.input.call_id}",
        )
        self._logging.append(task)

    async def _shape_and_append(
        self,
        events: ListenerSource,
        record: CodeDispatchLog,
        data: dict[str, JsonValue],
        before: asyncio.Task[None] | None,
    ) -> None:
        content: Sequence[ContentBlock] = await logged_content(events, record)
        if before is not None:
            await asyncio.wait([before])
        if content is not record.content:
            data["content"] = snapshot(list(content))
        self._append_event(CODE_DISPATCH, data)

    async def _drain_logs(self, keep: int) -> None:
        """Wait until at most `keep` log appends are pending (backpressure; 0 at settlement)."""
        pending = self._logging
        while pending and (len(pending) > keep or pending[0].done()):
            first = pending[0]
            if not first.done():
                await asyncio.wait([first])
            pending.popleft()
            if not first.cancelled() and (error := first.exception()) is not None:
                _log.warning("run_code: could not log a sub-call: %s", error_message(error))

    def _log_start(self, sub: _Sub) -> None:
        self._append_event(
            CODE_DISPATCH_START,
            {
                "root_call_id": self._exec.root_call_id,
                "parent_call_id": self._exec.call_id,
                "sub_call_id": sub.input.call_id,
                "name": sub.name,
                "arguments": snapshot(sub.input.arguments),
            },
        )

    def _append_event(self, type: str, data: dict[str, JsonValue]) -> None:
        session = self._session
        if session is None:
            return
        try:
            session.append(type, data)
        except Exception as exc:  # the log's failure must not strand the call's answer
            _log.warning("run_code: could not append %s: %s", type, error_message(exc))


def _session_of(agent: object | None) -> SessionAppender | None:
    """The owning agent's session log, when the agent has one (`agent.session.append`)."""
    session = getattr(agent, "session", None) if agent is not None else None
    append: Callable[..., object] | None = getattr(session, "append", None)
    return session if callable(append) else None
