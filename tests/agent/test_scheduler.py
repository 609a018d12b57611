"""The step scheduler, driven directly (tool-runtime spec §5.2-§5.4).

Contract: `execute_tool_calls` runs one assistant message's tool calls through the registry's
staged API. Parallel-safe calls overlap, at most `max_parallel` dispatches at a time; an
exclusive call is a barrier; every later call is re-classified just before it starts. One ordered
lane does everything but the body: the durable `tool/call` (when a call starts), pre-execute,
post-execute and the durable `tool/result` (in model order, whatever order bodies settle in),
followed by the result's contexts handed to `accept_context`. Turn cancellation starts nothing
new, awaits and commits what started, and gives every unstarted call a synthetic durable pair of
`ABORTED_BEFORE_DISPATCH` that bypasses the registry. A scheduler failure starts nothing new,
drains in-flight bodies, raises the first failure, and fabricates no result. Cancelling the task
that runs the scheduler aborts the started bodies through their signals, awaits and commits them,
synthesizes the rest, then raises `CancelledError`.

Every body here waits on a gate the test opens; the recorder is in memory and writes
`("call", id)` / `("result", id, code)` into one trace with the contexts (`("context", text)`)
and whatever listeners a test adds, so each test asserts one exact sequence.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest

from tether import AbortController, AbortSignal, ToolDefinition, ToolOutput
from tether.agent.scheduler import (
    StepOutcome,
    ToolCallRequest,
    execute_tool_calls,
    parse_arguments,
)
from tether.agent.session import SessionWriteFailed
from tether.kernel import Context
from tether.tools import ToolRuntime
from tether.tools.execution import ToolExecution
from tether.tools.results import ToolExecutionResult, ToolFailure, UserMessage, user_message

Entry = tuple[str, ...]


class Gate:
    """A body's gate: `entered` when the body reaches it, `exited` when the body returns,
    `signalled` when the body's own signal aborted."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.opened = asyncio.Event()
        self.exited = asyncio.Event()
        self.signalled = asyncio.Event()

    async def wait(self) -> None:
        self.entered.set()
        await self.opened.wait()

    def open(self) -> None:
        self.opened.set()


class Gates(dict[str, Gate]):
    def __missing__(self, key: str) -> Gate:
        gate = self[key] = Gate()
        return gate

    async def entered(self, *ids: str) -> None:
        for call_id in ids:
            await self[call_id].entered.wait()

    def open(self, *ids: str) -> None:
        for call_id in ids:
            self[call_id].open()


def code_of(result: ToolExecutionResult) -> str:
    return (result.code or "ERROR") if isinstance(result, ToolFailure) else "OK"


def text_of(message: UserMessage) -> str:
    return " ".join(str(block.get("text")) for block in message.content)


class MemoryRecorder:
    """An in-memory `StepRecorder`; `fail_on_result=n` raises on the n-th result (1-based)."""

    def __init__(self, trace: list[Entry], *, fail_on_result: int | None = None) -> None:
        self.trace = trace
        self.fail_on_result = fail_on_result
        self.result_attempts = 0
        self.failed = asyncio.Event()

    async def tool_call(self, call: ToolCallRequest) -> int:
        self.trace.append(("call", call.id))
        return len(self.trace) - 1

    async def durable(self) -> None:
        pass

    async def tool_result(
        self, call: ToolCallRequest, call_seq: int, result: ToolExecutionResult
    ) -> None:
        self.result_attempts += 1
        if self.result_attempts == self.fail_on_result:
            self.failed.set()
            raise RuntimeError("session append failed")
        assert self.trace[call_seq] == ("call", call.id)
        self.trace.append(("result", call.id, code_of(result)))


