"""The tool-call timeout policy plugin (spec §4; CONTRACT §5; seeds/tool-call-timeout-policy).

Contract:
- One `tools/execute` listener. A tool that declares `timeout_ms` runs under
  `deadline(exec.signal, timeout_ms, "TOOL_TIMEOUT")`, installed on `exec.signal` for the delegated
  lifetime and restored afterwards. When that deadline fired first, the result is
  `Error: tool call timed out after <ms>ms` (info `ToolTimeoutError`/`TOOL_TIMEOUT`) whatever the
  dispatch returned — a success superseded as `ABORTED`, or a provider's own abort error — and it
  stays so when the caller aborts later. When the caller aborted first, the dispatch result
  passes through.
- A tool without a budget gets no deadline: a wrapper after the policy sees the caller's own
  signal. Nested deadlines compose by registration order: an outer wrapper's own timeout passes
  through this policy unclassified.
- Post-execute sees the caller's signal; tool-deferred contexts survive the replacement; disposing
  the plugin removes the listener. The deadline never outlives the call.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tether import (
    AbortController,
    AbortSignal,
    HarnessError,
    TimeoutReason,
    ToolDefinition,
    ToolDispatchExecution,
    ToolExecution,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolFailure,
    ToolOutput,
    ToolRunContext,
    deadline,
    timeout_of,
    user_message,
)
from tether.kernel import Context
from tether.plugins import timeout_policy
from tether.testing.clock import ManualClock
from tether.tools import ToolRuntime

ABORTED_JSON = {
    "is_error": True,
    "content": [{"type": "text", "text": "Error: tool call aborted"}],
    "error": {"message": "tool call aborted", "info": {"name": "AbortError", "code": "ABORTED"}},
}


def timeout_json(ms: str) -> dict[str, Any]:
    return {
        "is_error": True,
        "content": [{"type": "text", "text": f"Error: tool call timed out after {ms}ms"}],
        "error": {
            "message": f"tool call timed out after {ms}ms",
            "info": {"name": "ToolTimeoutError", "code": "TOOL_TIMEOUT"},
        },
    }


@pytest.fixture
async def ctx() -> AsyncIterator[Context]:
    """A root context with the runtime and the timeout policy mounted."""
    root = Context()
    await root.plugin(ToolRuntime)
    await root.plugin(timeout_policy)
    yield root
    await root.dispose()


def call(name: str, signal: AbortSignal | None = None) -> ToolExecutionInput:
    return ToolExecutionInput(
        call_id="c1",
        name=name,
        arguments={},
        signal=AbortController().signal if signal is None else signal,
    )


def tool(name: str, execute: Any, timeout_ms: float | None = None) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        description=f"the {name} tool",
        parameters={"type": "object"},
        output=ToolOutput(),
        execute=execute,
        timeout_ms=timeout_ms,
    )


async def resolves_on_abort(args: Any, exec: ToolRunContext) -> str:
    """A cooperative body: waits for its signal, then succeeds."""
    await exec.signal.wait()
    return "finished after abort"


async def returns_at_once(args: Any, exec: ToolRunContext) -> str:
    return "quick"


def probe(seen: list[AbortSignal]) -> Any:
    """A wrapper that records the signal it sees on the way in."""

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        seen.append(exec.signal)
        return await next()

    return wrapper


def test_the_plugin_declares_its_name_inject_and_code() -> None:
    assert timeout_policy.name == "tool-call-timeout-policy"
    assert tuple(timeout_policy.inject) == ("tools",)
    assert timeout_policy.TOOL_TIMEOUT == "TOOL_TIMEOUT"


async def test_a_deadline_that_fires_is_a_tool_timeout_with_the_exact_text(ctx: Context) -> None:
    ctx.tools.register(tool("slow", resolves_on_abort, timeout_ms=50))

    result = await ctx.tools.execute(call("slow"))

    assert result.to_json() == timeout_json("50")
    assert isinstance(result, ToolFailure)
    assert result.error.info is not None
    assert (result.error.info.name, result.error.info.code) == ("ToolTimeoutError", "TOOL_TIMEOUT")


async def test_a_fractional_budget_is_printed_as_given(ctx: Context) -> None:
    ctx.tools.register(tool("slow", resolves_on_abort, timeout_ms=1.5))

    result = await ctx.tools.execute(call("slow"))

    assert result.to_json() == timeout_json("1.5")


async def test_the_body_sees_the_deadline_as_its_signal_reason(ctx: Context) -> None:
    reasons: list[object] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        reasons.append(await exec.signal.wait())
        return "late"

    ctx.tools.register(tool("slow", body, timeout_ms=20))

    await ctx.tools.execute(call("slow"))

    (reason,) = reasons
    assert isinstance(reason, TimeoutReason)
    assert (reason.code, reason.timeout_ms) == ("TOOL_TIMEOUT", 20)


async def test_a_deadline_first_then_a_caller_abort_is_still_a_tool_timeout(ctx: Context) -> None:
    controller = AbortController()
    timed_out, resume = asyncio.Event(), asyncio.Event()

    async def body(args: Any, exec: ToolRunContext) -> str:
        await exec.signal.wait()
        timed_out.set()
        await resume.wait()  # still cleaning up when the caller aborts
        return "late"

    ctx.tools.register(tool("slow", body, timeout_ms=20))
    task = asyncio.create_task(ctx.tools.execute(call("slow", controller.signal)))
    await timed_out.wait()

    controller.abort()
    resume.set()

    assert (await task).to_json() == timeout_json("20")


async def test_a_caller_abort_before_the_deadline_passes_through_as_aborted(
    ctx: Context,
) -> None:
    controller = AbortController()
    entered = asyncio.Event()

    async def body(args: Any, exec: ToolRunContext) -> str:
        entered.set()
        await exec.signal.wait()
        return "finished after abort"

    ctx.tools.register(tool("slow", body, timeout_ms=60_000))
    task = asyncio.create_task(ctx.tools.execute(call("slow", controller.signal)))
    await entered.wait()

    controller.abort()

    assert (await task).to_json() == ABORTED_JSON


async def test_a_provider_abort_error_under_our_deadline_is_a_tool_timeout(ctx: Context) -> None:
    async def fetch(args: Any, exec: ToolRunContext) -> str:
        await exec.signal.wait()
        raise HarnessError("fetch aborted", "WEB_ABORTED")

    ctx.tools.register(tool("web_fetch", fetch, timeout_ms=20))

    result = await ctx.tools.execute(call("web_fetch"))

    assert result.to_json() == timeout_json("20")


async def test_a_provider_abort_error_after_a_caller_abort_is_kept(ctx: Context) -> None:
    controller = AbortController()
    entered = asyncio.Event()

    async def fetch(args: Any, exec: ToolRunContext) -> str:
        entered.set()
        await exec.signal.wait()
        raise HarnessError("fetch aborted", "WEB_ABORTED")

    ctx.tools.register(tool("web_fetch", fetch, timeout_ms=60_000))
    task = asyncio.create_task(ctx.tools.execute(call("web_fetch", controller.signal)))
    await entered.wait()

    controller.abort()

    assert (await task).to_json() == {
        "is_error": True,
        "content": [{"type": "text", "text": "Error: fetch aborted"}],
        "error": {
            "message": "fetch aborted",
            "info": {"name": "HarnessError", "code": "WEB_ABORTED"},
        },
    }


async def test_a_body_that_finishes_within_its_budget_succeeds(ctx: Context) -> None:
    ctx.tools.register(tool("quick", returns_at_once, timeout_ms=60_000))

    result = await ctx.tools.execute(call("quick"))

    assert result.to_json() == {
        "is_error": False,
        "content": [{"type": "text", "text": "quick"}],
    }


async def test_a_tool_without_a_budget_gets_no_deadline(ctx: Context) -> None:
    seen: list[AbortSignal] = []
    ctx.on("tools/execute", probe(seen))
    ctx.tools.register(tool("plain", returns_at_once))
    request = call("plain")

    result = await ctx.tools.execute(request)

    assert result.to_json() == {"is_error": False, "content": [{"type": "text", "text": "quick"}]}
    assert seen == [request.signal]
    assert seen[0] is request.signal


async def test_a_tool_with_a_budget_runs_under_a_derived_signal(ctx: Context) -> None:
    seen: list[AbortSignal] = []
    ctx.on("tools/execute", probe(seen))
    ctx.tools.register(tool("quick", returns_at_once, timeout_ms=60_000))
    request = call("quick")

    await ctx.tools.execute(request)

    (signal,) = seen
    assert signal is not request.signal
    assert not signal.aborted


async def test_an_unknown_tool_passes_through(ctx: Context) -> None:
    result = await ctx.tools.execute(call("missing"))

    assert result.to_json() == {
        "is_error": True,
        "content": [{"type": "text", "text": 'Error: unknown tool "missing"'}],
        "error": {
            "message": 'unknown tool "missing"',
            "info": {"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"},
        },
    }


async def test_an_outer_deadline_that_fires_first_passes_through_this_policy() -> None:
    clock = ManualClock()
    root = Context()
    await root.plugin(ToolRuntime)
    passed_through: list[dict[str, Any]] = []
    entered = asyncio.Event()

    async def outer(exec: ToolDispatchExecution, next: Any) -> Any:
        upstream = exec.signal
        with deadline(upstream, 30, "OUTER_TIMEOUT", scheduler=clock) as limit:
            exec.signal = limit.signal
            try:
                result = await next()
            finally:
                exec.signal = upstream
            passed_through.append(result.to_json())
            if timeout_of(limit.signal, "OUTER_TIMEOUT") is not None:
                return ToolFailure(
                    error=_outer_error(), content=[{"type": "text", "text": "Error: outer"}]
                )
            return result

    async def body(args: Any, exec: ToolRunContext) -> str:
        entered.set()
        await exec.signal.wait()
        return "finished after abort"

    root.on("tools/execute", outer)  # registered first: runs outside the policy
    await root.plugin(timeout_policy)
    root.tools.register(tool("slow", body, timeout_ms=60_000))
    try:
        task = asyncio.create_task(root.tools.execute(call("slow")))
        await entered.wait()

        clock.advance(30)

        result = await task
        assert passed_through == [ABORTED_JSON]
        assert result.to_json() == {
            "is_error": True,
            "content": [{"type": "text", "text": "Error: outer"}],
            "error": {
                "message": "outer timed out",
                "info": {"name": "OuterTimeoutError", "code": "OUTER_TIMEOUT"},
            },
        }
    finally:
        await root.dispose()


def _outer_error() -> Any:
    from tether import ErrorDetail, ErrorInfo

    return ErrorDetail("outer timed out", ErrorInfo("OuterTimeoutError", "OUTER_TIMEOUT"))


async def test_post_execute_sees_the_callers_signal(ctx: Context) -> None:
    seen: list[AbortSignal] = []

    async def post(exec: ToolExecution, result: ToolExecutionResult, next: Any) -> Any:
        seen.append(exec.signal)
        return await next()

    ctx.on("tools/post-execute", post)
    ctx.tools.register(tool("slow", resolves_on_abort, timeout_ms=20))
    request = call("slow")

    await ctx.tools.execute(request)

    assert seen == [request.signal]
    assert seen[0] is request.signal


async def test_an_earlier_wrapper_sees_its_own_signal_again_after_the_policy() -> None:
    root = Context()
    await root.plugin(ToolRuntime)
    after: list[AbortSignal] = []

    async def outer(exec: ToolDispatchExecution, next: Any) -> Any:
        result = await next()
        after.append(exec.signal)
        return result

    root.on("tools/execute", outer)
    await root.plugin(timeout_policy)
    root.tools.register(tool("quick", returns_at_once, timeout_ms=60_000))
    request = call("quick")
    try:
        await root.tools.execute(request)
    finally:
        await root.dispose()

    assert after == [request.signal]
    assert after[0] is request.signal


async def test_the_deadline_detaches_from_the_callers_signal_after_the_call(ctx: Context) -> None:
    ctx.tools.register(tool("quick", returns_at_once, timeout_ms=60_000))
    ctx.tools.register(tool("slow", resolves_on_abort, timeout_ms=20))
    request = call("quick")

    await ctx.tools.execute(request)
    await ctx.tools.execute(call("slow", request.signal))

    assert request.signal.listener_count == 0


async def test_tool_deferred_contexts_survive_the_timeout_replacement(ctx: Context) -> None:
    note = user_message("partial results")

    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.defer_context(note)
        await exec.signal.wait()
        return "late"

    ctx.tools.register(tool("slow", body, timeout_ms=20))

    result = await ctx.tools.execute(call("slow"))

    assert result.to_json() == timeout_json("20")
    assert result.additional_contexts == (note,)


async def test_disposing_the_plugin_removes_its_listener() -> None:
    root = Context()
    await root.plugin(ToolRuntime)
    handle = await root.plugin(timeout_policy)
    seen: list[AbortSignal] = []
    root.on("tools/execute", probe(seen))
    root.tools.register(tool("quick", returns_at_once, timeout_ms=60_000))
    try:
        first = call("quick")
        await root.tools.execute(first)
        await handle.dispose()
        second = call("quick")
        await root.tools.execute(second)
    finally:
        await root.dispose()

    assert seen[0] is not first.signal
    assert seen[1] is second.signal
