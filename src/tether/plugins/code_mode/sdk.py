"""The Code Mode prompt sections (spec §8.1, §8.4): `tools:code-only` and `tools:sdk`, the typed
Python stubs of every tool a program can call, generated from the tools' JSON Schemas.

Owns: the fixed instruction texts, the JSON Schema → Python type mapping (`TypedDict` classes
named after tools and fields, `Literal`, unions, `list[...]`, `dict[str, Any]`), the `Tools`
protocol layout and `prompt_sections`. Never raises on a strange schema: what it cannot express
becomes `Any`. The output is a pure function of the tool set (byte-identical for an unchanged
set: prompt-cache stability).

Python decision (Monty has no exception subclasses): the stubs declare
`ToolCallError = RuntimeError` and the instructions say a failure's message starts with the tool's
name; the spec's `toolName` attribute does not exist in this sandbox.
"""

from __future__ import annotations

import functools
import json
import keyword
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from ...tools.definition import ToolDefinition
from ...tools.registry import RUN_CODE, ToolRuntime
from .prelude import is_method_name

__all__ = [
    "CODE_ONLY_TEXT",
    "SDK_INSTRUCTIONS",
    "SdkTool",
    "prompt_sections",
    "render_tools_sdk",
    "sdk_tool",
]

CODE_ONLY_TEXT: Final = (
    "`run_code` is the only tool you can call directly — a tool call naming any other tool "
    "fails. Reach every tool the SDK declares below from inside the program."
)

SDK_INSTRUCTIONS: Final = (
    "## Writing code for run_code\n"
    "\n"
    "`run_code` takes two required arguments: `code` — the body of an async Python function "
    "(top-level `await` and `return` both work) — and `description`, a short summary of what "
    "the program does. At run time exactly two of the names declared below are bound: `tools`"
    " and `ToolCallError`. Everything else is a STATIC STUB describing argument and return "
    "types — in particular the `TypedDict` classes do NOT exist at run time, so build "
    'arguments as plain `dict`/`list` JSON values: `await tools.name({"field": 1})`, never '
    "`FooArgs(field=1)`, which raises `NameError`. Inside the program:\n"
    "\n"
    "- Call tools as `await tools.name(args)` — subscript access for exotic, reserved, or "
    'underscore-leading names: `await tools["my-tool"](args)`. Every call resolves to the '
    "tool's typed canonical JSON value (each method's return type below). Tool arguments must"
    " be lossless JSON.\n"
    "- A FAILED tool call raises `ToolCallError` (in this sandbox the built-in "
    "`RuntimeError`), whose message starts with the failed tool's name and a colon (`\"bash: "
    '..."`; there is no `toolName` attribute here: `str(e).split(": ", 1)[0]` is the name) '
    "and is otherwise human-readable — wrap in `try/except ToolCallError` to handle and "
    "continue.\n"
    "- Independent read-only calls MAY overlap under `asyncio.gather` (safe calls run "
    "concurrently; mutating calls run alone, in submission order). Sequence dependent work "
    "with `await`.\n"
    "- Emit the run's answer with `print(...)` and/or a top-level `return <value>`; the "
    "returned value must be lossless JSON (lists and dicts, not tuples or sets). Only what "
    "you print and return is program output. A successful tool result containing an image is "
    "attached after the run so you can inspect it on the next step; every other intermediate "
    "result stays out of the conversation, so extract just what you need.\n"
    "- The program runs in a sandboxed Python subset (no class inheritance; no filesystem, "
    "network, environment or subprocess access of its own — use the tools).\n"
    "\n"
    "The available tools:"
)

_MAX_LIST_DEPTH: Final = 180
_MAX_CLASS_BASE: Final = 120
_SYMBOLS: Final = ("Any", "Literal", "NotRequired", "Protocol", "TypedDict")


@functools.cache
def _split() -> re.Pattern[str]:
    return re.compile(r"[\W_]+")


@functools.cache
def _control() -> re.Pattern[str]:
    return re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class SdkTool:
    """What the SDK needs of one tool: its name, description and two JSON Schemas."""

    name: str
    description: str
    parameters: Mapping[str, object]
    output: Mapping[str, object] | None


