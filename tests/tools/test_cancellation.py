"""Cancellation: the precedence of spec §1.15, signal fusion (§1.9, CONTRACT §4.5) and the
cancellation of the task awaiting `execute()` (CONTRACT §4.4).

Contract:
- Cancellation is observed through the caller's signal, captured at creation. The registry never
  aborts a signal it did not create and never races started work: every awaited listener and body
  settles, then the outcome is classified.
- `ABORTED_BEFORE_DISPATCH` means the body was never invoked; `ABORTED` means it was and a success
  was superseded. Only successes are ever replaced; a denial, a listener or wrapper failure, a tool
  failure and a post-execute failure are more specific and kept. A replaced success keeps its
  `additional_contexts`, never its value.
- The body always gets a per-call signal, distinct from the caller's and any wrapper's, that aborts
  with the innermost wrapper's or the caller's reason and is detached from both when the body
  settles. Post-execute and observers see the caller's signal again.
- Cancelling the task that awaits `execute()`: before dispatch the call ends
  `ABORTED_BEFORE_DISPATCH` and the body never starts; during the body, the body is not interrupted
  (it sees its signal abort with an `AbortError`), the one result is published, then
  `CancelledError` propagates.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tether import (
    AbortController,
    AbortError,
    AbortSignal,
    Accept,
    Allow,
    ApprovalRequest,
    Ask,
    Block,
    Deny,
    HarnessError,
    ToolDispatchExecution,
    ToolExecution,
    ToolExecutionResult,
    ToolRunContext,
    ToolSuccess,
    UserMessage,
    user_message,
)
from tether.kernel import Context

from .conftest import (
    ABD_JSON,
    ABORTED_JSON,
    Gate,
    Recorder,
    aborted_signal,
    call,
    denied_json,
    error_json,
    raw_tool,
    text,
)

AGENT = object()


def _body_waiting_for_abort(recorder: Recorder, *, defer: UserMessage | None = None) -> Any:
    """A cooperative body: counts itself, waits for its signal, then succeeds."""

    async def body(args: Any, exec: ToolRunContext) -> str:
        recorder.hit("body")
        if defer is not None:
            exec.defer_context(defer)
        await exec.signal.wait()
        return "finished anyway"

    return body


def _counting_tool(recorder: Recorder, name: str = "echo") -> Any:
    async def body(args: Any, exec: ToolRunContext) -> str:
        recorder.hit("body")
        return "ran"

    return raw_tool(name, body)


# -- row 1 and 4: creation and entry -------------------------------------------------------------


async def test_argument_materialization_failure_wins_over_a_pre_aborted_signal_and_an_unknown_name(
    ctx: Context, recorder: Recorder
) -> None:
    result = await ctx.tools.execute(call("missing", {"x": {1, 2}}, signal=aborted_signal()))

    assert result.to_json() == error_json(
        "tool execution arguments must be losslessly JSON-serializable"
    )
    assert recorder.counts == {"pre": 0, "around": 0, "body": 0, "post": 0, "result": 1}


async def test_a_pre_aborted_call_publishes_one_result_without_entering_any_phase(
    ctx: Context, recorder: Recorder
) -> None:
    ctx.tools.register(_counting_tool(recorder))
    request = call(arguments={"a": [1]}, signal=aborted_signal())

    result = await ctx.tools.execute(request)

    assert result.to_json() == ABD_JSON
    assert recorder.counts == {"pre": 0, "around": 0, "body": 0, "post": 0, "result": 1}
    ((exec, observed),) = recorder.published
    assert observed is result
    assert exec.signal is request.signal
    assert exec.arguments == {"a": [1]}
    with pytest.raises(TypeError):
        exec.arguments["a"].append(2)  # type: ignore[index]
    with pytest.raises(AttributeError):
        exec.signal = AbortSignal()  # type: ignore[misc]


async def test_an_unknown_tool_with_a_pre_aborted_signal_is_aborted_before_dispatch(
    ctx: Context,
) -> None:
    result = await ctx.tools.execute(call("missing", signal=aborted_signal()))

    assert result.to_json() == ABD_JSON


# -- rows 5-8: policy ----------------------------------------------------------------------------


async def test_a_pre_execute_failure_that_settles_after_cancellation_is_kept(
    ctx: Context, recorder: Recorder
) -> None:
    gate, controller = Gate(), AbortController()

    async def pre(exec: ToolExecution, next: Any) -> Any:
        await gate.wait()
        raise RuntimeError("gate interrupted")

    ctx.on("tools/pre-execute", pre, prepend=True)
    ctx.tools.register(_counting_tool(recorder))
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    await gate.entered.wait()

    controller.abort()
    gate.open()

    assert (await task).to_json() == error_json("gate interrupted")
    assert recorder.counts == {"pre": 0, "around": 0, "body": 0, "post": 0, "result": 1}


async def test_a_pre_execute_denial_that_settles_after_cancellation_is_kept(
    ctx: Context, recorder: Recorder
) -> None:
    gate, controller = Gate(), AbortController()

    async def pre(exec: ToolExecution, next: Any) -> Any:
        await gate.wait()
        return Deny("policy denied the call")

    ctx.on("tools/pre-execute", pre, prepend=True)
    ctx.tools.register(_counting_tool(recorder))
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    await gate.entered.wait()

    controller.abort()
    gate.open()

    assert (await task).to_json() == denied_json("policy denied the call")
    assert recorder.counts == {"pre": 0, "around": 0, "body": 0, "post": 1, "result": 1}


async def test_cancellation_while_pre_execute_awaits_skips_dispatch(
    ctx: Context, recorder: Recorder
) -> None:
    gate, controller = Gate(), AbortController()

    async def pre(exec: ToolExecution, next: Any) -> Any:
        await gate.wait()
        return Allow()

    ctx.on("tools/pre-execute", pre, prepend=True)
    ctx.tools.register(_counting_tool(recorder))
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    await gate.entered.wait()

    controller.abort()
    gate.open()

    assert (await task).to_json() == ABD_JSON
    assert recorder.counts == {"pre": 0, "around": 0, "body": 0, "post": 1, "result": 1}


class WaitingApproval:
    """Answers like a real prompt: `cancelled` once the request's signal aborts, else `answer`."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.gate = Gate()

    async def request(self, request: ApprovalRequest) -> str:
        await self.gate.wait()
        return "cancelled" if request.signal.aborted else self.answer


