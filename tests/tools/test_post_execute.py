"""`tools/post-execute` and how its decision is applied (spec §1.12; CONTRACT §4.2).

Contract:
- Every post-result reaches post-execute (successes, tool errors, unknown tools, denials); the
  listener sees the frozen result and the caller's signal; the base accepts.
- `Accept(content=...)` replaces only the content (value, meta, error kept; allowed on failures).
- `Accept(value=...)` rebuilds the canonical success from the new value against the tool as it is
  now (validated → `INVALID_TOOL_OUTPUT`, re-rendered); on a failure it is an error
  (`tools/post-execute cannot replace the value of a failed result`); with both keys it is an
  error (`tools/post-execute accept decision cannot replace both value and content`); for a tool
  that disappeared, `UNKNOWN_TOOL`. `Accept(value=None)` replaces the value with null.
- `Block(feedback)` is a failure whose content is the feedback itself and whose message is the
  feedback's text (text blocks by text, other blocks as `[<type> content]`, joined by newlines;
  `tool result blocked by post-execute policy` when empty); it drops every earlier context.
- Contexts are ordered tool-deferred → wrapper → post-execute decision.
- A raising listener or a malformed decision is an error result without contexts.
"""

from __future__ import annotations

from typing import Any

import pytest

from tether import (
    AbortSignal,
    Accept,
    Block,
    Deny,
    ToolDispatchExecution,
    ToolExecution,
    ToolExecutionResult,
    ToolOutput,
    ToolRunContext,
    ToolSuccess,
    user_message,
)
from tether.kernel import Context

from .conftest import call, error_json, raw_tool, success_json, text


def _deciding(decision: object) -> Any:
    async def post(exec: ToolExecution, result: ToolExecutionResult, next: Any) -> object:
        return decision

    return post


def _meta_tool(name: str = "echo", **extra: Any) -> Any:
    return raw_tool(
        name,
        lambda args, exec: "original",
        output=ToolOutput(
            schema=str,
            render=lambda args, value: [text(f"rendered {value}")],
            presentation_meta=lambda args, value: {"len": len(value)},
        ),
        **extra,
    )


async def test_post_execute_sees_the_result_the_callers_signal_and_the_canonical_value(
    ctx: Context,
) -> None:
    seen: list[tuple[ToolExecutionResult, AbortSignal]] = []

    async def post(exec: ToolExecution, result: ToolExecutionResult, next: Any) -> Any:
        seen.append((result, exec.signal))
        return await next()

    ctx.on("tools/post-execute", post)
    ctx.tools.register(raw_tool())
    request = call()

    await ctx.tools.execute(request)

    ((result, signal),) = seen
    assert isinstance(result, ToolSuccess)
    assert result.value == "ok"
    assert signal is request.signal


async def test_a_thrown_tool_still_reaches_post_execute(ctx: Context) -> None:
    seen: list[dict[str, Any]] = []

    async def post(exec: ToolExecution, result: ToolExecutionResult, next: Any) -> Any:
        seen.append(result.to_json())
        return await next()

    async def body(args: Any, exec: ToolRunContext) -> str:
        raise RuntimeError("tool broke")

    ctx.on("tools/post-execute", post)
    ctx.tools.register(raw_tool("echo", body))

    await ctx.tools.execute(call())

    assert seen == [error_json("tool broke")]


async def test_the_result_post_execute_sees_is_frozen(ctx: Context) -> None:
    rejected: list[str] = []

    async def post(exec: ToolExecution, result: Any, next: Any) -> Any:
        try:
            result.value = "changed"
        except AttributeError:
            rejected.append("value")
        return await next()

    ctx.on("tools/post-execute", post)
    ctx.tools.register(raw_tool("echo", lambda args, exec: "original"))

    result = await ctx.tools.execute(call())

    assert rejected == ["value"]
    assert isinstance(result, ToolSuccess)
    assert result.value == "original"


