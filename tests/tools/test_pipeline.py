"""The dispatch path of one call and the registry's exact result texts (spec §1.1, §1.9–§1.10,
§1.16–§1.17; CONTRACT §4.3–§4.4).

Contract:
- `execute()` never raises for tool or policy failures; every failure is an `is_error` result
  whose content is `Error: <message>`.
- Creation reads the input once, mints a fresh token per call (the same object in every stage),
  and snapshots the arguments into a frozen deep copy the body receives; the caller's object is
  neither frozen nor shared. Arguments that are not lossless JSON end the call with
  `tool execution arguments must be losslessly JSON-serializable` before any listener runs.
- A success carries the canonical value (validated by `output.schema`, dumped to JSON, frozen)
  and the rendered content; `presentation_meta` only for top-level calls; `concludes_turn` when
  the body asked for it.
- Codes: `UNKNOWN_TOOL` (`ToolNotFoundError`), `INVALID_ARGS` (`ToolArgsError`, pydantic
  violations as `<path>: <msg>`, the root as `arguments`), `INVALID_TOOL_OUTPUT`
  (`ToolOutputError`, root `value`). A thrown `HarnessError` keeps its name and code; any other
  exception keeps only its message.
- Sync bodies run in a worker thread; a body that raises `CancelledError` while its task is not
  being cancelled is an ordinary tool error.
"""

from __future__ import annotations

import asyncio
import math
import threading
from typing import Any

import pytest
from pydantic import BaseModel

from tether import (
    AbortSignal,
    HarnessError,
    ToolExecution,
    ToolOutput,
    ToolRunContext,
    ToolSuccess,
    define_tool,
    user_message,
)
from tether.kernel import Context

from .conftest import Recorder, call, error_json, raw_tool, success_json, text

NOT_JSON_ARGS = error_json("tool execution arguments must be losslessly JSON-serializable")


class Server(BaseModel):
    host: str
    port: int = 80


class Config(BaseModel):
    servers: list[Server]


async def echo_servers(args: Config, exec: ToolRunContext) -> str:
    return ",".join(server.host for server in args.servers)


def config_tool() -> Any:
    return define_tool(
        name="configure",
        description="configure servers",
        parameters=Config,
        output=ToolOutput(schema=str),
        execute=echo_servers,
    )


# -- success ------------------------------------------------------------------------------------


async def test_a_success_carries_the_canonical_value_and_its_rendered_content(
    ctx: Context,
) -> None:
    async def body(args: Any, exec: ToolRunContext) -> dict[str, Any]:
        return {"n": 1, "tags": ["a"]}

    ctx.tools.register(raw_tool("stats", body))

    result = await ctx.tools.execute(call("stats"))

    assert result.to_json() == success_json('{"n":1,"tags":["a"]}')
    assert isinstance(result, ToolSuccess)
    assert result.value == {"n": 1, "tags": ["a"]}
    assert result.additional_contexts == ()
    assert result.concludes_turn is False


async def test_the_canonical_value_is_the_output_schema_dump_in_json_mode(ctx: Context) -> None:
    class Point(BaseModel):
        x: int
        label: str | None = None

    async def body(args: Any, exec: ToolRunContext) -> Point:
        return Point(x=1)

    ctx.tools.register(raw_tool("point", body, output=ToolOutput(schema=Point)))

    result = await ctx.tools.execute(call("point"))

    assert isinstance(result, ToolSuccess)
    assert result.value == {"x": 1, "label": None}
    assert result.to_json() == success_json('{"x":1,"label":null}')


async def test_the_canonical_value_is_deep_frozen(ctx: Context) -> None:
    async def body(args: Any, exec: ToolRunContext) -> dict[str, Any]:
        return {"tags": ["a"]}

    ctx.tools.register(raw_tool("tags", body))

    result = await ctx.tools.execute(call("tags"))

    assert isinstance(result, ToolSuccess)
    value: Any = result.value
    with pytest.raises(TypeError):
        value["tags"].append("b")
    with pytest.raises(TypeError):
        value["other"] = 1


