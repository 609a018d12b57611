"""The `@tool` decorator's cancellation and concurrency (tools/definition.py, issue 38).

Contract: an `async def` body under `@tool` is interrupted when its signal aborts (it runs under
`signal.cancels()`): its `finally` runs, the runtime still waits for it, and the call ends
`ABORTED` on a cancel or `TOOL_TIMEOUT` when its `timeout_ms` runs out. `cooperative=True`
keeps the raw definition's contract: the body is never interrupted and sees only its signal.
`concurrent=True` marks every call concurrency-safe; the default is one call at a time.
"""

from __future__ import annotations

import asyncio

import pytest

from tether import AbortController, ToolFailure, ToolRunContext, tool
from tether.kernel import Context
from tether.plugins import timeout_policy

from .conftest import call

FOREVER_S = 3600.0  # a body that reaches the end of this sleep was not interrupted


async def test_a_cancel_interrupts_a_body_that_ignores_its_signal(ctx: Context) -> None:
    started, ran = asyncio.Event(), list[str]()

    @tool
    async def lookup(q: str) -> str:
        """Looks slowly."""
        started.set()
        try:
            await asyncio.sleep(FOREVER_S)
        finally:
            ran.append("finally")
        return "found"

    ctx.tools.register(lookup)
    controller = AbortController()
    task = asyncio.create_task(
        ctx.tools.execute(call("lookup", {"q": "x"}, signal=controller.signal))
    )
    await started.wait()
    controller.abort()
    result = await task
    assert isinstance(result, ToolFailure)
    assert (result.code, ran) == ("ABORTED", ["finally"])


async def test_a_timeout_interrupts_a_body_that_ignores_its_signal(ctx: Context) -> None:
    await ctx.plugin(timeout_policy)
    ran: list[str] = []

    @tool(timeout_ms=1000)
    async def lookup(q: str) -> str:
        """Looks slowly."""
        try:
            await asyncio.sleep(FOREVER_S)
        finally:
            ran.append("finally")
        return "found"

    ctx.tools.register(lookup)
    result = await ctx.tools.execute(call("lookup", {"q": "x"}))
    assert isinstance(result, ToolFailure)
    assert (result.code, ran) == ("TOOL_TIMEOUT", ["finally"])


async def test_a_cooperative_body_is_not_interrupted_by_a_cancel(ctx: Context) -> None:
    started, release, seen = asyncio.Event(), asyncio.Event(), list[str]()

    @tool(cooperative=True)
    async def lookup(q: str) -> str:
        """Waits to be released."""
        started.set()
        try:
            await release.wait()
        except asyncio.CancelledError:
            seen.append("interrupted")
            raise
        seen.append("released")
        return "found"

    ctx.tools.register(lookup)
    controller = AbortController()
    task = asyncio.create_task(
        ctx.tools.execute(call("lookup", {"q": "x"}, signal=controller.signal))
    )
    await started.wait()
    controller.abort()
    release.set()  # no await in between: an interrupt would have been delivered first
    result = await task
    assert isinstance(result, ToolFailure)
    assert (result.code, seen) == ("ABORTED", ["released"])


async def test_a_body_that_finishes_before_any_abort_succeeds(ctx: Context) -> None:
    @tool
    async def shout(text: str) -> str:
        """Upper-cases."""
        return text.upper()

    ctx.tools.register(shout)
    result = await ctx.tools.execute(call("shout", {"text": "hi"}))
    assert result.is_error is False


def test_calls_are_not_concurrency_safe_by_default() -> None:
    @tool
    async def lookup(q: str) -> str:
        """Looks."""
        return q

    assert lookup.is_concurrency_safe is None


def test_concurrent_true_marks_every_call_concurrency_safe() -> None:
    @tool(concurrent=True)
    async def lookup(q: str) -> str:
        """Looks."""
        return q

    assert lookup.is_concurrency_safe is not None
    assert lookup.is_concurrency_safe({"q": "x"}) is True


def test_concurrent_and_a_predicate_together_are_refused() -> None:
    with pytest.raises(TypeError, match="either concurrent=True or is_concurrency_safe"):
        tool(concurrent=True, is_concurrency_safe=lambda args: True)


def test_a_parameter_typed_tool_run_context_receives_the_call_under_any_name() -> None:
    @tool
    async def lookup(q: str, call: ToolRunContext) -> str:
        """Looks."""
        return call.call_id

    assert lookup.parameters["properties"] == {"q": {"type": "string"}}


def test_an_untyped_exec_parameter_still_works_with_a_deprecation_warning() -> None:
    with pytest.warns(DeprecationWarning, match="annotate it `ToolRunContext`"):

        @tool
        async def lookup(q: str, exec) -> str:  # type: ignore[no-untyped-def]
            """Looks."""
            return str(exec.call_id)

    assert lookup.parameters["properties"] == {"q": {"type": "string"}}
