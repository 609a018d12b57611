"""Tools whose argument model is a `ModelRef` (tether.tools.model_ref, issue 36): defined from
the precomputed table without importing the model or pydantic, validated by the first call (or
`check_arguments`) exactly as a tool defined from the class, and refused at definition when the
table has no schema for the reference."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tether import Deny, ToolDefinition, ToolOutput, define_tool
from tether.kernel import Context
from tether.plugins.fs.args import EditArgs, read_args_model
from tether.tools import ModelRef, ToolArgsError
from tether.tools.schema import model_facing_schema

from .conftest import call, denied_json, error_json, success_json

EDIT = ModelRef("tether.plugins.fs.args:EditArgs")
BAD_EDIT = {"file_path": " ", "old_string": "same", "new_string": "same"}
BAD_EDIT_TEXT = (
    "invalid arguments: file_path: file_path must be a non-empty string; "
    "new_string: old_string and new_string must differ"
)


async def _edited(args: object, _call: object) -> str:
    assert isinstance(args, EditArgs)
    return f"edited {args.file_path}"


def _edit_tool(name: str, parameters: ModelRef | type[EditArgs]) -> ToolDefinition:
    return define_tool(
        name=name,
        description="Edits.",
        parameters=parameters,
        output=ToolOutput(schema=str),
        execute=_edited,
    )


def test_a_reference_gets_the_schema_pydantic_makes_of_its_model() -> None:
    assert _edit_tool("edit", EDIT).parameters == model_facing_schema(EditArgs)


def test_defining_a_tool_from_a_reference_imports_neither_the_model_nor_pydantic() -> None:
    script = (
        "import sys\n"
        "from tether.tools import ModelRef, ToolOutput, define_tool\n"
        "async def edit(args, call): return 'ok'\n"
        "define_tool(name='edit', description='Edits.', output=ToolOutput(),\n"
        "            parameters=ModelRef('tether.plugins.fs.args:EditArgs'), execute=edit)\n"
        "print([m for m in ('pydantic', 'tether.plugins.fs.args') if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )

    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr


async def test_the_first_call_validates_with_the_referenced_model(ctx: Context) -> None:
    ctx.tools.register(_edit_tool("edit", EDIT))

    result = await ctx.tools.execute(
        call("edit", {"file_path": "a.txt", "old_string": "x", "new_string": "y"})
    )

    assert result.to_json() == success_json("edited a.txt")


async def test_a_referenced_and_a_class_defined_tool_refuse_arguments_with_the_same_text(
    ctx: Context,
) -> None:
    ctx.tools.register(_edit_tool("by_ref", EDIT))
    ctx.tools.register(_edit_tool("by_class", EditArgs))

    by_ref = await ctx.tools.execute(call("by_ref", BAD_EDIT))
    by_class = await ctx.tools.execute(call("by_class", BAD_EDIT))

    assert (
        by_ref.to_json()
        == by_class.to_json()
        == error_json(BAD_EDIT_TEXT, "ToolArgsError", "INVALID_ARGS")
    )


async def test_a_referenced_tools_arguments_are_validated_after_policy(ctx: Context) -> None:
    ctx.tools.register(_edit_tool("edit", EDIT))

    async def deny(_exec: object, _next: object) -> Deny:
        return Deny("not today")

    ctx.on("tools/pre-execute", deny)
    result = await ctx.tools.execute(call("edit", BAD_EDIT))

    assert result.to_json() == denied_json("not today")


def test_check_arguments_validates_with_the_referenced_model() -> None:
    definition = _edit_tool("edit", EDIT)
    assert definition.check_arguments is not None

    with pytest.raises(ToolArgsError) as raised:
        definition.check_arguments(BAD_EDIT)

    assert str(raised.value) == BAD_EDIT_TEXT


async def test_a_referenced_tool_with_invalid_arguments_is_not_concurrency_safe(
    ctx: Context,
) -> None:
    ctx.tools.register(
        define_tool(
            name="edit",
            description="Edits.",
            parameters=EDIT,
            output=ToolOutput(schema=str),
            execute=_edited,
            is_concurrency_safe=lambda _args: True,
        )
    )
    good = {"file_path": "a.txt", "old_string": "x", "new_string": "y"}

    modes = [ctx.tools.execution_mode(call("edit", args)) for args in (good, BAD_EDIT)]

    assert modes == ["parallel", "exclusive"]


def test_a_reference_missing_from_the_table_is_refused_at_definition() -> None:
    with pytest.raises(ValueError) as raised:
        _edit_tool("mine", ModelRef("my.tools:Args"))

    assert str(raised.value) == (
        "define_tool(mine): parameters 'my.tools:Args' has no precomputed schema; add the"
        " reference to tether.agent.tool_schemas.argument_refs and run"
        " `python -m tether.agent.tool_schemas`, or pass the model class itself"
    )


def test_a_factory_the_table_never_recorded_is_refused_at_definition() -> None:
    with pytest.raises(ValueError, match=r"parameters 'my\.tools:make\(3\)' has no precomputed"):
        _edit_tool("mine", ModelRef("my.tools:make", (3,)))


def test_a_factory_recorded_for_other_arguments_gets_pydantics_schema_at_definition() -> None:
    definition = _edit_tool("read", ModelRef("tether.plugins.fs.args:read_args_model", (10,)))

    assert definition.parameters == model_facing_schema(read_args_model(10))
    assert definition.parameters["properties"]["limit"]["maximum"] == 10  # type: ignore[index]


def test_a_factory_references_key_carries_its_arguments_as_json() -> None:
    ref = ModelRef("tether.plugins.fs.args:read_args_model", (2000, "x", None))

    assert ref.key == 'tether.plugins.fs.args:read_args_model(2000, "x", null)'


def test_a_target_without_module_and_attribute_is_refused() -> None:
    with pytest.raises(ValueError) as raised:
        ModelRef("tether.plugins.fs.args.EditArgs")

    assert str(raised.value) == (
        "ModelRef('tether.plugins.fs.args.EditArgs'): expected '<module>:<attribute>', e.g."
        " 'mypackage.args:ReadArgs'"
    )


def test_resolving_a_reference_to_something_that_is_not_a_model_raises_type_error() -> None:
    with pytest.raises(TypeError, match="not a pydantic model class"):
        ModelRef("tether.plugins.fs.args:read_args_model").resolve()