async def test_a_custom_render_shapes_the_content(ctx: Context) -> None:
    def render(args: Any, value: Any) -> list[dict[str, Any]]:
        return [text(f"{args['who']} -> {value}")]

    ctx.tools.register(raw_tool("greet", output=ToolOutput(render=render)))

    result = await ctx.tools.execute(call("greet", {"who": "ada"}))

    assert result.to_json() == success_json("ada -> ok")


async def test_presentation_meta_is_computed_for_a_top_level_call(ctx: Context) -> None:
    ctx.tools.register(
        raw_tool("card", output=ToolOutput(presentation_meta=lambda args, value: {"card": True}))
    )

    result = await ctx.tools.execute(call("card"))

    assert result.to_json() == {"is_error": False, "content": [text("ok")], "meta": {"card": True}}


async def test_presentation_meta_is_not_computed_for_a_nested_call(ctx: Context) -> None:
    parents: list[Any] = []
    ctx.on("tools/result", lambda exec, result: parents.append(exec.token))
    ctx.tools.register(
        raw_tool("card", output=ToolOutput(presentation_meta=lambda args, value: {"card": True}))
    )
    await ctx.tools.execute(call("card", call_id="outer"))

    nested = await ctx.tools.execute(call("card", call_id="inner", parent=parents[0]))

    assert nested.to_json() == success_json("ok")
    assert nested.meta is None


async def test_a_body_that_concludes_the_turn_marks_its_success(ctx: Context) -> None:
    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.conclude_turn()
        return "done"

    ctx.tools.register(raw_tool("finish", body))

    result = await ctx.tools.execute(call("finish"))

    assert isinstance(result, ToolSuccess)
    assert result.concludes_turn is True
    assert result.to_json() == success_json("done")


async def test_a_failure_never_concludes_the_turn(ctx: Context) -> None:
    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.conclude_turn()
        raise RuntimeError("nope")

    ctx.tools.register(raw_tool("finish", body))

    result = await ctx.tools.execute(call("finish"))

    assert result.to_json() == error_json("nope")
    assert not hasattr(result, "concludes_turn")


# -- creation -----------------------------------------------------------------------------------


async def test_the_body_gets_a_frozen_deep_copy_of_the_callers_arguments(ctx: Context) -> None:
    seen: list[Any] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        seen.append(args)
        return "ok"

    ctx.tools.register(raw_tool("echo", body))
    arguments: dict[str, Any] = {"items": [1, 2], "nested": {"a": "b"}}

    await ctx.tools.execute(call("echo", arguments))

    (received,) = seen
    assert received == arguments
    assert received is not arguments
    assert received["items"] is not arguments["items"]
    with pytest.raises(TypeError):
        received["items"].append(3)
    with pytest.raises(TypeError):
        received["nested"]["a"] = "c"
    arguments["items"].append(3)  # the caller's object stays theirs, mutable
    assert received["items"] == [1, 2]


async def test_shared_references_in_arguments_are_fine_and_copied(ctx: Context) -> None:
    seen: list[Any] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        seen.append(args)
        return "ok"

    ctx.tools.register(raw_tool("echo", body))
    shared = {"x": 1}

    result = await ctx.tools.execute(call("echo", {"a": shared, "b": shared}))

    assert result.to_json() == success_json("ok")
    assert seen == [{"a": {"x": 1}, "b": {"x": 1}}]


async def test_any_json_root_is_accepted_as_arguments(ctx: Context) -> None:
    seen: list[Any] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        seen.append(args)
        return "ok"

    ctx.tools.register(raw_tool("echo", body))

    for arguments in ("not json {", 3, 1.5, True, [1]):
        await ctx.tools.execute(call("echo", arguments))

    assert seen == ["not json {", 3, 1.5, True, [1]]