async def _ask_while_cancelled(ctx: Context, approval: WaitingApproval) -> ToolExecutionResult:
    async def ask(exec: ToolExecution, next: Any) -> Any:
        return Ask("confirm")

    ctx.provide("approval", approval)
    ctx.on("tools/pre-execute", ask, prepend=True)
    controller = AbortController()
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal, agent=AGENT)))
    await approval.gate.entered.wait()
    controller.abort()
    approval.gate.open()
    return await task


async def test_cancellation_that_overtakes_approval_is_aborted_before_dispatch(
    ctx: Context, recorder: Recorder
) -> None:
    ctx.tools.register(_counting_tool(recorder))

    result = await _ask_while_cancelled(ctx, WaitingApproval("allowed-once"))

    assert result.to_json() == ABD_JSON
    assert recorder.counts == {"pre": 0, "around": 0, "body": 0, "post": 1, "result": 1}


async def test_a_rejection_that_settles_after_cancellation_is_kept(ctx: Context) -> None:
    class Rejecting(WaitingApproval):
        async def request(self, request: ApprovalRequest) -> str:
            await self.gate.wait()
            return "rejected"

    ctx.tools.register(raw_tool())

    result = await _ask_while_cancelled(ctx, Rejecting("rejected"))

    assert result.to_json() == denied_json('the user rejected tool "echo"')


