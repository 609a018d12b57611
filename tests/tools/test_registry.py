"""The registry surface: `register`, `get`, `schemas`, `execution_mode`, and ownership
(spec §1.18, §5.1; CONTRACT §4.4).

Contract:
- `register` validates (`tool "<name>" must declare output { schema, render,
  presentation_meta? }`, `tool "<name>" timeout_ms must be a positive finite number`), refuses a
  taken name, emits `tools/change`, and rolls the registration back when a `tools/change`
  listener raises (the error propagates). It returns the disposer; a plugin's registrations are
  removed when the plugin is disposed. `define_tool` checks `timeout_ms` itself.
- Mounting `ToolRuntime` provides `ctx.tools` and nothing else.
- `schemas()` projects `{"name", "description", "parameters"}` in registration order, a fresh
  deep copy each time; nothing else of a definition leaks.
- `execution_mode` is `parallel` only when the tool's classifier returns exactly `True` for the
  raw arguments; unknown tools, no classifier, anything else and a raise are `exclusive`.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import BaseModel, Field

from tether import ToolDefinition, ToolExecution, ToolOutput, define_tool
from tether.kernel import Context
from tether.tools import JsonSchemaError, ToolRuntime

from .conftest import call, denied_json, error_json, raw_tool, success_json

ALREADY = (
    'tool "echo" is already registered (for a per-agent variant, register through that '
    "agent's context instead)"
)


async def test_register_returns_a_disposer_and_get_finds_the_definition(ctx: Context) -> None:
    definition = raw_tool()

    remove = ctx.tools.register(definition)

    assert ctx.tools.get("echo") is definition
    remove()
    assert ctx.tools.get("echo") is None
    assert (await ctx.tools.execute(call())).to_json() == error_json(
        'unknown tool "echo"', "ToolNotFoundError", "UNKNOWN_TOOL"
    )


async def test_register_and_dispose_emit_tools_change(ctx: Context) -> None:
    changes: list[str | None] = []
    ctx.on("tools/change", lambda: changes.append(ctx.tools.get("echo") and "present"))

    remove = ctx.tools.register(raw_tool())
    remove()

    assert changes == ["present", None]


async def test_a_raising_tools_change_listener_rolls_the_registration_back(
    ctx: Context,
) -> None:
    def listener() -> None:
        raise RuntimeError("catalog refused")

    remove_listener = ctx.on("tools/change", listener)

    with pytest.raises(RuntimeError, match="catalog refused"):
        ctx.tools.register(raw_tool())

    assert ctx.tools.get("echo") is None
    remove_listener()
    ctx.tools.register(raw_tool())
    assert ctx.tools.get("echo") is not None


async def test_a_taken_name_is_refused_and_the_first_registration_stays(ctx: Context) -> None:
    first = raw_tool()
    ctx.tools.register(first)

    with pytest.raises(ValueError) as refused:
        ctx.tools.register(raw_tool())

    assert str(refused.value) == ALREADY
    assert ctx.tools.get("echo") is first


async def test_a_name_is_free_again_after_its_tool_is_disposed(ctx: Context) -> None:
    ctx.tools.register(raw_tool())()

    ctx.tools.register(raw_tool())

    assert ctx.tools.get("echo") is not None


@pytest.mark.parametrize(
    "output",
    [None, {"schema": None}, ToolOutput(render=None), ToolOutput(presentation_meta=3)],  # type: ignore[arg-type]
)
async def test_a_definition_without_a_proper_output_is_refused(
    ctx: Context, output: object
) -> None:
    definition = ToolDefinition(
        name="echo",
        description="d",
        parameters={"type": "object"},
        output=output,  # type: ignore[arg-type]
        execute=lambda args, exec: "ok",
    )

    with pytest.raises(TypeError) as refused:
        ctx.tools.register(definition)

    assert str(refused.value) == (
        'tool "echo" must declare output { schema, render, presentation_meta? }'
    )


@pytest.mark.parametrize("timeout_ms", [0, -1, math.nan, math.inf, True, "10"])
async def test_a_definition_with_a_bad_timeout_is_refused(ctx: Context, timeout_ms: object) -> None:
    with pytest.raises(ValueError) as refused:
        ctx.tools.register(raw_tool(timeout_ms=timeout_ms))

    assert str(refused.value) == 'tool "echo" timeout_ms must be a positive finite number'
    assert ctx.tools.get("echo") is None


@pytest.mark.parametrize("timeout_ms", [0, -5, math.nan, math.inf])
def test_define_tool_refuses_a_bad_timeout(timeout_ms: float) -> None:
    with pytest.raises(ValueError) as refused:
        define_tool(
            name="slow",
            description="d",
            parameters={"type": "object"},
            output=ToolOutput(),
            execute=lambda args, exec: None,
            timeout_ms=timeout_ms,
        )

    assert str(refused.value) == "define_tool(slow): timeout_ms must be a positive finite number"


def test_an_output_schema_outside_the_supported_subset_is_refused_when_defined() -> None:
    with pytest.raises(JsonSchemaError) as refused:
        raw_tool(output=ToolOutput(schema={"type": ["string", "null"]}))

    assert refused.value.code == "UNSUPPORTED_SCHEMA"
    assert str(refused.value) == (
        "unsupported JSON schema: schema.type must be a single type string "
        "(type arrays are not supported)"
    )


class Opaque:
    """A type pydantic cannot build a validator for."""


class NoArgs(BaseModel):
    pass


async def test_an_output_type_pydantic_cannot_use_fails_the_first_call_naming_the_tool(
    ctx: Context,
) -> None:
    async def body(args: NoArgs, exec: object) -> object:
        return Opaque()

    ctx.tools.register(  # defining it builds no validator: a boot defines every tool
        define_tool(
            name="opaque",
            description="returns what it cannot declare",
            parameters=NoArgs,
            output=ToolOutput(schema=Opaque),
            execute=body,
        )
    )

    result = (await ctx.tools.execute(call("opaque"))).to_json()

    assert result["is_error"] is True
    message = result["error"]["message"]
    assert message.startswith(f'tool "opaque": its output schema {Opaque!r} cannot validate values')
    assert message.endswith("declare a type pydantic supports, or a JSON Schema mapping")


async def test_register_refuses_what_is_not_a_definition(ctx: Context) -> None:
    with pytest.raises(TypeError) as refused:
        ctx.tools.register({"name": "echo"})  # type: ignore[arg-type]

    assert str(refused.value) == (
        "register() takes a ToolDefinition (see define_tool / @tool); got dict"
    )


async def test_mounting_the_runtime_provides_tools_and_nothing_else() -> None:
    root = Context()
    await root.plugin(ToolRuntime)
    try:
        assert root.tools.schemas() == []
        assert root.get("approval") is None
        for event in ("tools/pre-execute", "tools/execute", "tools/post-execute", "tools/result"):
            assert root.listeners(event) == ()
    finally:
        await root.dispose()


class ToolPlugin:
    """A plugin that registers a tool, a guard and a wrapper through its own context."""

    name = "tool-plugin"
    inject = ("tools",)

    @staticmethod
    def apply(ctx: Context) -> None:
        ctx.tools.register(raw_tool("plugged"))
        ctx.tools.guard(lambda exec: "plugin guard" if exec.name == "other" else None)


async def test_disposing_a_plugin_removes_its_tools_and_guards(ctx: Context) -> None:
    ctx.tools.register(raw_tool("other"))
    handle = await ctx.plugin(ToolPlugin)
    assert (await ctx.tools.execute(call("plugged"))).to_json() == success_json("ok")
    assert (await ctx.tools.execute(call("other"))).to_json() == denied_json("plugin guard")

    await handle.dispose()

    assert ctx.tools.get("plugged") is None
    assert (await ctx.tools.execute(call("other"))).to_json() == success_json("ok")


# -- schemas -------------------------------------------------------------------------------------


async def test_schemas_project_name_description_and_parameters_in_registration_order(
    ctx: Context,
) -> None:
    ctx.tools.register(
        raw_tool(
            "b",
            parameters={"type": "object", "properties": {"q": {"type": "string"}}},
            timeout_ms=100,
            is_concurrency_safe=lambda args: True,
            finalize_content=lambda exec, result: None,
        )
    )
    ctx.tools.register(raw_tool("a"))

    assert ctx.tools.schemas() == [
        {
            "name": "b",
            "description": "the b tool",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
        {"name": "a", "description": "the a tool", "parameters": {"type": "object"}},
    ]


async def test_schemas_are_a_fresh_deep_copy_each_time(ctx: Context) -> None:
    parameters: dict[str, Any] = {"type": "object", "properties": {"q": {"type": "string"}}}
    ctx.tools.register(raw_tool("a", parameters=parameters))

    first = ctx.tools.schemas()
    first[0]["parameters"]["properties"]["q"]["type"] = "integer"
    first[0]["name"] = "renamed"

    assert ctx.tools.schemas()[0] == {
        "name": "a",
        "description": "the a tool",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
    assert ctx.tools.schemas()[0]["parameters"] is not parameters
    assert type(ctx.tools.schemas()[0]["parameters"]) is dict


async def test_schemas_of_a_pydantic_model_drop_titles_and_inline_definitions(
    ctx: Context,
) -> None:
    class Inner(BaseModel):
        host: str = Field(description="the host")

    class Args(BaseModel):
        name: str = Field(description="who")
        count: int = 3
        inner: Inner

    ctx.tools.register(
        define_tool(name="m", description="d", parameters=Args, output=ToolOutput(), execute=_ok)
    )

    assert ctx.tools.schemas()[0]["parameters"] == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "who"},
            "count": {"type": "integer", "default": 3},
            "inner": {
                "type": "object",
                "properties": {"host": {"type": "string", "description": "the host"}},
                "required": ["host"],
            },
        },
        "required": ["name", "inner"],
    }


async def test_parameters_that_are_not_json_fail_the_projection(ctx: Context) -> None:
    ctx.tools.register(raw_tool("bad", parameters={"type": "object", "default": {1, 2}}))

    with pytest.raises(TypeError) as refused:
        ctx.tools.schemas()

    assert (
        str(refused.value) == 'tool "bad" parameters must be lossless JSON before schema projection'
    )


async def test_parameters_nested_five_thousand_deep_are_projected(ctx: Context) -> None:
    nested: dict[str, Any] = {"type": "object"}
    for _ in range(5_000):
        nested = {"type": "object", "properties": {"x": nested}}
    ctx.tools.register(raw_tool("deep", parameters=nested))

    projected = ctx.tools.schemas()[0]["parameters"]

    depth = 0
    while "properties" in projected:
        projected = projected["properties"]["x"]
        depth += 1
    assert depth == 5_000


# -- execution_mode ------------------------------------------------------------------------------


async def _ok(args: object, exec: ToolExecution) -> str:
    return "ok"


class Query(BaseModel):
    q: str


@pytest.mark.parametrize(
    ("classifier", "mode"),
    [
        (None, "exclusive"),
        (lambda args: True, "parallel"),
        (lambda args: False, "exclusive"),
        (lambda args: "yes", "exclusive"),
        (lambda args: 1, "exclusive"),
        (lambda args: None, "exclusive"),
        (lambda args: 1 / 0, "exclusive"),
    ],
)
async def test_only_an_exact_true_classification_runs_in_parallel(
    ctx: Context, classifier: Any, mode: str
) -> None:
    ctx.tools.register(raw_tool(is_concurrency_safe=classifier))

    assert ctx.tools.execution_mode(call()) == mode


async def test_an_unknown_tool_is_exclusive(ctx: Context) -> None:
    assert ctx.tools.execution_mode(call("missing")) == "exclusive"


async def test_the_classifier_gets_the_raw_arguments(ctx: Context) -> None:
    seen: list[object] = []

    def classify(args: object) -> bool:
        seen.append(args)
        return True

    ctx.tools.register(raw_tool(is_concurrency_safe=classify))
    arguments = {"q": "x"}

    ctx.tools.execution_mode(call(arguments=arguments))

    assert seen == [arguments]
    assert seen[0] is arguments


async def test_a_defined_tool_is_exclusive_for_arguments_that_fail_its_parameters(
    ctx: Context,
) -> None:
    ctx.tools.register(
        define_tool(
            name="search",
            description="d",
            parameters=Query,
            output=ToolOutput(),
            execute=_ok,
            is_concurrency_safe=lambda args: args.q != "exclusive",
        )
    )

    assert ctx.tools.execution_mode(call("search", {"q": "x"})) == "parallel"
    assert ctx.tools.execution_mode(call("search", {"q": "exclusive"})) == "exclusive"
    assert ctx.tools.execution_mode(call("search", {"q": 3})) == "exclusive"