class StepHarness:
    """A mounted runtime with gated tools `par` (parallel-safe) and `excl` (exclusive)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.runtime: ToolRuntime = ctx.tools.runtime
        self.gates = Gates()
        self.bodies: list[str] = []
        self.trace: list[Entry] = []
        self.recorder = MemoryRecorder(self.trace)
        self.published: list[str] = []
        self.unregister_par = self.runtime.register(self.tool("par", parallel=True))
        self.runtime.register(self.tool("excl", parallel=False))
        ctx.on("tools/result", lambda exec, result: self.published.append(exec.call_id))

    def tool(self, name: str, *, parallel: bool) -> ToolDefinition:
        """Arguments: `contexts` (deferred, in order), `conclude`, `ignore_abort`."""
        gates, bodies = self.gates, self.bodies

        async def body(args: Any, exec: Any) -> str:
            bodies.append(exec.call_id)
            gate = gates[exec.call_id]

            def on_abort(_reason: object) -> None:
                gate.signalled.set()
                if not args.get("ignore_abort"):
                    gate.open()

            remove = exec.signal.add_listener(on_abort)
            try:
                await gate.wait()
            finally:
                remove()
            for context in args.get("contexts", ()):
                exec.defer_context(user_message(context))
            if args.get("conclude"):
                exec.conclude_turn()
            gate.exited.set()
            return f"done {exec.call_id}"

        return ToolDefinition(
            name=name,
            description=f"the gated {name} tool",
            parameters={"type": "object"},
            output=ToolOutput(),
            execute=body,
            is_concurrency_safe=(lambda args: True) if parallel else None,
        )

    def accept(self, message: UserMessage) -> None:
        self.trace.append(("context", text_of(message)))

    def start(
        self,
        calls: Sequence[ToolCallRequest],
        *,
        signal: AbortSignal | None = None,
        max_parallel: int = 10,
    ) -> asyncio.Task[StepOutcome]:
        return asyncio.create_task(
            execute_tool_calls(
                self.runtime,
                calls,
                signal=AbortController().signal if signal is None else signal,
                agent=None,
                recorder=self.recorder,
                accept_context=self.accept,
                max_parallel=max_parallel,
            )
        )

    async def run(
        self,
        calls: Sequence[ToolCallRequest],
        *,
        signal: AbortSignal | None = None,
        max_parallel: int = 10,
    ) -> StepOutcome:
        return await self.start(calls, signal=signal, max_parallel=max_parallel)


async def until(condition: Callable[[], bool], *, turns: int = 10_000) -> None:
    """Yield to the loop until `condition()` holds (bounded: fails after `turns` yields)."""
    for _ in range(turns):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never held")


def call(call_id: str, name: str = "par", arguments: str = "{}") -> ToolCallRequest:
    return ToolCallRequest(call_id, name, arguments)


def gated_pre_execute(
    step: StepHarness, gated_call: str, gate: Gate
) -> Callable[[ToolExecution, Any], Any]:
    async def pre(exec: ToolExecution, next: Callable[[], Any]) -> Any:
        step.trace.append(("pre", exec.call_id))
        if exec.call_id == gated_call:
            await gate.wait()
        step.trace.append(("pre-done", exec.call_id))
        return await next()

    return pre


@pytest.fixture
async def step() -> AsyncIterator[StepHarness]:
    root = Context()
    await root.plugin(ToolRuntime)
    yield StepHarness(root)
    await root.dispose()


# -- parallel groups, barriers, the cap ---------------------------------------------------------


async def test_parallel_safe_calls_overlap_and_commit_in_model_order_when_released_in_reverse(
    step: StepHarness,
) -> None:
    task = step.start([call("c1"), call("c2")])
    await step.gates.entered("c1", "c2")
    assert step.trace == [("call", "c1"), ("call", "c2")]

    step.gates.open("c2")
    await step.gates["c2"].exited.wait()
    step.gates.open("c1")
    outcome = await task

    assert step.trace == [
        ("call", "c1"),
        ("call", "c2"),
        ("result", "c1", "OK"),
        ("result", "c2", "OK"),
    ]
    assert [code_of(r) for r in outcome.results] == ["OK", "OK"]
    assert [r.content[0]["text"] for r in outcome.results] == ["done c1", "done c2"]
    assert (outcome.aborted, outcome.concluded, outcome.started) == (False, False, 2)


async def test_an_exclusive_call_starts_after_earlier_calls_commit_and_blocks_later_ones(
    step: StepHarness,
) -> None:
    task = step.start([call("p1"), call("x", "excl"), call("p2")])
    await step.gates.entered("p1")
    assert step.trace == [("call", "p1")]

    step.gates.open("p1")
    await step.gates.entered("x")
    assert step.trace == [("call", "p1"), ("result", "p1", "OK"), ("call", "x")]
    assert step.bodies == ["p1", "x"]

    step.gates.open("x", "p2")
    await task
    assert step.trace == [
        ("call", "p1"),
        ("result", "p1", "OK"),
        ("call", "x"),
        ("result", "x", "OK"),
        ("call", "p2"),
        ("result", "p2", "OK"),
    ]


async def test_the_cap_refills_one_slot_per_settled_dispatch_as_in_the_spec_example(
    step: StepHarness,
) -> None:
    task = step.start([call("c1"), call("c2"), call("c3"), call("c4")], max_parallel=2)
    await step.gates.entered("c1", "c2")
    assert step.trace == [("call", "c1"), ("call", "c2")]
    assert step.bodies == ["c1", "c2"]

    step.gates.open("c1")
    await step.gates.entered("c3")
    assert step.trace == [("call", "c1"), ("call", "c2"), ("result", "c1", "OK"), ("call", "c3")]

    step.gates.open("c2")
    await step.gates.entered("c4")
    step.gates.open("c3", "c4")
    await task
    assert step.trace == [
        ("call", "c1"),
        ("call", "c2"),
        ("result", "c1", "OK"),
        ("call", "c3"),
        ("result", "c2", "OK"),
        ("call", "c4"),
        ("result", "c3", "OK"),
        ("result", "c4", "OK"),
    ]


async def test_max_parallel_one_runs_parallel_safe_calls_serially(step: StepHarness) -> None:
    step.gates.open("c1", "c2", "c3")
    await step.run([call("c1"), call("c2"), call("c3")], max_parallel=1)

    assert step.trace == [
        ("call", "c1"),
        ("result", "c1", "OK"),
        ("call", "c2"),
        ("result", "c2", "OK"),
        ("call", "c3"),
        ("result", "c3", "OK"),
    ]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
async def test_a_cap_that_is_not_a_positive_integer_is_rejected(
    step: StepHarness, bad: Any
) -> None:
    with pytest.raises(ValueError, match=r"^max_parallel_tool_calls must be a positive integer$"):
        await step.run([call("c1")], max_parallel=bad)
    assert step.trace == []


async def test_a_registry_change_by_a_result_observer_makes_a_later_call_exclusive(
    step: StepHarness,
) -> None:
    def observe(exec: ToolExecution, result: ToolExecutionResult) -> None:
        if exec.call_id == "p1":  # replace `par` with an exclusive variant
            step.unregister_par()
            step.runtime.register(step.tool("par", parallel=False))

    step.ctx.on("tools/result", observe)
    step.gates.open("p3")
    task = step.start([call("p1"), call("p2"), call("p3")], max_parallel=2)
    await step.gates.entered("p1", "p2")

    step.gates.open("p1")
    await step.gates["p1"].exited.wait()
    await until(lambda: ("result", "p1", "OK") in step.trace)
    assert step.trace == [("call", "p1"), ("call", "p2"), ("result", "p1", "OK")]

    step.gates.open("p2")
    await task
    assert step.trace == [
        ("call", "p1"),
        ("call", "p2"),
        ("result", "p1", "OK"),
        ("result", "p2", "OK"),
        ("call", "p3"),
        ("result", "p3", "OK"),
    ]


# -- the ordered lane -----------------------------------------------------------------------------


async def test_pre_and_post_execute_run_in_model_order_and_never_overlap(
    step: StepHarness,
) -> None:
    pre_gate, post_gate = Gate(), Gate()

    async def post(exec: ToolExecution, result: ToolExecutionResult, next: Any) -> Any:
        step.trace.append(("post", exec.call_id))
        if exec.call_id == "c1":
            await post_gate.wait()
        step.trace.append(("post-done", exec.call_id))
        return await next()

    step.ctx.on("tools/pre-execute", gated_pre_execute(step, "c1", pre_gate))
    step.ctx.on("tools/post-execute", post)
    task = step.start([call("c1"), call("c2"), call("c3")])
    await pre_gate.entered.wait()
    assert step.trace == [("call", "c1"), ("pre", "c1")]

    pre_gate.open()
    await step.gates.entered("c1", "c2", "c3")
    for call_id in ("c3", "c2"):
        step.gates.open(call_id)
        await step.gates[call_id].exited.wait()
    step.gates.open("c1")
    await post_gate.entered.wait()
    assert ("post", "c2") not in step.trace

    post_gate.open()
    await task
    assert step.trace == [
        ("call", "c1"),
        ("pre", "c1"),
        ("pre-done", "c1"),
        ("call", "c2"),
        ("pre", "c2"),
        ("pre-done", "c2"),
        ("call", "c3"),
        ("pre", "c3"),
        ("pre-done", "c3"),
        ("post", "c1"),
        ("post-done", "c1"),
        ("result", "c1", "OK"),
        ("post", "c2"),
        ("post-done", "c2"),
        ("result", "c2", "OK"),
        ("post", "c3"),
        ("post-done", "c3"),
        ("result", "c3", "OK"),
    ]


async def test_contexts_are_accepted_in_model_order_each_after_its_own_result(
    step: StepHarness,
) -> None:
    task = step.start(
        [
            call("c1", arguments='{"contexts": ["c1-a", "c1-b"]}'),
            call("c2", arguments='{"contexts": ["c2-a"]}'),
        ]
    )
    await step.gates.entered("c1", "c2")
    step.gates.open("c2")
    await step.gates["c2"].exited.wait()
    step.gates.open("c1")
    await task

    assert step.trace == [
        ("call", "c1"),
        ("call", "c2"),
        ("result", "c1", "OK"),
        ("context", "c1-a"),
        ("context", "c1-b"),
        ("result", "c2", "OK"),
        ("context", "c2-a"),
    ]


async def test_a_result_that_concludes_the_turn_marks_the_step_concluded(
    step: StepHarness,
) -> None:
    step.gates.open("c1", "c2")
    outcome = await step.run([call("c1"), call("c2", arguments='{"conclude": true}')])

    assert outcome.concluded is True
    assert [code_of(r) for r in outcome.results] == ["OK", "OK"]


async def test_a_step_without_a_concluding_result_is_not_concluded(step: StepHarness) -> None:
    step.gates.open("c1")
    outcome = await step.run([call("c1")])

    assert outcome.concluded is False


# -- turn cancellation ----------------------------------------------------------------------------


async def test_a_turn_aborted_before_the_group_gets_synthetic_pairs_and_runs_nothing(
    step: StepHarness,
) -> None:
    step.ctx.on("tools/pre-execute", gated_pre_execute(step, "none", Gate()))
    controller = AbortController()
    controller.abort()

    outcome = await step.run([call("c1"), call("c2")], signal=controller.signal)

    assert step.trace == [
        ("call", "c1"),
        ("result", "c1", "ABORTED_BEFORE_DISPATCH"),
        ("call", "c2"),
        ("result", "c2", "ABORTED_BEFORE_DISPATCH"),
    ]
    assert step.bodies == []
    assert step.published == []  # synthetic pairs bypass the registry
    assert (outcome.aborted, outcome.started) == (True, 0)
    assert [r.to_json()["content"] for r in outcome.results] == [
        [{"type": "text", "text": "Error: tool call aborted before dispatch"}]
    ] * 2


async def test_an_abort_inside_pre_execute_commits_that_call_and_synthesizes_the_rest(
    step: StepHarness,
) -> None:
    pre_gate, controller = Gate(), AbortController()
    step.ctx.on("tools/pre-execute", gated_pre_execute(step, "c1", pre_gate))
    task = step.start([call("c1"), call("c2")], signal=controller.signal)
    await pre_gate.entered.wait()

    controller.abort()
    pre_gate.open()
    outcome = await task

    assert step.trace == [
        ("call", "c1"),
        ("pre", "c1"),
        ("pre-done", "c1"),
        ("result", "c1", "ABORTED_BEFORE_DISPATCH"),
        ("call", "c2"),
        ("result", "c2", "ABORTED_BEFORE_DISPATCH"),
    ]
    assert step.bodies == []
    assert step.published == ["c1"]  # c1 went through the registry; c2 is synthetic
    assert (outcome.aborted, outcome.started) == (True, 1)


async def test_an_abort_mid_body_commits_started_calls_then_synthesizes_the_rest_and_the_barrier(
    step: StepHarness,
) -> None:
    controller = AbortController()
    task = step.start(
        [
            call("p1", arguments='{"contexts": ["ctx-p1"]}'),
            call("p2", arguments='{"contexts": ["ctx-p2"]}'),
            call("p3"),
            call("x", "excl"),
        ],
        signal=controller.signal,
        max_parallel=2,
    )
    await step.gates.entered("p1", "p2")

    controller.abort()
    outcome = await task

    assert step.trace == [
        ("call", "p1"),
        ("call", "p2"),
        ("result", "p1", "ABORTED"),
        ("context", "ctx-p1"),
        ("result", "p2", "ABORTED"),
        ("context", "ctx-p2"),
        ("call", "p3"),
        ("result", "p3", "ABORTED_BEFORE_DISPATCH"),
        ("call", "x"),
        ("result", "x", "ABORTED_BEFORE_DISPATCH"),
    ]
    assert step.bodies == ["p1", "p2"]
    assert step.published == ["p1", "p2"]
    assert (outcome.aborted, outcome.started) == (True, 2)


async def test_an_aborted_call_that_kept_its_own_failure_is_committed_with_it(
    step: StepHarness,
) -> None:
    async def failing(args: Any, exec: Any) -> str:
        step.bodies.append(exec.call_id)
        await step.gates[exec.call_id].wait()
        raise RuntimeError("disk full")

    step.runtime.register(
        ToolDefinition(
            name="fails",
            description="fails after its gate",
            parameters={"type": "object"},
            output=ToolOutput(),
            execute=failing,
            is_concurrency_safe=lambda args: True,
        )
    )
    controller = AbortController()
    task = step.start([call("f1", "fails"), call("c2")], signal=controller.signal)
    await step.gates.entered("f1", "c2")

    controller.abort()
    step.gates.open("f1")
    outcome = await task

    assert step.trace == [
        ("call", "f1"),
        ("call", "c2"),
        ("result", "f1", "ERROR"),
        ("result", "c2", "ABORTED"),
    ]
    assert outcome.results[0].to_json()["content"] == [{"type": "text", "text": "Error: disk full"}]


# -- scheduler failure ----------------------------------------------------------------------------


async def test_a_recorder_failure_drains_in_flight_bodies_then_raises_without_fabricating(
    step: StepHarness,
) -> None:
    step.recorder.fail_on_result = 2
    task = step.start([call("c1"), call("c2"), call("c3")])
    await step.gates.entered("c1", "c2", "c3")
    step.gates.open("c2")
    await step.gates["c2"].exited.wait()
    step.gates.open("c1")
    await step.recorder.failed.wait()

    assert not task.done()  # c3 is still in its body: the scheduler waits for it
    step.gates.open("c3")
    with pytest.raises(RuntimeError, match=r"^session append failed$"):
        await task

    assert step.gates["c3"].exited.is_set()
    assert step.trace == [
        ("call", "c1"),
        ("call", "c2"),
        ("call", "c3"),
        ("result", "c1", "OK"),
    ]


async def test_a_log_that_cannot_record_aborts_the_running_bodies_and_still_offers_their_results(
    step: StepHarness,
) -> None:
    """Issue 18: the recorder raising `SessionWriteFailed` (a full disk) is not drained like other
    failures: the running bodies are aborted, awaited, and their results offered to the
    recorder (a failed log holds them); a call that never started gets nothing; the write
    failure is raised."""
    offered: list[tuple[str, str]] = []
    full = SessionWriteFailed("cannot append to session.jsonl: [Errno 28] No space left")

    async def refuse(call: ToolCallRequest, call_seq: int, result: ToolExecutionResult) -> None:
        offered.append((call.id, code_of(result)))
        raise full

    step.recorder.tool_result = refuse  # type: ignore[method-assign]
    task = step.start([call("c1"), call("c2"), call("c3"), call("x", "excl")], max_parallel=3)
    await step.gates.entered("c1", "c2", "c3")
    step.gates.open("c1")

    with pytest.raises(SessionWriteFailed) as raised:
        await task

    assert raised.value is full
    assert step.gates["c2"].signalled.is_set()
    assert step.gates["c3"].signalled.is_set()
    assert offered == [("c1", "OK"), ("c2", "ABORTED"), ("c3", "ABORTED")]
    assert step.trace == [("call", "c1"), ("call", "c2"), ("call", "c3")]
    assert step.bodies == ["c1", "c2", "c3"]


async def test_a_dispatch_failure_stops_a_later_prepare_from_dispatching_and_drains(
    step: StepHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spec's pinned example: c1's dispatch raises, c2 is in flight, c3's prepare is gated
    => c3's body never runs, and the step does not end until c2's body is released."""
    dispatch = step.runtime.dispatch

    async def broken_dispatch(exec: Any) -> Any:
        if exec.call_id == "c1":
            raise RuntimeError("dispatch invariant violated")
        return await dispatch(exec)

    monkeypatch.setattr(step.runtime, "dispatch", broken_dispatch)
    pre_gate = Gate()
    step.ctx.on("tools/pre-execute", gated_pre_execute(step, "c3", pre_gate))
    task = step.start([call("c1"), call("c2"), call("c3")])
    await pre_gate.entered.wait()
    await step.gates.entered("c2")

    step.gates.open("c3")  # if c3 were dispatched, its body would run and show up
    pre_gate.open()
    await until(lambda: ("pre-done", "c3") in step.trace)
    assert not task.done()  # c2 is still in its body
    step.gates.open("c2")
    with pytest.raises(RuntimeError, match=r"^dispatch invariant violated$"):
        await task

    assert step.bodies == ["c2"]
    assert step.published == []
    assert [e for e in step.trace if e[0] in ("call", "result")] == [
        ("call", "c1"),
        ("call", "c2"),
        ("call", "c3"),
    ]