async def test_an_approval_granted_after_cancellation_meets_the_guards_then_is_aborted(
    ctx: Context, recorder: Recorder
) -> None:
    class Granting(WaitingApproval):
        async def request(self, request: ApprovalRequest) -> str:
            await self.gate.wait()
            return "allowed-once"

    guarded: list[str] = []
    ctx.tools.guard(lambda exec: guarded.append(exec.name))
    ctx.tools.register(_counting_tool(recorder))

    result = await _ask_while_cancelled(ctx, Granting("allowed-once"))

    assert result.to_json() == ABD_JSON
    assert guarded == ["echo"]
    assert recorder.counts["body"] == 0


async def test_cancellation_during_a_guard_is_aborted_before_dispatch(
    ctx: Context, recorder: Recorder
) -> None:
    controller = AbortController()

    def guard(exec: ToolExecution) -> None:
        controller.abort()

    ctx.tools.guard(guard)
    ctx.tools.register(_counting_tool(recorder))

    result = await ctx.tools.execute(call(signal=controller.signal))

    assert result.to_json() == ABD_JSON
    assert recorder.counts == {"pre": 1, "around": 0, "body": 0, "post": 1, "result": 1}


async def test_a_guard_denial_during_cancellation_is_kept(ctx: Context) -> None:
    controller = AbortController()

    def guard(exec: ToolExecution) -> str:
        controller.abort()
        return "guard denial"

    ctx.tools.guard(guard)
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call(signal=controller.signal))

    assert result.to_json() == denied_json("guard denial")


# -- rows 9-14: dispatch -------------------------------------------------------------------------


async def test_a_wrapper_failure_that_settles_after_cancellation_is_kept(
    ctx: Context, recorder: Recorder
) -> None:
    gate, controller = Gate(), AbortController()

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        await gate.wait()
        raise HarnessError("wrapper failed", "WRAPPER_FAILURE")

    ctx.on("tools/execute", wrapper, prepend=True)
    ctx.tools.register(_counting_tool(recorder))
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    await gate.entered.wait()

    controller.abort()
    gate.open()

    assert (await task).to_json() == error_json("wrapper failed", "HarnessError", "WRAPPER_FAILURE")
    assert recorder.counts == {"pre": 1, "around": 0, "body": 0, "post": 0, "result": 1}


async def test_a_wrapper_that_supplies_an_aborted_signal_skips_dispatch(
    ctx: Context, recorder: Recorder
) -> None:
    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        exec.signal = aborted_signal()
        return await next()

    ctx.on("tools/execute", wrapper, prepend=True)
    ctx.tools.register(_counting_tool(recorder))

    result = await ctx.tools.execute(call())

    assert result.to_json() == ABD_JSON
    assert recorder.counts == {"pre": 1, "around": 1, "body": 0, "post": 1, "result": 1}


async def test_cancellation_while_a_wrapper_awaits_before_delegating_skips_dispatch(
    ctx: Context, recorder: Recorder
) -> None:
    gate, controller = Gate(), AbortController()

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        await gate.wait()
        return await next()

    ctx.on("tools/execute", wrapper, prepend=True)
    ctx.tools.register(_counting_tool(recorder))
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    await gate.entered.wait()

    controller.abort()
    gate.open()

    assert (await task).to_json() == ABD_JSON
    assert recorder.counts == {"pre": 1, "around": 1, "body": 0, "post": 1, "result": 1}


async def test_a_tool_owned_failure_after_the_body_observes_cancellation_is_kept(
    ctx: Context,
) -> None:
    controller = AbortController()
    entered = asyncio.Event()

    async def body(args: Any, exec: ToolRunContext) -> str:
        entered.set()
        await exec.signal.wait()
        raise HarnessError("tool failed", "TOOL_FAILURE")

    ctx.tools.register(raw_tool("echo", body))
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    await entered.wait()

    controller.abort()

    assert (await task).to_json() == error_json("tool failed", "HarnessError", "TOOL_FAILURE")


