"""`finish`: materialization, `finalize_content`, and `tools/result` publication (spec §1.14;
CONTRACT §1 logging, §4.1 freezing).

Contract:
- Exactly one `tools/result` per call, on every path; the returned result is the very object the
  observers received; it and its content are deep-frozen, and the execution is frozen: assigning
  `exec.signal` then raises.
- The definition's `finalize_content`, captured when the call was created, runs exactly once for
  every outcome — also for failures that bypass post-execute — with the frozen result. `None`
  keeps the content; blocks replace only the content. A raising finalizer (or non-JSON content)
  turns the outcome into an error and is not called again.
- A candidate result that is not lossless JSON becomes `tool result must be losslessly
  JSON-serializable`.
- Observers are contained: a raising one is logged once at WARNING on a `tether.*` logger as
  `tool "<name>" (<call_id>): tools/result observer failed: <message>`, and the others still run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from tether import (
    AbortSignal,
    Block,
    Deny,
    ToolExecution,
    ToolExecutionResult,
    ToolRunContext,
    ToolSuccess,
    user_message,
)
from tether.kernel import Context

from .conftest import (
    ABD_JSON,
    aborted_signal,
    call,
    denied_json,
    error_json,
    raw_tool,
    success_json,
    text,
)


class Finalizer:
    """A `finalize_content` that records its calls and returns `content`."""

    def __init__(self, content: list[dict[str, Any]] | None = None) -> None:
        self.content = content
        self.calls: list[tuple[ToolExecution, ToolExecutionResult]] = []

    def __call__(self, exec: ToolExecution, result: ToolExecutionResult) -> Any:
        self.calls.append((exec, result))
        return self.content


async def _raise(message: str) -> Any:
    raise RuntimeError(message)


def _pre_raises(ctx: Context) -> None:
    ctx.on("tools/pre-execute", lambda exec, next: _raise("pre broke"))


def _pre_denies(ctx: Context) -> None:
    async def deny(exec: ToolExecution, next: Any) -> Any:
        return Deny("denied")

    ctx.on("tools/pre-execute", deny)


def _wrapper_raises(ctx: Context) -> None:
    ctx.on("tools/execute", lambda exec, next: _raise("wrapper broke"))


def _post_raises(ctx: Context) -> None:
    ctx.on("tools/post-execute", lambda exec, result, next: _raise("post broke"))


def _nothing(ctx: Context) -> None:
    return None


@pytest.mark.parametrize(
    ("setup", "arguments", "signal", "expected"),
    [
        pytest.param(_nothing, {}, None, success_json("ok"), id="success"),
        pytest.param(_pre_denies, {}, None, denied_json("denied"), id="denial"),
        pytest.param(_nothing, {}, aborted_signal, ABD_JSON, id="pre-aborted"),
        pytest.param(
            _nothing,
            {"x": {1}},
            None,
            error_json("tool execution arguments must be losslessly JSON-serializable"),
            id="arguments-not-json",
        ),
        pytest.param(_pre_raises, {}, None, error_json("pre broke"), id="pre-execute-raises"),
        pytest.param(_wrapper_raises, {}, None, error_json("wrapper broke"), id="wrapper-raises"),
        pytest.param(_post_raises, {}, None, error_json("post broke"), id="post-execute-raises"),
    ],
)
async def test_finalize_content_runs_exactly_once_on_every_path(
    ctx: Context,
    setup: Callable[[Context], None],
    arguments: object,
    signal: Callable[[], AbortSignal] | None,
    expected: dict[str, Any],
) -> None:
    finalizer = Finalizer()
    setup(ctx)
    ctx.tools.register(raw_tool(finalize_content=finalizer))

    result = await ctx.tools.execute(
        call(arguments=arguments, signal=None if signal is None else signal())
    )

    assert result.to_json() == expected
    assert len(finalizer.calls) == 1
    assert finalizer.calls[0][1].to_json() == expected


async def test_finalize_content_gets_the_frozen_result_and_the_execution(ctx: Context) -> None:
    finalizer = Finalizer()
    ctx.tools.register(raw_tool(finalize_content=finalizer))

    await ctx.tools.execute(call(call_id="c5"))

    ((exec, result),) = finalizer.calls
    assert exec.call_id == "c5"
    with pytest.raises(TypeError):
        result.content[0]["text"] = "changed"  # type: ignore[index]
    with pytest.raises(AttributeError):
        exec.signal = AbortSignal()  # type: ignore[misc]


async def test_a_finalizer_returning_none_keeps_the_content(ctx: Context) -> None:
    ctx.tools.register(raw_tool("echo", lambda args, exec: "", finalize_content=Finalizer()))

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("")


async def test_a_finalizer_replaces_only_the_content(ctx: Context) -> None:
    note = user_message("kept")

    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.defer_context(note)
        exec.conclude_turn()
        return "value"

    ctx.tools.register(raw_tool("echo", body, finalize_content=Finalizer([text("finalized")])))

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("finalized")
    assert isinstance(result, ToolSuccess)
    assert result.value == "value"
    assert result.concludes_turn is True
    assert result.additional_contexts == (note,)


async def test_a_finalizer_replaces_the_content_of_a_failure_and_keeps_its_error(
    ctx: Context,
) -> None:
    _pre_denies(ctx)
    ctx.tools.register(raw_tool(finalize_content=Finalizer([text("finalized")])))

    result = await ctx.tools.execute(call())

    assert result.to_json() == {
        "is_error": True,
        "content": [text("finalized")],
        "error": {"message": "denied", "info": {"name": "ToolDenied", "code": "DENIED"}},
    }


async def test_a_raising_finalizer_becomes_the_error_and_is_not_called_again(
    ctx: Context,
) -> None:
    calls: list[str] = []

    def finalize(exec: ToolExecution, result: ToolExecutionResult) -> None:
        calls.append(exec.call_id)
        raise RuntimeError("finalizer violated its total contract")

    ctx.tools.register(raw_tool(finalize_content=finalize))

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json("finalizer violated its total contract")
    assert not hasattr(result, "value")
    assert calls == ["c1"]


async def test_a_finalizer_returning_content_that_is_not_json_becomes_an_error(
    ctx: Context,
) -> None:
    finalizer = Finalizer([{"type": "text", "text": {1, 2}}])
    ctx.tools.register(raw_tool(finalize_content=finalizer))

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json("tool result must be losslessly JSON-serializable")
    assert len(finalizer.calls) == 1


async def test_the_finalizer_captured_at_creation_runs_after_the_tool_is_gone(
    ctx: Context,
) -> None:
    finalizer = Finalizer([text("finalized")])
    removers: list[Any] = []

    async def pre(exec: ToolExecution, next: Any) -> Any:
        removers[0]()
        return await next()

    ctx.on("tools/pre-execute", pre)
    removers.append(ctx.tools.register(raw_tool(finalize_content=finalizer)))

    result = await ctx.tools.execute(call())

    assert result.to_json() == {
        "is_error": True,
        "content": [text("finalized")],
        "error": {
            "message": 'unknown tool "echo"',
            "info": {"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"},
        },
    }
    assert len(finalizer.calls) == 1


async def test_a_candidate_result_that_is_not_json_becomes_a_safe_error(ctx: Context) -> None:
    finalizer = Finalizer()

    async def post(exec: ToolExecution, result: ToolExecutionResult, next: Any) -> Any:
        return Block([{"type": "text", "text": "x", "extra": print}])

    ctx.on("tools/post-execute", post)
    ctx.tools.register(raw_tool(finalize_content=finalizer))

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json("tool result must be losslessly JSON-serializable")
    assert [r.to_json() for _, r in finalizer.calls] == [result.to_json()]


# -- publication ---------------------------------------------------------------------------------


async def test_exactly_one_result_is_published_and_it_is_the_returned_object(
    ctx: Context,
) -> None:
    published: list[tuple[ToolExecution, ToolExecutionResult]] = []
    ctx.on("tools/result", lambda exec, result: published.append((exec, result)))
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert len(published) == 1
    assert published[0][1] is result


async def test_the_published_result_and_its_content_are_frozen(ctx: Context) -> None:
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    with pytest.raises(AttributeError):
        result.content = []  # type: ignore[misc]
    with pytest.raises(TypeError):
        result.content[0]["text"] = "changed"  # type: ignore[index]
    with pytest.raises(TypeError):
        result.content.append(text("more"))  # type: ignore[attr-defined]


async def test_the_execution_is_frozen_when_the_result_is_published(ctx: Context) -> None:
    attempts: list[str] = []

    def observer(exec: Any, result: ToolExecutionResult) -> None:
        for attempt in (
            lambda: setattr(exec, "signal", AbortSignal()),
            lambda: exec.defer_context(user_message("late")),
        ):
            try:
                attempt()
            except (AttributeError, RuntimeError) as error:
                attempts.append(type(error).__name__)

    ctx.on("tools/result", observer)
    ctx.tools.register(raw_tool())

    await ctx.tools.execute(call())

    assert attempts == ["AttributeError", "RuntimeError"]


async def test_a_raising_observer_is_logged_and_the_others_still_run(
    ctx: Context, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[str] = []

    def broken(exec: ToolExecution, result: ToolExecutionResult) -> None:
        raise RuntimeError("observer exploded")

    ctx.on("tools/result", lambda exec, result: seen.append("before"))
    ctx.on("tools/result", broken)
    ctx.on("tools/result", lambda exec, result: seen.append("after"))
    ctx.tools.register(raw_tool())

    with caplog.at_level(logging.WARNING, logger="tether"):
        result = await ctx.tools.execute(call(call_id="c42"))

    assert result.to_json() == success_json("ok")
    assert seen == ["before", "after"]
    assert [(r.name.split(".")[0], r.levelno, r.getMessage()) for r in caplog.records] == [
        (
            "tether",
            logging.WARNING,
            'tool "echo" (c42): tools/result observer failed: observer exploded',
        )
    ]


async def test_an_observer_with_an_unprintable_failure_is_logged_as_unprintable(
    ctx: Context, caplog: pytest.LogCaptureFixture
) -> None:
    class Hostile(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    def broken(exec: ToolExecution, result: ToolExecutionResult) -> None:
        raise Hostile()

    ctx.on("tools/result", broken)
    ctx.tools.register(raw_tool())

    with caplog.at_level(logging.WARNING, logger="tether"):
        await ctx.tools.execute(call())

    assert [r.getMessage() for r in caplog.records] == [
        'tool "echo" (c1): tools/result observer failed: <unprintable thrown value>'
    ]


async def test_an_async_observer_is_refused_and_logged(
    ctx: Context, caplog: pytest.LogCaptureFixture
) -> None:
    ran: list[str] = []

    async def async_observer(exec: ToolExecution, result: ToolExecutionResult) -> None:
        ran.append("ran")

    ctx.on("tools/result", async_observer)
    ctx.tools.register(raw_tool())

    with caplog.at_level(logging.WARNING, logger="tether"):
        result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("ok")
    assert ran == []
    assert [r.getMessage() for r in caplog.records] == [
        'tool "echo" (c1): tools/result observer failed: '
        "observers are synchronous; it returned an awaitable"
    ]


async def test_observers_of_a_failure_all_see_the_failure(
    ctx: Context, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[bool] = []

    def broken(exec: ToolExecution, result: ToolExecutionResult) -> None:
        raise RuntimeError("boom")

    ctx.on("tools/result", broken)
    ctx.on("tools/result", lambda exec, result: seen.append(result.is_error))
    ctx.on("tools/result", broken)
    ctx.on("tools/result", lambda exec, result: seen.append(result.is_error))

    with caplog.at_level(logging.WARNING, logger="tether"):
        await ctx.tools.execute(call("missing"))

    assert seen == [True, True]
    assert len(caplog.records) == 2