async def test_every_stage_sees_the_one_token_of_its_call_and_calls_get_distinct_tokens(
    ctx: Context,
) -> None:
    tokens: list[tuple[str, str, object]] = []

    async def pre(exec: ToolExecution, next: Any) -> Any:
        tokens.append(("pre", exec.call_id, exec.token))
        return await next()

    async def around(exec: ToolExecution, next: Any) -> Any:
        tokens.append(("around", exec.call_id, exec.token))
        return await next()

    async def body(args: Any, exec: ToolRunContext) -> str:
        tokens.append(("body", exec.call_id, exec.token))
        return "ok"

    async def post(exec: ToolExecution, result: Any, next: Any) -> Any:
        tokens.append(("post", exec.call_id, exec.token))
        return await next()

    ctx.on("tools/pre-execute", pre)
    ctx.on("tools/execute", around)
    ctx.on("tools/post-execute", post)
    ctx.on("tools/result", lambda exec, result: tokens.append(("result", exec.call_id, exec.token)))
    ctx.tools.register(raw_tool("echo", body))

    await ctx.tools.execute(call("echo", call_id="a"))
    await ctx.tools.execute(call("echo", call_id="b"))

    by_call = {c: {token for _, cid, token in tokens if cid == c} for c in ("a", "b")}
    assert [stage for stage, _, _ in tokens] == ["pre", "around", "body", "post", "result"] * 2
    assert len(by_call["a"]) == 1
    assert len(by_call["b"]) == 1
    assert by_call["a"] != by_call["b"]


async def test_root_call_id_defaults_to_the_call_id(ctx: Context) -> None:
    seen: list[tuple[str, str]] = []
    ctx.on("tools/result", lambda exec, result: seen.append((exec.call_id, exec.root_call_id)))
    ctx.tools.register(raw_tool())

    await ctx.tools.execute(call(call_id="c7"))
    await ctx.tools.execute(call(call_id="c8", root_call_id="root"))

    assert seen == [("c7", "c7"), ("c8", "root")]


async def test_the_execution_carries_the_callers_agent_and_parent(ctx: Context) -> None:
    seen: list[tuple[object, object]] = []
    ctx.on("tools/result", lambda exec, result: seen.append((exec.agent, exec.parent)))
    ctx.tools.register(raw_tool())
    agent = object()

    await ctx.tools.execute(call(agent=agent))

    assert seen == [(agent, None)]


# -- argument materialization -------------------------------------------------------------------


class Opaque:
    pass


def _cycle() -> dict[str, Any]:
    looped: dict[str, Any] = {}
    looped["self"] = looped
    return looped


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param(math.nan, id="nan"),
        pytest.param({"x": math.inf}, id="infinity"),
        pytest.param({"x": -0.0}, id="negative-zero"),
        pytest.param({"x": {1, 2}}, id="set"),
        pytest.param({"x": (1, 2)}, id="tuple"),
        pytest.param({"x": Opaque()}, id="custom-object"),
        pytest.param({1: "int key"}, id="non-str-key"),
        pytest.param({"x": b"bytes"}, id="bytes"),
        pytest.param(_cycle(), id="cycle"),
    ],
)
async def test_arguments_that_are_not_lossless_json_fail_before_any_phase(
    ctx: Context, recorder: Recorder, arguments: object
) -> None:
    ctx.tools.register(raw_tool("echo", _counting_body(recorder)))

    result = await ctx.tools.execute(call("echo", arguments))

    assert result.to_json() == NOT_JSON_ARGS
    assert recorder.counts == {"pre": 0, "around": 0, "body": 0, "post": 0, "result": 1}


async def test_a_failed_materialization_publishes_an_execution_without_arguments(
    ctx: Context, recorder: Recorder
) -> None:
    ctx.tools.register(raw_tool("echo"))

    await ctx.tools.execute(call("echo", {"x": {1}}))

    ((exec, _),) = recorder.published
    assert exec.arguments is None
    assert exec.name == "echo"