def sdk_tool(definition: ToolDefinition) -> SdkTool:
    """The SDK view of a registered tool (its output schema derived when it is a type)."""
    schema = definition.output.schema
    output: Mapping[str, object] | None
    if schema is None:
        output = None
    elif isinstance(schema, Mapping):
        output = schema
    else:
        from pydantic import TypeAdapter  # a typed output: when the stubs are made, not at boot

        try:
            output = TypeAdapter(cast(Any, schema)).json_schema(mode="serialization")
        except Exception:
            output = None
    return SdkTool(definition.name, definition.description, definition.parameters, output)


def camel(name: str) -> str:
    """`read_file` → `ReadFile`; `my-mcp.tool` → `MyMcpTool`; `9lives` → `Tool9lives`."""
    parts = [part for part in _split().split(name) if part]
    joined = unicodedata.normalize("NFKC", "".join(p[:1].upper() + p[1:] for p in parts))
    if not joined[:1].isalpha():
        joined = "Tool" + joined
    return joined[:_MAX_CLASS_BASE]


def _one_line(text: str) -> str:
    collapsed = " ".join(text.split())
    return _control().sub(lambda m: f"\\x{ord(m.group()):02x}", collapsed)


def _field_name_ok(name: str) -> bool:
    return (
        name.isidentifier()
        and unicodedata.normalize("NFKC", name) == name
        and not keyword.iskeyword(name)
        and name != "__debug__"
        and not (name.startswith("__") and not name.endswith("__"))
    )


class _Renderer:
    def __init__(self) -> None:
        self.classes: list[str] = []
        self.taken: set[str] = set()
        self.used: set[str] = set()

    def class_name(self, base: str) -> str:
        name, n = base, 2
        while name in self.taken:
            name, n = f"{base}{n}", n + 1
        self.taken.add(name)
        return name

    def any(self) -> str:
        self.used.add("Any")
        return "Any"

    def type_of(self, schema: object, base: str, root: object, depth: int = 0) -> str:
        try:
            return self._type_of(schema, base, root, depth, set())
        except RecursionError:
            return self.any()

    def _type_of(self, schema: object, base: str, root: object, depth: int, refs: set[str]) -> str:
        if schema is True:
            return self.any()
        if not isinstance(schema, Mapping):
            return self.any()
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = _resolve(root, ref)
            if target is None or ref in refs:
                return self.any()
            return self._type_of(target, base, root, depth, refs | {ref})
        if "const" in schema:
            return self._literal([schema["const"]])
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return self._literal(enum)
        for key in ("oneOf", "anyOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                return self._union(
                    [
                        self._type_of(b, f"{base}{i}", root, depth, refs)
                        for i, b in enumerate(branches, 1)
                    ]
                )
        kind = schema.get("type")
        if isinstance(kind, list):
            return self._union(
                [self._type_of({**schema, "type": k}, base, root, depth, refs) for k in kind]
            )
        match kind:
            case "string":
                return "str"
            case "number":
                return "float"
            case "integer":
                return "int"
            case "boolean":
                return "bool"
            case "null":
                return "None"
            case "array":
                if depth >= _MAX_LIST_DEPTH:
                    return self.any()
                items = schema.get("items")
                inner = (
                    self.any()
                    if items is None
                    else self._type_of(items, f"{base}Item", root, depth + 1, refs)
                )
                return f"list[{inner}]"
            case "object":
                return self._object(schema, base, root, depth, refs)
        return self.any()

    def _literal(self, values: Sequence[object]) -> str:
        rendered: list[str] = []
        for value in values:
            if isinstance(value, bool):
                rendered.append("True" if value else "False")
            elif value is None:
                rendered.append("None")
            elif isinstance(value, str | int):
                rendered.append(json.dumps(value, ensure_ascii=False))
            else:
                return self.any()
        self.used.add("Literal")
        return f"Literal[{', '.join(rendered)}]"

    @staticmethod
    def _union(types: list[str]) -> str:
        unique = list(dict.fromkeys(types))
        return "Any" if "Any" in unique else " | ".join(unique)

    def _object(
        self, schema: Mapping[str, Any], base: str, root: object, depth: int, refs: set[str]
    ) -> str:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        closed = schema.get("additionalProperties") is False
        if not properties and not closed:
            self.used.add("Any")
            return "dict[str, Any]"
        if not all(isinstance(k, str) and _field_name_ok(k) for k in properties):
            self.used.add("Any")
            return "dict[str, Any]"
        required = schema.get("required")
        required_set = set(required) if isinstance(required, list) else set()
        name = self.class_name(base)
        lines = [f"class {name}(TypedDict):"]
        self.used.add("TypedDict")
        for field, field_schema in properties.items():
            annotation = self._type_of(field_schema, name + camel(field), root, depth, refs)
            description = (
                field_schema.get("description") if isinstance(field_schema, Mapping) else None
            )
            if isinstance(description, str) and description.strip():
                lines.append(f"    # {_one_line(description)}")
            if field in required_set:
                lines.append(f"    {field}: {annotation}")
            else:
                self.used.add("NotRequired")
                lines.append(f"    {field}: NotRequired[{annotation}]")
        if not properties:
            lines.append("    pass")
        if not closed:
            lines.append("    # Additional keys beyond those declared are allowed.")
        self.classes.append("\n".join(lines))
        return name


