"""The code runtime's run over Monty, driven one suspension at a time (`MontyRuntime`, the
runtime object, is runtime.py's and named here too).

Owns: one run from worker start to worker gone — feeding the prelude and the program, answering
every suspension itself (binding calls become pending futures, futures are delivered as they
settle, OS calls are refused, unknown names raise `NameError`), the budgets of `CodeBudgets` and
the mapping of every ending onto `CodeRunResult` (spec §8.2 kinds). Does not own what a binding
call does (the caller's `ToolBindings.call`) nor stopping it.

Design note
-----------
Contract. tether owns every host call: the program is started with `feed_start` and each
snapshot is answered by this module (never `feed_run` with host callables), so no coroutine runs
on the sandbox's behalf where tether cannot see it. A binding call goes to the bridge at once
(`ToolBindings.call`, which returns the call's future). When the program awaits it at once and
nothing else in the sandbox can run (`allow_eager_await`), the snapshot is answered with
`resume_auto()`, whose only host function is `_eager`, tether's own waiter on that future (it
owns no work): Monty then takes the answer in the same round trip. Otherwise the call is answered
`future` and the program keeps running (`asyncio.gather` overlaps calls); when every sandbox task
is blocked, the `FutureSnapshot` is answered with whichever calls have settled, after waiting for
at least one.

Mechanism. Each run gets its own one-worker pool (`AsyncMonty(min_processes=1,
max_processes=1)`): no state survives a run, and leaving the pool ends the worker process. A stop
— the signal aborting, the wall deadline, the call budget, the output cap — records the first
reason and SIGKILLs the worker (its pid is read right after checkout, before any turn): a busy
sandbox turn then fails with `MontyCrashedError` and a wait for futures wakes up. Budgets inside
the sandbox: `compute_ms` is Monty's per-feed execution clock (`max_feed_duration_secs`), which
runs only while sandboxed code executes — never while suspended on the host or sleeping — so an
awaited tool call does not count against it; `max_memory_mb` is `max_memory`.

Races. A stop that lands between two suspensions is seen before the next answer (`_stopped` is
checked after every await). A binding call that settles after the stop is left to its owner (the
bridge drains it); the sandbox never sees it.

Python decisions. Monty has no exception subclasses, so a failed binding call raises
`RuntimeError("<tool>: <message>")` (the prelude binds `ToolCallError = RuntimeError`). The
program is fed as it is (Monty accepts top-level `await` and `return`); like a REPL, a trailing
expression's value counts as the returned value, and `None` counts as no value.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal as signals
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final

from ...core.errors import error_message
from ...core.json import JsonValue, NotLosslessJson, snapshot, thaw
from ...core.signals import AbortSignal
from ...core.timeout import LOOP_SCHEDULER, Deadline, TimeoutReason, format_ms
from .exceptions import string_exception_arguments
from .prelude import HOST_FUNCTION, prelude_source
from .records import CodeRunError, CodeRunResult, ToolBindings
from .runtime import MontyRuntime
from .seam import BindingRejected, CodeBudgets

__all__ = ["CODE_WALL", "MontyRuntime", "import_monty", "run_program"]


CODE_WALL: Final = "CODE_WALL"
_PROGRAM_FILE: Final = '"<python-input-1>"'
_PRELUDE_FILE: Final = '"<python-input-0>"'
_ASYNC_SLEEPS: Final = frozenset({"system.async_sleep", "asyncio.sleep"})
_SYNC_SLEEPS: Final = frozenset({"system.sleep", "time.sleep"})
_MAX_SUSPENSIONS: Final = 1_000_000  # tether enforces max_calls itself; sleeps count here too


def import_monty() -> ModuleType:
    """`pydantic_monty`, imported on first use. Raises `RuntimeError` naming the extra."""
    try:
        import pydantic_monty
    except ImportError as error:
        raise RuntimeError(
            "Code Mode needs the sandbox: install tether with the `code-mode` extra "
            "(pydantic-monty-client and pydantic-monty-runtime)"
        ) from error
    return pydantic_monty


async def run_program(
    program: str,
    budgets: CodeBudgets,
    bindings: ToolBindings,
    signal: AbortSignal,
    binary_path: str | None,
    on_worker: Callable[[int], None] | None,
) -> CodeRunResult:
    """One run of `program` (checked by `MontyRuntime.run`) to its outcome; see the module
    note. An already aborted `signal` starts nothing."""
    if signal.aborted:
        return CodeRunResult((), error=_abort_error(signal.reason))
    monty = import_monty()
    return await _Run(monty, budgets, bindings, signal, binary_path, on_worker).execute(program)


def _abort_error(reason: object) -> CodeRunError:
    return CodeRunError("abort", f"program aborted: {error_message(reason)}")


@dataclass(slots=True)
class _Pending:
    name: str
    answer: asyncio.Future[JsonValue]


class _Run:
    """One run's state: the worker, the first stop reason, output and pending binding calls."""

    def __init__(
        self,
        monty: ModuleType,
        budgets: CodeBudgets,
        bindings: ToolBindings,
        signal: AbortSignal,
        binary_path: str | None,
        on_worker: Callable[[int], None] | None,
    ) -> None:
        self.m = monty
        self.on_worker = on_worker
        self.budgets = budgets
        self.bindings = bindings
        self.names = frozenset(bindings.names)
        self.binary_path = binary_path
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.stop_reason: CodeRunError | None = None
        self.stopped: asyncio.Future[None] = self.loop.create_future()
        self.pid: int | None = None
        self.output: list[str] = []
        self.output_bytes = 0
        self.calls = 0
        self.pending: dict[int, _Pending] = {}
        self.eager: int | None = None
        self.wall = Deadline(signal, budgets.max_wall_ms, CODE_WALL, LOOP_SCHEDULER)

    # -- stopping ------------------------------------------------------------------------------

    def stop(self, error: CodeRunError) -> None:
        """Record the first stop reason and end the worker (idempotent, any thread)."""
        if self.stop_reason is not None:
            return
        self.stop_reason = error
        self._kill()
        if threading.get_ident() == self.thread:
            self._wake()
        else:
            self.loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        if not self.stopped.done():
            self.stopped.set_result(None)

    def _kill(self) -> None:
        pid = self.pid
        if pid is not None:
            try:
                os.kill(pid, signals.SIGKILL)
            except ProcessLookupError:
                pass

    def _on_wall(self, reason: object) -> None:
        if isinstance(reason, TimeoutReason) and reason.code == CODE_WALL:
            ms = format_ms(self.budgets.max_wall_ms)
            self.stop(CodeRunError("timeout", f"wall-clock ceiling reached ({ms}ms)"))
        else:
            self.stop(_abort_error(reason))

    def on_print(self, stream: str, text: str) -> None:
        size = len(text.encode("utf-8", "surrogatepass"))
        self.output_bytes += size
        if self.output_bytes > self.budgets.max_output_bytes:
            self.stop(self._output_limit())
            return
        self.output.append(text)

    def _output_limit(self) -> CodeRunError:
        return CodeRunError(
            "output-limit", f"program output exceeded {self.budgets.max_output_bytes} bytes"
        )

    # -- the run -------------------------------------------------------------------------------

    async def execute(self, program: str) -> CodeRunResult:
        remove = self.wall.signal.add_listener(self._on_wall)
        try:
            value, has_value, error = await self._in_worker(program)
        finally:
            remove()
            self.wall.dispose()
        if self.stop_reason is not None:
            error = self.stop_reason
        logs = self._logs()
        if error is None and has_value:
            size = sum(len(line.encode("utf-8", "surrogatepass")) + 1 for line in logs)
            size += len(
                json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(
                    "utf-8", "surrogatepass"
                )
            )
            if size > self.budgets.max_output_bytes:
                error = self._output_limit()
        if error is not None:
            return CodeRunResult(logs, error=error)
        return CodeRunResult(logs, value, has_value)

    def _logs(self) -> tuple[str, ...]:
        text = "".join(self.output)
        if not text:
            return ()
        return tuple(text[:-1].split("\n") if text.endswith("\n") else text.split("\n"))

    async def _in_worker(self, program: str) -> tuple[JsonValue, bool, CodeRunError | None]:
        m = self.m
        limits: dict[str, Any] = {
            "max_feed_duration_secs": self.budgets.compute_ms / 1000,
            "max_memory": int(self.budgets.max_memory_mb * 1024 * 1024),
            "max_suspensions": _MAX_SUSPENSIONS,
        }
        pool = m.AsyncMonty(min_processes=1, max_processes=1, binary_path=self.binary_path)
        async with pool:
            if self.stop_reason is not None:
                return None, False, None
            async with pool.checkout(limits=limits, script_name="program.py") as session:
                self.pid = session.worker_pid
                if self.pid is not None and self.on_worker is not None:
                    self.on_worker(self.pid)
                if self.stop_reason is not None:
                    self._kill()
                    return None, False, None
                try:
                    await session.feed_run(
                        prelude_source(self.bindings.names), print_callback=self.on_print
                    )
                    snap = await session.feed_start(
                        string_exception_arguments(program),
                        print_callback=self.on_print,
                        external_lookup={HOST_FUNCTION: self._eager},
                    )
                    while self.stop_reason is None:
                        if isinstance(snap, m.MontyComplete):
                            return self._completion(snap.output)
                        if isinstance(snap, m.AsyncFunctionSnapshot):
                            snap = await self._function(snap)
                        elif isinstance(snap, m.AsyncFutureSnapshot):
                            snap = await self._futures(snap)
                        else:  # a name the program never defined: NameError in the sandbox
                            snap = await snap.resume()
                except m.MontyCrashedError as crash:
                    if self.stop_reason is not None:
                        return None, False, None
                    return None, False, _worker_exit(crash)
                except (m.MontyRuntimeError, m.MontySyntaxError) as raised:
                    if self.stop_reason is not None:
                        return None, False, None
                    return None, False, self._program_error(raised)
                except m.MontyError as other:
                    if self.stop_reason is not None:
                        return None, False, None
                    return None, False, CodeRunError("exception", str(other))
        return None, False, None

    def _completion(self, output: object) -> tuple[JsonValue, bool, CodeRunError | None]:
        if output is None:
            return None, False, None
        try:
            return snapshot(output), True, None
        except NotLosslessJson as problem:
            return (
                None,
                False,
                CodeRunError(
                    "invalid-output", f"program completion must be lossless JSON: {problem}"
                ),
            )

    def _program_error(self, raised: Any) -> CodeRunError:
        headline = str(raised.display("type-msg"))
        if headline.startswith("TimeoutError: feed time limit exceeded"):
            ms = format_ms(self.budgets.compute_ms)
            return CodeRunError("timeout", f"compute budget exhausted ({ms}ms busy)")
        text = str(raised.display("traceback"))
        text = text.replace(_PROGRAM_FILE, '"<program>"').replace(_PRELUDE_FILE, '"<tools>"')
        return CodeRunError("exception", text)

    # -- suspensions ---------------------------------------------------------------------------

    async def _function(self, snap: Any) -> Any:
        if snap.is_os_function:
            fn = snap.function_name
            if fn in _ASYNC_SLEEPS or fn in _SYNC_SLEEPS:
                return await self._sleep(snap, fn in _ASYNC_SLEEPS)
            return await snap.resume_not_handled()  # no filesystem, environment or network
        fn = snap.function_name
        if fn != HOST_FUNCTION:
            return await snap.resume(
                {"exc_type": "NameError", "message": f"name '{fn}' is not defined"}
            )
        args, kwargs = snap.args, snap.kwargs
        if kwargs or len(args) != 2 or not isinstance(args[0], str):
            return await snap.resume(
                {
                    "exc_type": "TypeError",
                    "message": "a tool takes one positional argument, its arguments object: "
                    'await tools.name({"key": "value"})',
                }
            )
        name, raw = args
        if name not in self.names:
            return await snap.resume(
                {"exception": RuntimeError(f'{name}: unknown binding "tools.{name}"')}
            )
        if self.calls >= self.budgets.max_calls:
            self.stop(
                CodeRunError(
                    "timeout", f"call budget exhausted ({self.budgets.max_calls} tool calls)"
                )
            )
            return None
        self.calls += 1
        eager = bool(snap.allow_eager_await)
        answer = _as_future(self.bindings.call(name, raw, alone=eager))
        self.pending[snap.call_id] = _Pending(name, answer)
        if eager:
            # Awaited at once while nothing else can run: Monty accepts the answer in the same
            # round trip, but only through `resume_auto`, which awaits `_eager` (our own waiter
            # on the call's future: it owns no work) instead of surfacing a FutureSnapshot.
            self.eager = snap.call_id
            return await snap.resume_auto()
        return await snap.resume({"future": ...})

    async def _eager(self, *_: object) -> JsonValue:
        """The host function `resume_auto` awaits for an eagerly awaited binding call."""
        call_id, self.eager = self.eager, None
        pending = self.pending.get(call_id) if call_id is not None else None
        if pending is None:
            raise RuntimeError("tool call answered out of order")
        if not pending.answer.done():
            await _first(pending.answer, self.stopped)
            if self.stop_reason is not None:
                raise RuntimeError("run stopped")
        answer = self._answer(call_id)  # type: ignore[arg-type]
        if "exception" in answer:
            raise answer["exception"]
        return answer["return_value"]  # type: ignore[no-any-return]

    async def _sleep(self, snap: Any, is_async: bool) -> Any:
        """A sandbox sleep, timed by tether: `asyncio.sleep` is a pending future like a tool
        call (gathered sleeps overlap); `time.sleep` holds the sandbox until it is over."""
        seconds = snap.args[0] if snap.args else 0
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
            return await snap.resume(
                {"exc_type": "ValueError", "message": "sleep length must be a non-negative number"}
            )
        timer: asyncio.Future[JsonValue] = self.loop.create_future()
        handle = self.loop.call_later(float(seconds), _settle_none, timer)
        timer.add_done_callback(lambda _: handle.cancel())
        if is_async:
            self.pending[snap.call_id] = _Pending("asyncio.sleep", timer)
            return await snap.resume({"future": ...})
        waiting: list[asyncio.Future[Any]] = [timer, self.stopped]
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if self.stop_reason is not None:
            handle.cancel()
            return None
        return await snap.resume({"return_value": None})

    async def _futures(self, snap: Any) -> Any:
        ids: list[int] = list(snap.pending_call_ids)
        ready = self._settled_ids(ids)
        if not ready:
            waiting: list[asyncio.Future[Any]] = [
                self.pending[i].answer for i in ids if i in self.pending
            ]
            await asyncio.wait([*waiting, self.stopped], return_when=asyncio.FIRST_COMPLETED)
            if self.stop_reason is not None:
                return None
            ready = self._settled_ids(ids)
        return await snap.resume({i: self._answer(i) for i in ready})

    def _settled_ids(self, ids: list[int]) -> list[int]:
        return [i for i in ids if i not in self.pending or self.pending[i].answer.done()]

    def _answer(self, call_id: int) -> dict[str, Any]:
        pending = self.pending.pop(call_id, None)
        if pending is None:
            return {"exception": RuntimeError(f"no such pending tool call {call_id}")}
        answer = pending.answer
        if answer.cancelled():
            return {"exception": RuntimeError(f"{pending.name}: tool call cancelled")}
        failure = answer.exception()
        if failure is not None:
            message = (
                failure.message if isinstance(failure, BindingRejected) else error_message(failure)
            )
            return {"exception": RuntimeError(f"{pending.name}: {message}")}
        return {"return_value": thaw(answer.result())}


async def _first(*futures: asyncio.Future[Any]) -> None:
    """Wait until one of `futures` is done (cheaper than `asyncio.wait` on the hot path)."""
    woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def wake(_: object) -> None:
        if not woken.done():
            woken.set_result(None)

    for future in futures:
        future.add_done_callback(wake)
    try:
        await woken
    finally:
        for future in futures:
            future.remove_done_callback(wake)


def _settle_none(timer: asyncio.Future[JsonValue]) -> None:
    if not timer.done():
        timer.set_result(None)


def _as_future(answer: Awaitable[JsonValue]) -> asyncio.Future[JsonValue]:
    if not isinstance(answer, asyncio.Future):
        raise TypeError(
            "ToolBindings.call must return an asyncio.Future (the binding owner owns the work)"
        )
    return answer


def _worker_exit(crash: Any) -> CodeRunError:
    status = getattr(crash, "exit_status", None)
    if isinstance(status, int):
        return CodeRunError("worker-exit", f"worker exited with code {status} before completing")
    return CodeRunError("worker-exit", f"worker exited before completing: {crash}")