async def test_a_body_that_succeeds_after_cancellation_is_aborted(
    ctx: Context, recorder: Recorder
) -> None:
    controller = AbortController()
    ctx.tools.register(raw_tool("echo", _body_waiting_for_abort(recorder)))
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    while recorder.counts["body"] == 0:
        await asyncio.sleep(0)

    controller.abort()

    assert (await task).to_json() == ABORTED_JSON
    assert recorder.counts == {"pre": 1, "around": 1, "body": 1, "post": 1, "result": 1}


async def test_an_uncooperative_body_keeps_execute_pending_until_it_settles(ctx: Context) -> None:
    gate, controller = Gate(), AbortController()
    note = user_message("still here")

    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.defer_context(note)
        await gate.wait()
        return "late"

    ctx.tools.register(raw_tool("stubborn", body))
    task = asyncio.create_task(ctx.tools.execute(call("stubborn", signal=controller.signal)))
    await gate.entered.wait()

    controller.abort()
    for _ in range(10):
        await asyncio.sleep(0)
    assert not task.done()

    gate.open()
    result = await task
    assert result.to_json() == ABORTED_JSON
    assert result.additional_contexts == (note,)


async def test_a_normalization_failure_after_cancellation_is_kept(
    ctx: Context, recorder: Recorder
) -> None:
    gate, controller = Gate(), AbortController()
    removers: list[Any] = []

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        await next()
        await gate.wait()
        removers[0]()
        return ToolSuccess(value="authored", content=[])

    ctx.on("tools/execute", wrapper, prepend=True)
    removers.append(ctx.tools.register(_counting_tool(recorder)))
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    await gate.entered.wait()

    controller.abort()
    gate.open()

    assert (await task).to_json() == error_json(
        'unknown tool "echo"', "ToolNotFoundError", "UNKNOWN_TOOL"
    )
    assert recorder.counts == {"pre": 1, "around": 1, "body": 1, "post": 0, "result": 1}


async def test_a_late_wrapper_success_is_aborted_and_keeps_the_deferred_contexts(
    ctx: Context, recorder: Recorder
) -> None:
    gate, controller = Gate(), AbortController()
    child = user_message("child")

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        result = await next()
        await gate.wait()
        return result

    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.defer_context(child)
        return "done"

    ctx.on("tools/execute", wrapper, prepend=True)
    ctx.tools.register(raw_tool("echo", body))
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    await gate.entered.wait()

    controller.abort()
    gate.open()

    result = await task
    assert result.to_json() == ABORTED_JSON
    assert result.additional_contexts == (child,)
    assert recorder.counts["post"] == 1


async def test_a_short_circuit_overtaken_by_cancellation_is_aborted_before_dispatch(
    ctx: Context, recorder: Recorder
) -> None:
    gate, controller = Gate(), AbortController()
    note = user_message("wrapper note", {"kind": "plugin", "plugin": "wrapper"})

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        await gate.wait()
        return ToolSuccess(value="cached", content=[], additional_contexts=[note])

    ctx.on("tools/execute", wrapper, prepend=True)
    ctx.tools.register(_counting_tool(recorder))
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    await gate.entered.wait()

    controller.abort()
    gate.open()

    result = await task
    assert result.to_json() == ABD_JSON
    assert result.additional_contexts == (note,)
    assert recorder.counts["body"] == 0


# -- rows 15-17: post-execute and finish ---------------------------------------------------------


async def test_a_post_execute_failure_that_settles_after_cancellation_is_kept(
    ctx: Context,
) -> None:
    gate, controller = Gate(), AbortController()

    async def post(exec: ToolExecution, result: Any, next: Any) -> Any:
        await gate.wait()
        raise HarnessError("post failed", "POST_FAILURE")

    ctx.on("tools/post-execute", post)
    ctx.tools.register(raw_tool())
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    await gate.entered.wait()

    controller.abort()
    gate.open()

    assert (await task).to_json() == error_json("post failed", "HarnessError", "POST_FAILURE")


