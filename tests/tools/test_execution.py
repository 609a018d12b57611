"""The execution objects: the caller's input and the one run object behind every stage view
(spec §2.1–§2.4; CONTRACT §4.1).

Contract:
- `ToolExecutionInput` is frozen, requires `signal` (no default), stores `arguments` as given,
  compares by its fields, supports `dataclasses.replace` and defaults agent/parent/root_call_id
  to None.
- `ToolExecutionToken` is opaque and identity-only: it refuses pickling and JSON.
- Every stage of a call sees the same execution object. Its identity fields are read-only.
  `exec.signal` may be assigned only by a `tools/execute` listener, only to an `AbortSignal`; it
  can never be deleted. `defer_context` takes a `UserMessage`.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
from typing import Any

import pytest

from tether import (
    AbortController,
    AbortSignal,
    ToolDispatchExecution,
    ToolExecution,
    ToolExecutionInput,
    ToolExecutionToken,
    ToolRunContext,
)
from tether.kernel import Context

from .conftest import call, error_json, raw_tool, success_json

STAGE_ERROR = "exec.signal can only be replaced by a tools/execute listener; the call is in its {}"


def test_an_input_without_a_signal_is_refused() -> None:
    with pytest.raises(TypeError, match="signal"):
        ToolExecutionInput(call_id="c1", name="echo", arguments={})  # type: ignore[call-arg]


def test_an_input_is_frozen() -> None:
    request = call()

    with pytest.raises(AttributeError):
        request.signal = AbortController().signal  # type: ignore[misc]


def test_an_input_stores_its_arguments_as_given() -> None:
    arguments: dict[str, Any] = {"items": [1]}

    request = call(arguments=arguments)

    assert request.arguments is arguments


def test_inputs_with_the_same_fields_are_equal() -> None:
    signal = AbortController().signal
    arguments: dict[str, Any] = {"items": [1]}

    first = call(arguments=arguments, signal=signal, root_call_id="r1")
    second = call(arguments={"items": [1]}, signal=signal, root_call_id="r1")

    assert first == second
    assert first != call(arguments=arguments, signal=signal, root_call_id="r2")


def test_an_input_supports_dataclasses_replace() -> None:
    request = call(name="echo")

    renamed = dataclasses.replace(request, name="other")

    assert type(renamed) is ToolExecutionInput
    assert renamed.name == "other"
    assert renamed.signal is request.signal
    assert renamed.arguments is request.arguments
    assert renamed == call(name="other", arguments=request.arguments, signal=request.signal)
    assert request.name == "echo"


def test_an_input_defaults_agent_parent_and_root_call_id_to_none() -> None:
    request = ToolExecutionInput(
        call_id="c1", name="echo", arguments={}, signal=AbortController().signal
    )

    assert request.agent is None
    assert request.parent is None
    assert request.root_call_id is None


def test_a_token_is_opaque_and_cannot_leave_the_process() -> None:
    token = ToolExecutionToken()

    assert repr(token) == "<ToolExecutionToken>"
    assert token != ToolExecutionToken()
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(token)
    with pytest.raises(TypeError):
        json.dumps(token)


async def test_every_stage_sees_the_same_execution_object(ctx: Context) -> None:
    seen: list[object] = []

    async def pre(exec: ToolExecution, next: Any) -> Any:
        seen.append(exec)
        return await next()

    async def around(exec: ToolDispatchExecution, next: Any) -> Any:
        seen.append(exec)
        return await next()

    async def body(args: Any, exec: ToolRunContext) -> str:
        seen.append(exec)
        return "ok"

    async def post(exec: ToolExecution, result: Any, next: Any) -> Any:
        seen.append(exec)
        return await next()

    ctx.on("tools/pre-execute", pre)
    ctx.on("tools/execute", around)
    ctx.on("tools/post-execute", post)
    ctx.on("tools/result", lambda exec, result: seen.append(exec))
    ctx.tools.register(raw_tool("echo", body))

    await ctx.tools.execute(call())

    assert len(seen) == 5
    assert all(each is seen[0] for each in seen)


async def test_signal_assignment_is_refused_in_every_stage_but_tools_execute(
    ctx: Context,
) -> None:
    refusals: list[str] = []

    def try_assign(exec: Any) -> None:
        try:
            exec.signal = AbortController().signal
        except AttributeError as error:
            refusals.append(str(error))

    async def pre(exec: ToolExecution, next: Any) -> Any:
        try_assign(exec)
        return await next()

    def guard(exec: ToolExecution) -> None:
        try_assign(exec)

    async def body(args: Any, exec: ToolRunContext) -> str:
        try_assign(exec)
        return "ok"

    async def post(exec: ToolExecution, result: Any, next: Any) -> Any:
        try_assign(exec)
        return await next()

    ctx.on("tools/pre-execute", pre)
    ctx.tools.guard(guard)
    ctx.on("tools/post-execute", post)
    ctx.on("tools/result", lambda exec, result: try_assign(exec))
    ctx.tools.register(raw_tool("echo", body))

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("ok")
    assert refusals == [
        STAGE_ERROR.format("prepare stage"),
        STAGE_ERROR.format("prepare stage"),
        STAGE_ERROR.format("body stage"),
        STAGE_ERROR.format("finalize stage"),
        STAGE_ERROR.format("published stage"),
    ]


async def test_a_tools_execute_listener_may_replace_the_signal(ctx: Context) -> None:
    replacement = AbortController().signal
    seen: list[AbortSignal] = []

    async def around(exec: ToolDispatchExecution, next: Any) -> Any:
        exec.signal = replacement
        seen.append(exec.signal)
        return await next()

    ctx.on("tools/execute", around)
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == success_json("ok")
    assert seen == [replacement]


async def test_a_tools_execute_listener_cannot_assign_none_to_the_signal(ctx: Context) -> None:
    async def around(exec: ToolDispatchExecution, next: Any) -> Any:
        exec.signal = None  # type: ignore[assignment]
        return await next()

    ctx.on("tools/execute", around)
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json("exec.signal must be an AbortSignal; got NoneType")


async def test_a_tools_execute_listener_cannot_delete_the_signal(ctx: Context) -> None:
    async def around(exec: Any, next: Any) -> Any:
        del exec.signal
        return await next()

    ctx.on("tools/execute", around)
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json("cannot delete exec.signal")


@pytest.mark.parametrize(
    "field", ["token", "call_id", "root_call_id", "name", "arguments", "agent", "parent"]
)
async def test_identity_fields_are_read_only(ctx: Context, field: str) -> None:
    async def around(exec: Any, next: Any) -> Any:
        setattr(exec, field, None)
        return await next()

    ctx.on("tools/execute", around)
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json(f"exec.{field} is read-only")


async def test_the_execution_accepts_no_new_attributes(ctx: Context) -> None:
    async def around(exec: Any, next: Any) -> Any:
        exec.note = "mine"
        return await next()

    ctx.on("tools/execute", around)
    ctx.tools.register(raw_tool())

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json(
        "cannot set exec.note: the execution object is registry-owned"
    )


async def test_defer_context_takes_a_user_message(ctx: Context) -> None:
    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.defer_context("just text")  # type: ignore[arg-type]
        return "ok"

    ctx.tools.register(raw_tool("echo", body))

    result = await ctx.tools.execute(call())

    assert result.to_json() == error_json(
        "defer_context takes a UserMessage (see tether.user_message); got str"
    )