def _resolve(root: object, ref: str) -> object | None:
    if not ref.startswith("#/"):
        return None
    node: object = root
    for part in ref[2:].split("/"):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part.replace("~1", "/").replace("~0", "~"))
    return node


def _docstring(text: str) -> str:
    return _one_line(text).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def render_tools_sdk(tools: Sequence[SdkTool]) -> str:
    """The `tools:sdk` section for `tools` (any order; `run_code` is left out)."""
    renderer = _Renderer()
    members: list[str] = []
    has_method = False
    for tool in sorted((t for t in tools if t.name != RUN_CODE), key=lambda t: t.name):
        base = camel(tool.name)
        args = renderer.type_of(tool.parameters, f"{base}Args", tool.parameters)
        output = (
            renderer.any()
            if tool.output is None
            else renderer.type_of(tool.output, f"{base}Output", tool.output)
        )
        description = tool.description.strip()
        if is_method_name(tool.name):
            has_method = True
            signature = f"    async def {tool.name}(self, args: {args}) -> {output}:"
            if description:
                members.append(f'{signature}\n        """{_docstring(description)}"""')
            else:
                members.append(f"{signature} ...")
        else:
            comment = f"    # tools[{json.dumps(tool.name)}](args: {args}) -> {output}"
            if description:
                comment += f"\n    #   {_one_line(description)}"
            members.append(comment)
    renderer.used.add("Protocol")
    body = ([] if has_method else ["    pass"]) + members
    symbols = ", ".join(s for s in _SYMBOLS if s in renderer.used)
    blocks = [
        f"from typing import {symbols}",
        "ToolCallError = RuntimeError  # a failed call: RuntimeError('<tool name>: <message>')",
        *renderer.classes,
        "class Tools(Protocol):\n" + "\n".join(body),
        "tools: Tools",
    ]
    return SDK_INSTRUCTIONS + "\n\n```python\n" + "\n\n".join(blocks) + "\n```"


def prompt_sections(
    tools: ToolRuntime,
    agent: object | None = None,
    withholds: Callable[[str], bool] | None = None,
) -> list[str]:
    """The sections the registry's presentation mode asks for, in order (`tools:code-only` at
    99, `tools:sdk` at 150); none in `native` mode. The stubs leave out the tools `withholds`
    names (the `permissions` service's: a deny rule names them whole)."""
    if tools.mode == "native":
        return []
    names = [n for n in tools.names(agent) if withholds is None or not withholds(n)]
    visible = [tools.get(name, agent) for name in names]
    sdk = render_tools_sdk([sdk_tool(d) for d in visible if d is not None])
    return [CODE_ONLY_TEXT, sdk] if tools.mode == "code" else [sdk]