async def test_a_late_post_execute_success_is_aborted_and_keeps_every_context(
    ctx: Context,
) -> None:
    gate, controller = Gate(), AbortController()
    child, post_note = user_message("child"), user_message("post")

    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.defer_context(child)
        return "done"

    async def post(exec: ToolExecution, result: Any, next: Any) -> Any:
        await gate.wait()
        return Accept(additional_contexts=[post_note])

    ctx.on("tools/post-execute", post)
    ctx.tools.register(raw_tool("echo", body))
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    await gate.entered.wait()

    controller.abort()
    gate.open()

    result = await task
    assert result.to_json() == ABORTED_JSON
    assert result.additional_contexts == (child, post_note)


async def test_a_failure_is_not_replaced_when_cancellation_arrives_during_post_execute(
    ctx: Context,
) -> None:
    gate, controller = Gate(), AbortController()

    async def body(args: Any, exec: ToolRunContext) -> str:
        raise RuntimeError("tool broke")

    async def post(exec: ToolExecution, result: Any, next: Any) -> Any:
        await gate.wait()
        return await next()

    ctx.on("tools/post-execute", post)
    ctx.tools.register(raw_tool("echo", body))
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    await gate.entered.wait()

    controller.abort()
    gate.open()

    assert (await task).to_json() == error_json("tool broke")


async def test_a_block_decided_during_cancellation_is_kept(ctx: Context) -> None:
    controller = AbortController()

    async def post(exec: ToolExecution, result: Any, next: Any) -> Any:
        controller.abort()
        return Block([text("blocked by policy")])

    ctx.on("tools/post-execute", post)
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call(signal=controller.signal))

    assert result.to_json() == {
        "is_error": True,
        "content": [text("blocked by policy")],
        "error": {"message": "blocked by policy"},
    }


async def test_a_finalizer_failure_during_cancellation_is_kept(ctx: Context) -> None:
    controller = AbortController()

    def finalize(exec: ToolExecution, result: ToolExecutionResult) -> None:
        raise RuntimeError("finalizer broke")

    async def body(args: Any, exec: ToolRunContext) -> str:
        controller.abort()
        return "done"

    ctx.tools.register(raw_tool("echo", body, finalize_content=finalize))

    result = await ctx.tools.execute(call(signal=controller.signal))

    assert result.to_json() == error_json("finalizer broke")


# -- signal fusion -------------------------------------------------------------------------------


def _signal_recording_tool(seen: list[AbortSignal], *, wait: bool = False) -> Any:
    async def body(args: Any, exec: ToolRunContext) -> str:
        seen.append(exec.signal)
        if wait:
            await exec.signal.wait()
        return "ok"

    return raw_tool("echo", body)


async def test_the_body_gets_its_own_signal_that_aborts_with_the_callers_reason(
    ctx: Context,
) -> None:
    controller = AbortController()
    seen: list[AbortSignal] = []
    ctx.tools.register(_signal_recording_tool(seen, wait=True))
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    while not seen:
        await asyncio.sleep(0)

    controller.abort("user stop")
    await task

    (body_signal,) = seen
    assert body_signal is not controller.signal
    assert body_signal.aborted
    assert body_signal.reason == "user stop"


async def test_wrappers_see_the_callers_own_signal_when_nothing_replaced_it(ctx: Context) -> None:
    seen: list[AbortSignal] = []

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        seen.append(exec.signal)
        return await next()

    ctx.on("tools/execute", wrapper)
    ctx.tools.register(raw_tool())
    request = call()

    await ctx.tools.execute(request)

    assert seen == [request.signal]
    assert seen[0] is request.signal