async def test_arguments_nested_five_thousand_deep_materialize(ctx: Context) -> None:
    depths: list[int] = []

    async def body(args: Any, exec: ToolRunContext) -> str:
        depth, node = 0, args
        while isinstance(node, dict):
            depth, node = depth + 1, node["x"]
        depths.append(depth)
        return "ok"

    ctx.tools.register(raw_tool("deep", body))
    nested: Any = 0
    for _ in range(5_000):
        nested = {"x": nested}

    result = await ctx.tools.execute(call("deep", nested))

    assert result.to_json() == success_json("ok")
    assert depths == [5_000]


def _counting_body(recorder: Recorder) -> Any:
    async def body(args: Any, exec: ToolRunContext) -> str:
        recorder.hit("body")
        return "ok"

    return body


# -- unknown tools and thrown values -------------------------------------------------------------


async def test_an_unknown_tool_fails_at_dispatch_and_still_reaches_post_execute(
    ctx: Context, recorder: Recorder
) -> None:
    result = await ctx.tools.execute(call("missing"))

    assert result.to_json() == error_json(
        'unknown tool "missing"', "ToolNotFoundError", "UNKNOWN_TOOL"
    )
    assert recorder.counts == {"pre": 1, "around": 1, "body": 0, "post": 1, "result": 1}


async def test_a_thrown_harness_error_keeps_its_name_and_code(ctx: Context) -> None:
    async def body(args: Any, exec: ToolRunContext) -> str:
        raise HarnessError("disk full", "ENOSPC")

    ctx.tools.register(raw_tool("write", body))

    result = await ctx.tools.execute(call("write"))

    assert result.to_json() == error_json("disk full", "HarnessError", "ENOSPC")


async def test_a_harness_error_subclass_reports_its_class_name(ctx: Context) -> None:
    class QuotaError(HarnessError):
        pass

    async def body(args: Any, exec: ToolRunContext) -> str:
        raise QuotaError("over quota", "QUOTA")

    ctx.tools.register(raw_tool("write", body))

    result = await ctx.tools.execute(call("write"))

    assert result.to_json() == error_json("over quota", "QuotaError", "QUOTA")


async def test_any_other_exception_keeps_only_its_message(ctx: Context) -> None:
    async def body(args: Any, exec: ToolRunContext) -> str:
        raise ValueError("kaboom")

    ctx.tools.register(raw_tool("boom", body))

    result = await ctx.tools.execute(call("boom"))

    assert result.to_json() == error_json("kaboom")


async def test_an_exception_with_a_message_attribute_reports_that_message(ctx: Context) -> None:
    class Denied(Exception):
        message = "denied by object"

    async def body(args: Any, exec: ToolRunContext) -> str:
        raise Denied("ignored")

    ctx.tools.register(raw_tool("boom", body))

    result = await ctx.tools.execute(call("boom"))

    assert result.to_json() == error_json("denied by object")