async def test_content_replacement_keeps_value_and_meta(ctx: Context) -> None:
    ctx.on("tools/post-execute", _deciding(Accept(content=[text("redacted")])))
    ctx.tools.register(_meta_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == {
        "is_error": False,
        "content": [text("redacted")],
        "meta": {"len": 8},
    }
    assert isinstance(result, ToolSuccess)
    assert result.value == "original"


async def test_content_replacement_on_a_failure_keeps_its_error(ctx: Context) -> None:
    ctx.on("tools/pre-execute", lambda exec, next: _resolved(Deny("denied")))
    ctx.on("tools/post-execute", _deciding(Accept(content=[text("softened")])))
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == {
        "is_error": True,
        "content": [text("softened")],
        "error": {"message": "denied", "info": {"name": "ToolDenied", "code": "DENIED"}},
    }


async def test_value_replacement_rebuilds_the_success_from_the_new_value(ctx: Context) -> None:
    ctx.on("tools/post-execute", _deciding(Accept(value="replacement")))
    ctx.tools.register(_meta_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == {
        "is_error": False,
        "content": [text("rendered replacement")],
        "meta": {"len": 11},
    }
    assert isinstance(result, ToolSuccess)
    assert result.value == "replacement"


async def test_value_replacement_with_none_replaces_the_value_with_null(ctx: Context) -> None:
    ctx.on("tools/post-execute", _deciding(Accept(value=None)))
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("null")
    assert isinstance(result, ToolSuccess)
    assert result.value is None


async def test_a_replacement_value_the_output_schema_rejects_is_invalid_tool_output(
    ctx: Context,
) -> None:
    ctx.on("tools/post-execute", _deciding(Accept(value=3)))
    ctx.tools.register(_meta_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json(
        'tool "echo" returned invalid output: value: Input should be a valid string',
        "ToolOutputError",
        "INVALID_TOOL_OUTPUT",
    )
    assert not hasattr(result, "value")


async def test_value_replacement_on_a_failure_is_an_error(ctx: Context) -> None:
    async def body(args: Any, exec: ToolRunContext) -> str:
        raise RuntimeError("tool broke")

    ctx.on("tools/post-execute", _deciding(Accept(value="rescued")))
    ctx.tools.register(raw_tool("echo", body))

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json(
        "tools/post-execute cannot replace the value of a failed result"
    )


async def test_replacing_both_value_and_content_is_an_error(ctx: Context) -> None:
    ctx.on("tools/post-execute", _deciding(Accept(value="v", content=[text("c")])))
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json(
        "tools/post-execute accept decision cannot replace both value and content"
    )


async def test_value_replacement_for_a_tool_that_disappeared_is_unknown_tool(
    ctx: Context,
) -> None:
    removers: list[Any] = []

    async def post(exec: ToolExecution, result: ToolExecutionResult, next: Any) -> Any:
        removers[0]()
        return Accept(value="replacement")

    ctx.on("tools/post-execute", post)
    removers.append(ctx.tools.register(raw_tool()))

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json(
        'unknown tool "echo"', "ToolNotFoundError", "UNKNOWN_TOOL"
    )


async def test_a_block_is_a_failure_whose_content_is_the_feedback(ctx: Context) -> None:
    ctx.on("tools/post-execute", _deciding(Block([text("blocked by policy")])))
    ctx.tools.register(_meta_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == {
        "is_error": True,
        "content": [text("blocked by policy")],
        "error": {"message": "blocked by policy"},
    }


@pytest.mark.parametrize(
    ("feedback", "message"),
    [
        pytest.param([], "tool result blocked by post-execute policy", id="empty"),
        pytest.param(
            [{"type": "reasoning", "text": "hidden"}], "[reasoning content]", id="reasoning"
        ),
        pytest.param(
            [text("line one"), {"type": "image", "attachment": "a"}, text("line two")],
            "line one\n[image content]\nline two",
            id="mixed",
        ),
    ],
)
async def test_a_block_message_is_the_text_of_its_feedback(
    ctx: Context, feedback: list[dict[str, Any]], message: str
) -> None:
    ctx.on("tools/post-execute", _deciding(Block(feedback)))
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == {
        "is_error": True,
        "content": feedback,
        "error": {"message": message},
    }


async def test_a_block_drops_earlier_contexts_and_keeps_its_own(ctx: Context) -> None:
    deferred, blocked = user_message("deferred"), user_message("why blocked")

    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.defer_context(deferred)
        return "ok"

    ctx.on(
        "tools/post-execute",
        _deciding(Block([text("no")], additional_contexts=[blocked])),
    )
    ctx.tools.register(raw_tool("echo", body))

    result = await ctx.tools.execute(call())

    assert result.additional_contexts == (blocked,)


async def test_contexts_are_ordered_tool_deferred_then_wrapper_then_post_execute(
    ctx: Context,
) -> None:
    nested_1, nested_2 = user_message("nested-1"), user_message("nested-2")
    wrapper_note, post_note = user_message("wrapper"), user_message("post")

    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.defer_context(nested_1)
        exec.defer_context(nested_2)
        return "ok"

    async def wrapper(exec: ToolDispatchExecution, next: Any) -> Any:
        result = await next()
        return ToolSuccess(value=result.value, content=[], additional_contexts=[wrapper_note])

    ctx.on("tools/execute", wrapper)
    ctx.on("tools/post-execute", _deciding(Accept(additional_contexts=[post_note])))
    ctx.tools.register(raw_tool("echo", body))

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("ok")
    assert result.additional_contexts == (nested_1, nested_2, wrapper_note, post_note)


async def test_value_replacement_keeps_every_context(ctx: Context) -> None:
    deferred, post_note = user_message("deferred"), user_message("post")

    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.defer_context(deferred)
        return "ok"

    ctx.on(
        "tools/post-execute",
        _deciding(Accept(value="replacement", additional_contexts=[post_note])),
    )
    ctx.tools.register(raw_tool("echo", body))

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("replacement")
    assert result.additional_contexts == (deferred, post_note)


async def test_a_raising_post_listener_is_an_error_without_contexts(ctx: Context) -> None:
    deferred = user_message("deferred")

    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.defer_context(deferred)
        return "ok"

    async def post(exec: ToolExecution, result: ToolExecutionResult, next: Any) -> Any:
        raise RuntimeError("post hook broke")

    ctx.on("tools/post-execute", post)
    ctx.tools.register(raw_tool("echo", body))

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json("post hook broke")
    assert result.additional_contexts == ()


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        pytest.param(
            None,
            "tools/post-execute must decide Accept(...) or Block(...); got NoneType",
            id="none",
        ),
        pytest.param(
            Deny("wrong stage"),
            "tools/post-execute must decide Accept(...) or Block(...); got Deny",
            id="pre-decision",
        ),
    ],
)
async def test_a_malformed_post_decision_fails_closed(
    ctx: Context, decision: object, message: str
) -> None:
    ctx.on("tools/post-execute", _deciding(decision))
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json(message)


async def test_listeners_see_the_same_result_object(ctx: Context) -> None:
    seen: list[ToolExecutionResult] = []

    async def post(exec: ToolExecution, result: ToolExecutionResult, next: Any) -> Any:
        seen.append(result)
        return await next()

    ctx.on("tools/post-execute", post)
    ctx.on("tools/post-execute", post)
    ctx.tools.register(raw_tool())

    await ctx.tools.execute(call())

    assert len(seen) == 2
    assert seen[0] is seen[1]


async def test_replacement_content_that_is_not_json_is_an_error(ctx: Context) -> None:
    ctx.on("tools/post-execute", _deciding(Accept(content=[{"type": "text", "text": {1}}])))
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json("tool result must be losslessly JSON-serializable")


async def test_a_decision_context_that_is_not_a_user_message_is_an_error(ctx: Context) -> None:
    ctx.on("tools/post-execute", _deciding(Accept(additional_contexts=[object()])))  # type: ignore[list-item]
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json(
        "additional_contexts must hold UserMessage values; got object"
    )


async def _resolved(value: object) -> object:
    return value