async def test_the_body_signal_is_neither_the_callers_nor_the_wrappers_and_follows_the_wrapper(
    ctx: Context,
) -> None:
    caller, replacement = AbortController(), AbortController()
    seen: list[AbortSignal] = []

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        exec.signal = replacement.signal
        try:
            return await next()
        finally:
            exec.signal = caller.signal

    ctx.on("tools/execute", wrapper)
    ctx.tools.register(_signal_recording_tool(seen, wait=True))
    task = asyncio.create_task(ctx.tools.execute(call(signal=caller.signal)))
    while not seen:
        await asyncio.sleep(0)

    replacement.abort("wrapper budget")
    result = await task

    (body_signal,) = seen
    assert body_signal is not caller.signal
    assert body_signal is not replacement.signal
    assert body_signal.reason == "wrapper budget"
    assert not caller.signal.aborted
    assert result.to_json() == ABORTED_JSON


async def test_caller_cancellation_reaches_a_body_running_under_a_wrapper_replacement(
    ctx: Context,
) -> None:
    caller, replacement = AbortController(), AbortController()
    seen: list[AbortSignal] = []

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        exec.signal = replacement.signal
        try:
            return await next()
        finally:
            exec.signal = caller.signal

    ctx.on("tools/execute", wrapper)
    ctx.tools.register(_signal_recording_tool(seen, wait=True))
    task = asyncio.create_task(ctx.tools.execute(call(signal=caller.signal)))
    while not seen:
        await asyncio.sleep(0)

    caller.abort("caller stop")
    result = await task

    assert result.to_json() == ABORTED_JSON
    assert seen[0].reason == "caller stop"
    assert not replacement.signal.aborted


@pytest.mark.parametrize("outcome", ["success", "failure"])
async def test_the_body_signal_detaches_from_the_caller_and_the_wrapper_when_the_body_settles(
    ctx: Context, outcome: str
) -> None:
    caller, replacement = AbortController(), AbortController()
    during: list[tuple[int, int]] = []

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        exec.signal = replacement.signal
        try:
            return await next()
        finally:
            exec.signal = caller.signal

    async def body(args: Any, exec: ToolRunContext) -> str:
        during.append((caller.signal.listener_count, replacement.signal.listener_count))
        if outcome == "failure":
            raise RuntimeError("failed")
        return "ok"

    ctx.on("tools/execute", wrapper)
    ctx.tools.register(raw_tool("echo", body))

    await ctx.tools.execute(call(signal=caller.signal))

    assert during == [(1, 1)]
    assert caller.signal.listener_count == 0
    assert replacement.signal.listener_count == 0


async def test_the_body_signal_detaches_in_the_step_the_body_returns_in(ctx: Context) -> None:
    caller = AbortController()
    seen: list[AbortSignal] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        await asyncio.sleep(0)  # a body that suspended: it settles in a later step of its task
        seen.append(exec.signal)
        asyncio.get_running_loop().call_soon(caller.abort, "after the body")  # before execute()
        return "ok"  # settled in this step: its signal follows nothing from here

    ctx.tools.register(raw_tool("echo", body))

    result = await ctx.tools.execute(call(signal=caller.signal))

    assert result.to_json() == ABORTED_JSON  # the caller aborted before the call ended
    assert caller.signal.aborted
    assert not seen[0].aborted


async def test_the_body_signal_detaches_from_the_caller_without_wrappers(ctx: Context) -> None:
    controller = AbortController()
    ctx.tools.register(raw_tool())

    await ctx.tools.execute(call(signal=controller.signal))

    assert controller.signal.listener_count == 0


async def test_a_wrapper_sees_its_own_replacement_again_after_delegating(ctx: Context) -> None:
    replacement = AbortController()
    after: list[AbortSignal] = []

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        exec.signal = replacement.signal
        result = await next()
        after.append(exec.signal)
        return result

    ctx.on("tools/execute", wrapper)
    ctx.tools.register(raw_tool())

    await ctx.tools.execute(call())

    assert after == [replacement.signal]
    assert after[0] is replacement.signal


