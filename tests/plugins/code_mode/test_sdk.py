"""The `tools:sdk` prompt section (spec §8.4) and the prompt sections per presentation mode.

Contract: the fixed instructions, a blank line, then one fenced `python` block: the `typing`
import of the symbols used, `ToolCallError`, the `TypedDict` classes (nested ones first), the
`Tools` protocol with one member per tool in name order (methods for plain names, comments for
exotic ones), and `tools: Tools`. Schemas it cannot express become `Any`; the text is a pure
function of the tool set.
"""

from __future__ import annotations

from tether.kernel import Context
from tether.plugins.code_mode import plugin as code_mode
from tether.plugins.code_mode.sdk import (
    CODE_ONLY_TEXT,
    SDK_INSTRUCTIONS,
    SdkTool,
    render_tools_sdk,
)
from tether.tools import ToolRuntime

BASH = SdkTool(
    "bash",
    "Run a shell command.",
    {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
        "additionalProperties": False,
    },
    {"type": "string"},
)


def block(sdk: str) -> str:
    head = SDK_INSTRUCTIONS + "\n\n```python\n"
    assert sdk.startswith(head)
    assert sdk.endswith("\n```")
    return sdk[len(head) : -len("\n```")]


def test_a_plain_tool_is_a_typed_method_with_its_description() -> None:
    assert block(render_tools_sdk([BASH])) == (
        "from typing import Protocol, TypedDict\n\n"
        "ToolCallError = RuntimeError  # a failed call: RuntimeError('<tool name>: <message>')\n\n"
        "class BashArgs(TypedDict):\n"
        "    command: str\n\n"
        "class Tools(Protocol):\n"
        "    async def bash(self, args: BashArgs) -> str:\n"
        '        """Run a shell command."""\n\n'
        "tools: Tools"
    )


def test_exotic_names_are_comments_and_an_empty_protocol_passes() -> None:
    tool = SdkTool("my-mcp.tool", "Does things.\nTwice.", {"type": "object"}, None)

    assert block(render_tools_sdk([tool])) == (
        "from typing import Any, Protocol\n\n"
        "ToolCallError = RuntimeError  # a failed call: RuntimeError('<tool name>: <message>')\n\n"
        "class Tools(Protocol):\n"
        "    pass\n"
        '    # tools["my-mcp.tool"](args: dict[str, Any]) -> Any\n'
        "    #   Does things. Twice.\n\n"
        "tools: Tools"
    )


def test_fields_optional_nested_literal_and_open_objects() -> None:
    tool = SdkTool(
        "find",
        "",
        {
            "type": "object",
            "properties": {
                "mode": {"enum": ["fast", "full"], "description": "How   hard\tto look."},
                "where": {
                    "type": "object",
                    "properties": {"root": {"type": "string"}},
                    "additionalProperties": False,
                },
                "tags": {"type": "array", "items": {"type": ["string", "null"]}},
            },
            "required": ["mode"],
        },
        {"type": "array"},
    )

    assert block(render_tools_sdk([tool])) == (
        "from typing import Any, Literal, NotRequired, Protocol, TypedDict\n\n"
        "ToolCallError = RuntimeError  # a failed call: RuntimeError('<tool name>: <message>')\n\n"
        "class FindArgsWhere(TypedDict):\n"
        "    root: NotRequired[str]\n\n"
        "class FindArgs(TypedDict):\n"
        "    # How hard to look.\n"
        '    mode: Literal["fast", "full"]\n'
        "    where: NotRequired[FindArgsWhere]\n"
        "    tags: NotRequired[list[str | None]]\n"
        "    # Additional keys beyond those declared are allowed.\n\n"
        "class Tools(Protocol):\n"
        "    async def find(self, args: FindArgs) -> list[Any]: ...\n\n"
        "tools: Tools"
    )


def test_an_object_with_a_field_that_is_no_identifier_degrades_to_a_dict() -> None:
    tool = SdkTool("odd", "", {"type": "object", "properties": {"class": {"type": "string"}}}, None)

    assert "async def odd(self, args: dict[str, Any]) -> Any: ..." in render_tools_sdk([tool])


def test_the_text_is_the_same_for_the_same_tools_in_any_order() -> None:
    other = SdkTool("alpha", "First.", {"type": "object"}, None)

    assert render_tools_sdk([BASH, other]) == render_tools_sdk([other, BASH])
    assert "run_code" not in block(
        render_tools_sdk([SdkTool("run_code", "x", {"type": "object"}, None)])
    )


async def test_code_mode_asks_for_the_code_only_section_and_the_sdk() -> None:
    ctx = Context()
    await ctx.plugin(ToolRuntime, {"mode": "code"})
    await ctx.plugin(code_mode)
    try:
        sections = ctx.prompt_sections.sections()
    finally:
        await ctx.dispose()

    assert sections[0] == CODE_ONLY_TEXT
    assert sections[1].startswith(SDK_INSTRUCTIONS)
    assert len(sections) == 2


async def test_both_mode_asks_for_the_sdk_and_native_mode_for_nothing() -> None:
    for mode, count in (("both", 1), ("native", 0)):
        ctx = Context()
        await ctx.plugin(ToolRuntime, {"mode": mode})
        await ctx.plugin(code_mode)
        try:
            assert len(ctx.prompt_sections.sections()) == count
        finally:
            await ctx.dispose()
