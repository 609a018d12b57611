"""Around-dispatch wrappers: the `tools/execute` waterfall (spec §1.8, §1.11, §7.3).

Contract:
- Wrappers run prepended first, then in registration order; `next()` takes no arguments and
  resolves to a normalized, frozen result: a thrown tool is already an `is_error` result.
- A wrapper may delegate, short-circuit (the body never runs), replace the result, or call
  `next()` again: the waterfall queue is shared and consumable, so a second `next()` re-runs only
  the base dispatch (the body), not the wrappers the first call consumed.
- A result a wrapper returns is normalized: this call's canonical success stands; a failure is
  copied (its meta and contexts kept, frozen); any other success is rebuilt from its `value`
  against the tool as registered now (authored content and meta are ignored and re-rendered).
- A raising wrapper, a result that is not a result, or a success for a tool that is gone end the
  call with an error and skip post-execute.
- Unknown tools enter the waterfall (the base dispatch is where `UNKNOWN_TOOL` is made).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tether import (
    ErrorDetail,
    ErrorInfo,
    HarnessError,
    ToolDispatchExecution,
    ToolExecutionResult,
    ToolFailure,
    ToolOutput,
    ToolRunContext,
    ToolSuccess,
    user_message,
)
from tether.kernel import Context

from .conftest import Recorder, call, error_json, raw_tool, success_json, text


def _counting_tool(recorder: Recorder, name: str = "echo", value: object = "original") -> Any:
    async def body(args: Any, exec: ToolRunContext) -> object:
        recorder.hit("body")
        return value

    return raw_tool(name, body)


async def test_wrappers_run_prepended_first_then_in_registration_order(ctx: Context) -> None:
    order: list[str] = []

    def wrapper(label: str) -> Any:
        async def around(exec: ToolDispatchExecution, next: Any) -> Any:
            order.append(label)
            return await next()

        return around

    ctx.on("tools/execute", wrapper("first registered"))
    ctx.on("tools/execute", wrapper("second registered"))
    ctx.on("tools/execute", wrapper("prepended"), prepend=True)
    ctx.tools.register(raw_tool())

    await ctx.tools.execute(call())

    assert order == ["prepended", "first registered", "second registered"]


async def test_a_thrown_tool_reaches_the_wrapper_as_a_normalized_failure(ctx: Context) -> None:
    seen: list[ToolExecutionResult] = []

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        seen.append(await next())
        return seen[-1]

    async def body(args: Any, exec: ToolRunContext) -> str:
        raise HarnessError("kaboom", "BOOM")

    ctx.on("tools/execute", wrapper)
    ctx.tools.register(raw_tool("echo", body))

    await ctx.tools.execute(call())

    assert [result.to_json() for result in seen] == [error_json("kaboom", "HarnessError", "BOOM")]


async def test_an_unknown_tool_enters_the_wrapper_and_fails_inside_next(ctx: Context) -> None:
    seen: list[ToolExecutionResult] = []

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        seen.append(await next())
        return seen[-1]

    ctx.on("tools/execute", wrapper)

    result = await ctx.tools.execute(call("missing"))

    expected = error_json('unknown tool "missing"', "ToolNotFoundError", "UNKNOWN_TOOL")
    assert [r.to_json() for r in seen] == [expected]
    assert result.to_json() == expected


async def test_the_result_a_wrapper_receives_is_frozen(ctx: Context) -> None:
    attempts: list[str] = []

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        result = await next()
        try:
            result.value = "changed"
        except AttributeError:
            attempts.append("value rejected")
        try:
            result.content[0]["text"] = "changed"
        except TypeError:
            attempts.append("content rejected")
        return result

    ctx.on("tools/execute", wrapper)
    ctx.tools.register(raw_tool("echo", lambda args, exec: "original"))

    result = await ctx.tools.execute(call())

    assert attempts == ["value rejected", "content rejected"]
    assert isinstance(result, ToolSuccess)
    assert result.value == "original"


async def test_a_wrapper_can_short_circuit_and_its_authored_content_is_re_rendered(
    ctx: Context, recorder: Recorder
) -> None:
    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        return ToolSuccess(
            value="short-circuited",
            content=[text("ignored authored content")],
            meta={"authored": True},
        )

    ctx.on("tools/execute", wrapper, prepend=True)
    ctx.tools.register(_counting_tool(recorder))

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("short-circuited")
    assert isinstance(result, ToolSuccess)
    assert result.value == "short-circuited"
    assert recorder.counts == {"pre": 1, "around": 0, "body": 0, "post": 1, "result": 1}


async def test_a_wrapper_success_keeps_its_contexts(ctx: Context) -> None:
    note = user_message("from the wrapper", {"kind": "plugin", "plugin": "wrapper"})

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        return ToolSuccess(value="cached", content=[], additional_contexts=[note])

    ctx.on("tools/execute", wrapper)
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("cached")
    assert result.additional_contexts == (note,)


async def test_a_wrapper_success_is_revalidated_against_the_tools_output_schema(
    ctx: Context, recorder: Recorder
) -> None:
    cached: list[ToolExecutionResult] = []

    async def cache(exec: ToolDispatchExecution, next: Any) -> Any:
        if cached:
            return cached[0]
        cached.append(await next())
        return cached[0]

    ctx.on("tools/execute", cache, prepend=True)
    ctx.tools.register(raw_tool("a", lambda args, exec: "a string"))
    b = _counting_tool(recorder, "b", value={"x": 1})
    ctx.tools.register(raw_tool("b", b.execute, output=ToolOutput(schema={"type": "object"})))
    await ctx.tools.execute(call("a"))

    result = await ctx.tools.execute(call("b"))

    assert result.to_json() == error_json(
        'tool "b" returned invalid output: "value" must be an object',
        "ToolOutputError",
        "INVALID_TOOL_OUTPUT",
    )
    assert recorder.counts["body"] == 0


async def test_a_wrapper_failure_is_copied_with_its_meta_and_contexts(ctx: Context) -> None:
    note = user_message("why it failed")

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        return ToolFailure(
            error=ErrorDetail("sandbox refused", ErrorInfo("SandboxError", "SANDBOX")),
            content=[text("Error: sandbox refused"), {"type": "image", "attachment": "a1"}],
            meta={"sandbox": ["net"]},
            additional_contexts=[note],
        )

    ctx.on("tools/execute", wrapper)
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == {
        "is_error": True,
        "content": [text("Error: sandbox refused"), {"type": "image", "attachment": "a1"}],
        "error": {
            "message": "sandbox refused",
            "info": {"name": "SandboxError", "code": "SANDBOX"},
        },
        "meta": {"sandbox": ["net"]},
    }
    assert result.additional_contexts == (note,)
    with pytest.raises(TypeError):
        result.meta["sandbox"].append("fs")  # type: ignore[index,union-attr]


async def test_a_wrapper_can_replace_a_success_with_a_failure(ctx: Context) -> None:
    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        await next()
        return ToolFailure(error=ErrorDetail("vetoed"), content=[text("Error: vetoed")])

    ctx.on("tools/execute", wrapper)
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json("vetoed")


async def test_a_second_next_re_runs_only_the_base_dispatch(
    ctx: Context, recorder: Recorder
) -> None:
    inner: list[str] = []
    attempts: list[str] = []

    async def retry(exec: ToolDispatchExecution, next: Any) -> Any:
        first = await next()
        attempts.append(first.content[0]["text"])
        return await next()

    async def inner_wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        inner.append("inner")
        return await next()

    runs: list[int] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        runs.append(len(runs) + 1)
        if len(runs) == 1:
            raise RuntimeError("flaky")
        return f"attempt {len(runs)}"

    ctx.on("tools/execute", retry, prepend=True)
    ctx.on("tools/execute", inner_wrapper)
    ctx.tools.register(raw_tool("echo", body))

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("attempt 2")
    assert attempts == ["Error: flaky"]
    assert runs == [1, 2]
    assert inner == ["inner"]
    assert recorder.counts["around"] == 1


async def test_a_raising_wrapper_ends_the_call_without_post_execute(
    ctx: Context, recorder: Recorder
) -> None:
    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        raise RuntimeError("wrapper broke")

    ctx.on("tools/execute", wrapper, prepend=True)
    ctx.tools.register(_counting_tool(recorder))

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json("wrapper broke")
    assert recorder.counts == {"pre": 1, "around": 0, "body": 0, "post": 0, "result": 1}


async def test_a_wrapper_returning_something_that_is_not_a_result_fails_without_post_execute(
    ctx: Context, recorder: Recorder
) -> None:
    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        await next()
        return None

    ctx.on("tools/execute", wrapper, prepend=True)
    ctx.tools.register(_counting_tool(recorder))

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json(
        "a tool result must be a ToolSuccess or ToolFailure; got NoneType"
    )
    assert recorder.counts["post"] == 0


async def test_a_wrapper_success_for_a_tool_that_disappeared_is_unknown_tool(
    ctx: Context, recorder: Recorder
) -> None:
    removers: list[Any] = []

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        removers[0]()
        return ToolSuccess(value="authored", content=[])

    ctx.on("tools/execute", wrapper, prepend=True)
    removers.append(ctx.tools.register(_counting_tool(recorder)))

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json(
        'unknown tool "echo"', "ToolNotFoundError", "UNKNOWN_TOOL"
    )
    assert recorder.counts == {"pre": 1, "around": 0, "body": 0, "post": 0, "result": 1}


async def test_a_wrapper_failure_that_is_not_json_ends_as_a_safe_error(ctx: Context) -> None:
    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        return ToolFailure(error=ErrorDetail("x"), content=[{"type": "text", "text": {1, 2}}])

    ctx.on("tools/execute", wrapper)
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json("tool result must be losslessly JSON-serializable")


async def test_wrappers_of_concurrent_calls_each_see_their_own_execution(ctx: Context) -> None:
    seen: list[tuple[str, str]] = []
    both = asyncio.Barrier(2)

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        await both.wait()
        seen.append((exec.call_id, str(exec.arguments)))
        return await next()

    ctx.on("tools/execute", wrapper)
    ctx.tools.register(raw_tool("echo", lambda args, exec: args["n"]))

    a, b = await asyncio.gather(
        ctx.tools.execute(call(arguments={"n": "a"}, call_id="a")),
        ctx.tools.execute(call(arguments={"n": "b"}, call_id="b")),
    )

    assert (a.to_json(), b.to_json()) == (success_json("a"), success_json("b"))
    assert sorted(seen) == [("a", "{'n': 'a'}"), ("b", "{'n': 'b'}")]