async def test_an_unprintable_exception_reports_an_unprintable_thrown_value(
    ctx: Context,
) -> None:
    class Hostile(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    async def body(args: Any, exec: ToolRunContext) -> str:
        raise Hostile()

    ctx.tools.register(raw_tool("boom", body))

    result = await ctx.tools.execute(call("boom"))

    assert result.to_json() == error_json("<unprintable thrown value>")


async def test_a_body_raising_cancelled_error_on_its_own_is_a_tool_error(ctx: Context) -> None:
    async def body(args: Any, exec: ToolRunContext) -> str:
        raise asyncio.CancelledError()

    ctx.tools.register(raw_tool("quits", body))

    result = await ctx.tools.execute(call("quits"))

    assert result.to_json() == error_json("CancelledError")


# -- INVALID_ARGS -------------------------------------------------------------------------------


async def test_invalid_arguments_name_the_path_with_list_indices(ctx: Context) -> None:
    ctx.tools.register(config_tool())

    result = await ctx.tools.execute(call("configure", {"servers": [{"host": "a"}, {}]}))

    assert result.to_json() == error_json(
        "invalid arguments: servers[1].host: Field required", "ToolArgsError", "INVALID_ARGS"
    )


async def test_arguments_that_are_not_an_object_are_reported_at_the_root(ctx: Context) -> None:
    ctx.tools.register(config_tool())

    result = await ctx.tools.execute(call("configure", '{"servers": ['))

    assert result.to_json() == error_json(
        "invalid arguments: arguments: must be a JSON object", "ToolArgsError", "INVALID_ARGS"
    )


async def test_a_nested_value_that_is_not_an_object_never_names_the_model_class(
    ctx: Context,
) -> None:
    ctx.tools.register(config_tool())

    result = await ctx.tools.execute(call("configure", {"servers": ["a"]}))

    assert result.to_json() == error_json(
        "invalid arguments: servers[0]: Input should be an object", "ToolArgsError", "INVALID_ARGS"
    )


async def test_several_violations_are_joined_in_pydantic_order(ctx: Context) -> None:
    ctx.tools.register(config_tool())

    result = await ctx.tools.execute(call("configure", {"servers": [{"port": "x"}, {"host": 1}]}))

    assert result.to_json() == error_json(
        "invalid arguments: servers[0].host: Field required; "
        "servers[0].port: Input should be a valid integer, unable to parse string as an integer; "
        "servers[1].host: Input should be a valid string",
        "ToolArgsError",
        "INVALID_ARGS",
    )


async def test_invalid_arguments_are_found_after_policy_and_wrappers_and_reach_post_execute(
    ctx: Context, recorder: Recorder
) -> None:
    ctx.tools.register(config_tool())

    await ctx.tools.execute(call("configure", {}))

    assert recorder.counts == {"pre": 1, "around": 1, "body": 0, "post": 1, "result": 1}


async def test_the_body_receives_the_validated_frozen_model(ctx: Context) -> None:
    seen: list[Config] = []

    async def body(args: Config, exec: ToolRunContext) -> str:
        seen.append(args)
        return "ok"

    ctx.tools.register(
        define_tool(
            name="configure",
            description="d",
            parameters=Config,
            output=ToolOutput(schema=str),
            execute=body,
        )
    )

    await ctx.tools.execute(call("configure", {"servers": [{"host": "a"}]}))

    (args,) = seen
    assert isinstance(args, Config)
    assert args.servers[0].port == 80
    with pytest.raises(ValueError, match="frozen"):
        args.servers = []


async def test_a_raw_definition_passes_arguments_unvalidated(ctx: Context) -> None:
    ctx.tools.register(
        raw_tool(
            "raw",
            parameters={
                "type": "object",
                "properties": {"q": {"type": "string"}},
                "required": ["q"],
            },
        )
    )

    result = await ctx.tools.execute(call("raw", {}))

    assert result.to_json() == success_json("ok")


# -- INVALID_TOOL_OUTPUT ------------------------------------------------------------------------


async def test_a_value_the_output_type_rejects_is_invalid_tool_output(ctx: Context) -> None:
    async def body(args: Any, exec: ToolRunContext) -> dict[str, int]:
        return {"x": 1}

    ctx.tools.register(raw_tool("numbers", body, output=ToolOutput(schema=list[int])))

    result = await ctx.tools.execute(call("numbers"))

    assert result.to_json() == error_json(
        'tool "numbers" returned invalid output: value: Input should be a valid list',
        "ToolOutputError",
        "INVALID_TOOL_OUTPUT",
    )


async def test_output_violations_name_the_path_under_value(ctx: Context) -> None:
    async def body(args: Any, exec: ToolRunContext) -> list[object]:
        return [1, "two", 3]

    ctx.tools.register(raw_tool("numbers", body, output=ToolOutput(schema=list[int])))

    result = await ctx.tools.execute(call("numbers"))

    assert result.to_json() == error_json(
        'tool "numbers" returned invalid output: '
        "value[1]: Input should be a valid integer, unable to parse string as an integer",
        "ToolOutputError",
        "INVALID_TOOL_OUTPUT",
    )


async def test_a_value_a_json_schema_output_rejects_is_invalid_tool_output(ctx: Context) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    ctx.tools.register(raw_tool("obj", output=ToolOutput(schema=schema)))

    result = await ctx.tools.execute(call("obj"))

    assert result.to_json() == error_json(
        'tool "obj" returned invalid output: "value" must be an object',
        "ToolOutputError",
        "INVALID_TOOL_OUTPUT",
    )


async def test_a_value_that_is_not_json_is_invalid_tool_output(ctx: Context) -> None:
    async def body(args: Any, exec: ToolRunContext) -> object:
        return {1, 2}

    ctx.tools.register(raw_tool("setty", body))

    result = await ctx.tools.execute(call("setty"))

    assert result.to_json() == error_json(
        'tool "setty" returned invalid output: value is not lossless JSON',
        "ToolOutputError",
        "INVALID_TOOL_OUTPUT",
    )


async def test_a_render_that_raises_is_invalid_tool_output(ctx: Context) -> None:
    def render(args: Any, value: Any) -> list[dict[str, Any]]:
        raise ValueError("bad template")

    ctx.tools.register(raw_tool("show", output=ToolOutput(render=render)))

    result = await ctx.tools.execute(call("show"))

    assert result.to_json() == error_json(
        'tool "show" returned invalid output: output.render failed: bad template',
        "ToolOutputError",
        "INVALID_TOOL_OUTPUT",
    )


# -- sync bodies --------------------------------------------------------------------------------


async def test_a_sync_raw_body_runs_in_a_worker_thread(ctx: Context) -> None:
    threads: list[int] = []

    def body(args: Any, exec: ToolRunContext) -> str:
        threads.append(threading.get_ident())
        return "from a thread"

    ctx.tools.register(raw_tool("sync", body))

    result = await ctx.tools.execute(call("sync"))

    assert result.to_json() == success_json("from a thread")
    assert threads != [threading.get_ident()]


async def test_a_sync_defined_body_runs_in_a_worker_thread(ctx: Context) -> None:
    threads: list[int] = []

    def body(args: Config, exec: ToolRunContext) -> str:
        threads.append(threading.get_ident())
        return args.servers[0].host

    ctx.tools.register(
        define_tool(
            name="sync",
            description="d",
            parameters=Config,
            output=ToolOutput(schema=str),
            execute=body,
        )
    )

    result = await ctx.tools.execute(call("sync", {"servers": [{"host": "h"}]}))

    assert result.to_json() == success_json("h")
    assert threads != [threading.get_ident()]


async def test_a_sync_body_that_raises_is_a_tool_error(ctx: Context) -> None:
    def body(args: Any, exec: ToolRunContext) -> str:
        raise HarnessError("sync failure", "SYNC")

    ctx.tools.register(raw_tool("sync", body))

    result = await ctx.tools.execute(call("sync"))

    assert result.to_json() == error_json("sync failure", "HarnessError", "SYNC")


async def test_a_sync_body_sees_its_signal(ctx: Context) -> None:
    seen: list[object] = []

    def body(args: Any, exec: ToolRunContext) -> str:
        seen.append(exec.signal)
        return "ok"

    ctx.tools.register(raw_tool("sync", body))

    await ctx.tools.execute(call("sync"))

    (signal,) = seen
    assert isinstance(signal, AbortSignal)


async def test_deferred_contexts_ride_the_result_in_call_order(ctx: Context) -> None:
    first, second = user_message("first"), user_message("second")

    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.defer_context(first)
        exec.defer_context(second)
        return "ok"

    ctx.tools.register(raw_tool("echo", body))

    result = await ctx.tools.execute(call("echo"))

    assert result.to_json() == success_json("ok")
    assert result.additional_contexts == (first, second)


async def test_deferred_contexts_survive_a_tool_failure(ctx: Context) -> None:
    note = user_message("partial progress")

    async def body(args: Any, exec: ToolRunContext) -> str:
        exec.defer_context(note)
        raise RuntimeError("composite failed")

    ctx.tools.register(raw_tool("composite", body))

    result = await ctx.tools.execute(call("composite"))

    assert result.to_json() == error_json("composite failed")
    assert result.additional_contexts == (note,)