async def test_post_execute_and_observers_see_the_callers_signal_even_if_a_wrapper_forgot_it(
    ctx: Context,
) -> None:
    seen: list[tuple[str, AbortSignal]] = []

    async def careless(exec: ToolDispatchExecution, next: Any) -> Any:
        exec.signal = AbortController().signal
        return await next()

    async def post(exec: ToolExecution, result: Any, next: Any) -> Any:
        seen.append(("post", exec.signal))
        return await next()

    ctx.on("tools/execute", careless)
    ctx.on("tools/post-execute", post)
    ctx.on("tools/result", lambda exec, result: seen.append(("result", exec.signal)))
    ctx.tools.register(raw_tool())
    request = call()

    await ctx.tools.execute(request)

    assert seen == [("post", request.signal), ("result", request.signal)]
    assert all(signal is request.signal for _, signal in seen)


# -- cancelling the awaiting task ----------------------------------------------------------------


async def test_cancelling_the_task_before_dispatch_publishes_abd_and_never_starts_the_body(
    ctx: Context, recorder: Recorder
) -> None:
    gate = Gate()

    async def pre(exec: ToolExecution, next: Any) -> Any:
        await gate.wait()
        return await next()

    ctx.on("tools/pre-execute", pre, prepend=True)
    ctx.tools.register(_counting_tool(recorder))
    request = call()
    task = asyncio.create_task(ctx.tools.execute(request))
    await gate.entered.wait()

    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    assert [result.to_json() for _, result in recorder.published] == [ABD_JSON]
    assert recorder.counts["body"] == 0
    assert not request.signal.aborted


async def test_cancelling_the_task_while_a_wrapper_waits_to_delegate_never_starts_the_body(
    ctx: Context, recorder: Recorder
) -> None:
    gate = Gate()

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        await gate.wait()
        return await next()

    ctx.on("tools/execute", wrapper, prepend=True)
    ctx.tools.register(_counting_tool(recorder))
    task = asyncio.create_task(ctx.tools.execute(call()))
    await gate.entered.wait()

    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    assert [result.to_json() for _, result in recorder.published] == [ABD_JSON]
    assert recorder.counts["body"] == 0


async def test_cancelling_the_task_during_the_body_aborts_its_signal_without_interrupting_it(
    ctx: Context, recorder: Recorder
) -> None:
    entered = asyncio.Event()
    inside: list[object] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        entered.set()
        try:
            reason = await exec.signal.wait()
            await asyncio.sleep(0)  # still free to await: nothing cancels this task
        except asyncio.CancelledError:
            inside.append("CancelledError")
            raise
        inside.append(reason)
        return "cleaned up"

    ctx.tools.register(raw_tool("echo", body))
    request = call()
    task = asyncio.create_task(ctx.tools.execute(request))
    await entered.wait()

    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    (reason,) = inside
    assert isinstance(reason, AbortError)
    assert [result.to_json() for _, result in recorder.published] == [ABORTED_JSON]
    assert not request.signal.aborted
    assert request.signal.listener_count == 0


async def test_cancelling_the_task_during_the_body_keeps_a_tool_failure(
    ctx: Context, recorder: Recorder
) -> None:
    entered = asyncio.Event()

    async def body(args: Any, exec: ToolRunContext) -> str:
        entered.set()
        await exec.signal.wait()
        raise HarnessError("partial write", "PARTIAL")

    ctx.tools.register(raw_tool("echo", body))
    task = asyncio.create_task(ctx.tools.execute(call()))
    await entered.wait()

    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    assert [result.to_json() for _, result in recorder.published] == [
        error_json("partial write", "HarnessError", "PARTIAL")
    ]


async def test_cancelling_the_task_during_the_body_keeps_its_deferred_contexts(
    ctx: Context, recorder: Recorder
) -> None:
    entered = asyncio.Event()
    note = user_message("progress so far")

    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.defer_context(note)
        entered.set()
        await exec.signal.wait()
        return "done"

    ctx.tools.register(raw_tool("echo", body))
    task = asyncio.create_task(ctx.tools.execute(call()))
    await entered.wait()

    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    ((_, result),) = recorder.published
    assert result.to_json() == ABORTED_JSON
    assert result.additional_contexts == (note,)