async def test_a_prepare_failure_drains_the_started_body_and_starts_nothing_more(
    step: StepHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = step.runtime.policy

    async def broken_policy(exec: Any) -> Any:
        if exec.call_id == "c2":
            raise RuntimeError("prepare invariant violated")
        return await policy(exec)

    monkeypatch.setattr(step.runtime, "policy", broken_policy)
    task = step.start([call("c1"), call("c2"), call("c3")])
    await step.gates.entered("c1")

    assert not task.done()
    step.gates.open("c1")
    with pytest.raises(RuntimeError, match=r"^prepare invariant violated$"):
        await task

    assert step.bodies == ["c1"]
    assert step.trace == [("call", "c1"), ("call", "c2")]


# -- cancelling the scheduler's task --------------------------------------------------------------


async def test_cancelling_the_scheduler_task_aborts_started_bodies_commits_them_and_synthesizes(
    step: StepHarness,
) -> None:
    task = step.start([call("p1"), call("p2"), call("p3")], max_parallel=2)
    await step.gates.entered("p1", "p2")

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert step.trace == [
        ("call", "p1"),
        ("call", "p2"),
        ("result", "p1", "ABORTED"),
        ("result", "p2", "ABORTED"),
        ("call", "p3"),
        ("result", "p3", "ABORTED_BEFORE_DISPATCH"),
    ]
    assert step.bodies == ["p1", "p2"]
    assert step.published == ["p1", "p2"]


async def test_cancelling_the_scheduler_task_waits_for_a_body_that_ignores_its_abort(
    step: StepHarness,
) -> None:
    task = step.start([call("p1", arguments='{"ignore_abort": true}'), call("p2")])
    await step.gates.entered("p1", "p2")

    task.cancel()
    await step.gates["p1"].signalled.wait()
    await step.gates["p2"].exited.wait()
    assert not task.done()

    step.gates.open("p1")
    with pytest.raises(asyncio.CancelledError):
        await task
    assert step.trace == [
        ("call", "p1"),
        ("call", "p2"),
        ("result", "p1", "ABORTED"),
        ("result", "p2", "ABORTED"),
    ]


async def test_cancelling_the_scheduler_task_inside_pre_execute_never_dispatches_that_call(
    step: StepHarness,
) -> None:
    pre_gate = Gate()
    step.ctx.on("tools/pre-execute", gated_pre_execute(step, "c1", pre_gate))
    task = step.start([call("c1"), call("c2")])
    await pre_gate.entered.wait()

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert step.trace == [
        ("call", "c1"),
        ("pre", "c1"),
        ("result", "c1", "ABORTED_BEFORE_DISPATCH"),
        ("call", "c2"),
        ("result", "c2", "ABORTED_BEFORE_DISPATCH"),
    ]
    assert step.bodies == []
    assert step.published == ["c1"]


async def test_a_step_leaves_no_listener_on_the_turn_signal(step: StepHarness) -> None:
    controller = AbortController()
    step.gates.open("c1", "c2")
    await step.run([call("c1"), call("c2", "excl")], signal=controller.signal)

    assert controller.signal.listener_count == 0


# -- arguments ------------------------------------------------------------------------------------


def test_empty_arguments_parse_as_an_empty_object() -> None:
    assert parse_arguments("") == {}


def test_json_arguments_parse_as_their_value() -> None:
    assert parse_arguments('{"path": "a.txt", "n": [1, 2.5, null]}') == {
        "path": "a.txt",
        "n": [1, 2.5, None],
    }


def test_unparsable_arguments_are_passed_on_as_the_raw_string() -> None:
    assert parse_arguments('{"path": "a.txt"') == '{"path": "a.txt"'


async def test_unparsable_arguments_are_answered_with_invalid_args_before_any_policy(
    step: StepHarness,
) -> None:
    policed: list[str] = []

    async def pre_execute(exec: Any, next: Any) -> Any:
        policed.append(exec.call_id)
        return await next()

    step.ctx.on("tools/pre-execute", pre_execute)

    outcome = await step.run([call("r1", "par", '{"path": "a.txt"')])

    message = (
        "invalid arguments: arguments are not valid JSON: Expecting ',' delimiter (line 1, "
        'column 17); call "par" again with its arguments as one JSON object'
    )
    assert step.trace == [("call", "r1"), ("result", "r1", "INVALID_ARGS")]
    assert outcome.results[0].to_json() == {
        "is_error": True,
        "content": [{"type": "text", "text": f"Error: {message}"}],
        "error": {"message": message, "info": {"name": "ToolArgsError", "code": "INVALID_ARGS"}},
    }
    assert (policed, step.bodies, step.published) == ([], [], ["r1"])