async def test_cancelling_the_task_while_a_wrapper_waits_after_the_body_keeps_the_contexts(
    ctx: Context, recorder: Recorder
) -> None:
    gate = Gate()
    note = user_message("progress so far")

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        result = await next()
        await gate.wait()
        return result

    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.defer_context(note)
        return "done"

    ctx.on("tools/execute", wrapper, prepend=True)
    ctx.tools.register(raw_tool("echo", body))
    task = asyncio.create_task(ctx.tools.execute(call()))
    await gate.entered.wait()

    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    ((_, result),) = recorder.published
    assert result.to_json() == ABORTED_JSON
    assert result.additional_contexts == (note,)


async def test_cancelling_the_task_while_post_execute_waits_publishes_aborted(
    ctx: Context, recorder: Recorder
) -> None:
    gate = Gate()

    async def post(exec: ToolExecution, result: Any, next: Any) -> Any:
        await gate.wait()
        return await next()

    ctx.on("tools/post-execute", post, prepend=True)
    ctx.tools.register(raw_tool())
    task = asyncio.create_task(ctx.tools.execute(call()))
    await gate.entered.wait()

    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    assert [result.to_json() for _, result in recorder.published] == [ABORTED_JSON]


async def test_a_failure_reached_before_the_task_is_cancelled_is_published_unchanged(
    ctx: Context, recorder: Recorder
) -> None:
    gate = Gate()

    async def post(exec: ToolExecution, result: Any, next: Any) -> Any:
        await gate.wait()
        return await next()

    ctx.on("tools/post-execute", post, prepend=True)
    ctx.on("tools/pre-execute", lambda exec, next: _resolved(Deny("denied")))
    ctx.tools.register(raw_tool())
    task = asyncio.create_task(ctx.tools.execute(call()))
    await gate.entered.wait()

    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    assert [result.to_json() for _, result in recorder.published] == [denied_json("denied")]


async def _resolved(value: object) -> object:
    return value


# -- a body that propagates its own signal's abort -----------------------------------------------


async def test_a_body_forwarding_its_signal_with_cancels_ends_aborted(ctx: Context) -> None:
    controller = AbortController()
    entered = asyncio.Event()

    async def body(args: Any, exec: ToolRunContext) -> str:
        async with exec.signal.cancels():
            entered.set()
            await asyncio.sleep(3600)
        return "unreachable"

    ctx.tools.register(raw_tool("echo", body))
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    await entered.wait()

    controller.abort()

    assert (await task).to_json() == ABORTED_JSON


async def test_a_body_raising_its_signals_abort_ends_aborted(ctx: Context) -> None:
    controller = AbortController()
    entered = asyncio.Event()

    async def body(args: Any, exec: ToolRunContext) -> str:
        entered.set()
        await exec.signal.wait()
        exec.signal.throw_if_aborted()
        return "unreachable"

    ctx.tools.register(raw_tool("echo", body))
    task = asyncio.create_task(ctx.tools.execute(call(signal=controller.signal)))
    await entered.wait()

    controller.abort("user stop")

    assert (await task).to_json() == ABORTED_JSON


async def test_cancelling_the_task_of_a_body_that_forwards_with_cancels_publishes_aborted(
    ctx: Context, recorder: Recorder
) -> None:
    entered = asyncio.Event()

    async def body(args: Any, exec: ToolRunContext) -> str:
        async with exec.signal.cancels():
            entered.set()
            await asyncio.sleep(3600)
        return "unreachable"

    ctx.tools.register(raw_tool("echo", body))
    task = asyncio.create_task(ctx.tools.execute(call()))
    await entered.wait()

    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    assert [result.to_json() for _, result in recorder.published] == [ABORTED_JSON]
