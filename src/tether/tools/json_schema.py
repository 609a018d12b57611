"""The JSON-Schema subset the tool registry enforces (spec Appendix B), checked and validated.

Owns: `check_supported` (is a raw schema inside the subset? if not, `JsonSchemaError` lists every
violation), `validate` (the total validator: a value against a supported schema, violations in
walk order with the exact Appendix B messages) and `compile_json_schema` (both at once, as the
output-value canonicalizer of a tool that declares its output as a JSON Schema mapping).
Does not own pydantic models: `tether.tools.schema` turns those into model-facing schemas and
validates through pydantic.

The subset: `type` (one of object/array/string/number/integer/boolean/null), `oneOf` (two or more
schemas, exactly one must match, nothing structural beside it), `properties`, `required` (names
declared in `properties`) and `additionalProperties` (a bool) on objects, `items` on arrays,
`enum` (non-empty) and `const` (a member of `enum` when both are given) holding values of a scalar
node's type, and the annotations `description`/`title` (strings) and `default`/`examples`
(lossless JSON). A node with annotations only (`{}`) accepts any lossless JSON value. Schema nodes
are `dict`s, their arrays `list`s (`FrozenDict`/`FrozenList` too), so a supported schema is
itself lossless JSON.

Values are read with the exact-type rules of `tether.core.json`: an object is a `dict` or
`FrozenDict`, an array a `list` or `FrozenList`; subclasses, tuples, sets and other objects are the
wrong type for any typed node. `True` is a boolean, never a number or an integer, and type checks
run before `enum`/`const` so `True` is not mistaken for `1`. An integral float (`1.0`) counts as an
integer (JavaScript parity); NaN, the infinities and `-0.0` are not finite JSON numbers. Python
has no `undefined`: an absent key is skipped, a key holding `None` is validated as `null`.
Object keys are visited in insertion order (JavaScript would move integer-like keys first).

Both walks keep an explicit stack of pending steps instead of recursing, so neither the schema's
nor the value's depth is limited by Python's recursion limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from json import dumps
from typing import TypeAlias, cast

from tether.core.json import (
    FrozenDict,
    FrozenList,
    JsonValue,
    NotLosslessJson,
    is_json_value,
    snapshot,
)
from tether.tools.errors import JsonSchemaError, ToolOutputError

__all__ = ["check_supported", "compile_json_schema", "validate"]

_Step: TypeAlias = Callable[[], None]
_Node: TypeAlias = Mapping[str, object]

_OBJECTS = (dict, FrozenDict)
_ARRAYS = (list, FrozenList)
_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
_SCALAR_TYPES = frozenset({"string", "number", "integer", "boolean", "null"})
_CONSTRAINTS = frozenset(
    {"type", "oneOf", "properties", "required", "additionalProperties", "items", "enum", "const"}
)
_STRUCTURAL = ("properties", "required", "additionalProperties", "items", "enum", "const")
_ALLOWED_ON: Mapping[str, frozenset[str]] = {
    "properties": frozenset({"object"}),
    "required": frozenset({"object"}),
    "additionalProperties": frozenset({"object"}),
    "items": frozenset({"array"}),
    "enum": _SCALAR_TYPES,
    "const": _SCALAR_TYPES,
}
_UNSUPPORTED_KEYWORD = (
    "is not a supported keyword "
    "(subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)"
)


# --- the subset check ---------------------------------------------------------------------------


def check_supported(schema: Mapping[str, object]) -> None:
    """Accept a schema inside the enforced subset; otherwise raise `JsonSchemaError`.

    The error's `violations` name every problem at once, in walk order (a node's own problems,
    then its children's), each prefixed with its path: `schema`, `schema.properties.host`,
    `schema.items`, `schema.oneOf[1]`, e.g. `schema.type must be a single type string (type
    arrays are not supported)`. A schema that contains itself is reported as circular.
    """
    violations = _schema_violations(schema)
    if violations:
        raise JsonSchemaError(violations)


def _schema_violations(schema: object) -> list[str]:
    out: list[str] = []
    on_path: set[int] = set()  # ids of the schema nodes enclosing the one being checked
    steps: list[_Step] = []

    def visit(node: object, path: str) -> None:
        if type(node) not in _OBJECTS:
            out.append(f"{path} must be a schema object")
            return
        if id(node) in on_path:
            out.append(f"{path} is circular")
            return
        on_path.add(id(node))
        steps.append(partial(on_path.discard, id(node)))
        children = _node_violations(cast(_Node, node), path, out)
        steps.extend(partial(visit, child, child_path) for child, child_path in reversed(children))

    visit(schema, "schema")
    while steps:
        steps.pop()()
    return out


def _node_violations(node: _Node, path: str, out: list[str]) -> list[tuple[object, str]]:
    """Append the problems of `node` itself to `out`; return its child schemas with their paths."""
    for key, annotation in node.items():
        if key in ("description", "title"):
            if type(annotation) is not str:
                out.append(f"{path}.{key} must be a string")
        elif key in ("default", "examples"):
            if not is_json_value(annotation):
                out.append(f"{path}.{key} must be lossless JSON")
        elif key not in _CONSTRAINTS:
            out.append(f"{path}.{key} {_UNSUPPORTED_KEYWORD}")

    if "oneOf" in node:
        if "type" in node:
            out.append(f"{path} cannot declare both type and oneOf")
        out.extend(
            f"{path}.{key} is not supported beside oneOf" for key in _STRUCTURAL if key in node
        )
        branches = node["oneOf"]
        if type(branches) not in _ARRAYS or len(cast(list[object], branches)) < 2:
            out.append(f"{path}.oneOf must be an array of at least two schemas")
            return []
        return [
            (branch, f"{path}.oneOf[{i}]") for i, branch in enumerate(cast(list[object], branches))
        ]

    if "type" not in node:
        out.extend(f"{path}.{key} requires type or oneOf" for key in _STRUCTURAL if key in node)
        return []
    kind = node["type"]
    if type(kind) in _ARRAYS:
        out.append(f"{path}.type must be a single type string (type arrays are not supported)")
        return []
    if type(kind) is not str or kind not in _TYPES:
        out.append(f"{path}.type must be one of {'/'.join(_TYPES)}")
        return []
    for key in node:
        allowed = _ALLOWED_ON.get(key)
        if allowed is not None and kind not in allowed:
            out.append(f'{path}.{key} is not supported on type "{kind}"')

    if kind == "object":
        return _object_node_violations(node, path, out)
    if kind == "array":
        return [(node["items"], f"{path}.items")] if "items" in node else []
    _scalar_node_violations(node, kind, path, out)
    return []


def _object_node_violations(node: _Node, path: str, out: list[str]) -> list[tuple[object, str]]:
    declared: Mapping[str, object] | None = {}
    children: list[tuple[object, str]] = []
    if "properties" in node:
        properties = node["properties"]
        if type(properties) not in _OBJECTS or not all(
            type(name) is str for name in cast(dict[object, object], properties)
        ):
            out.append(f"{path}.properties must be an object of schemas")
            declared = None  # unknown: required names cannot be checked against it
        else:
            properties = cast(dict[str, object], properties)
            declared = properties
            children = [(child, f"{path}.properties.{name}") for name, child in properties.items()]
    if "required" in node:
        required = node["required"]
        if type(required) not in _ARRAYS or not all(
            type(name) is str for name in cast(list[object], required)
        ):
            out.append(f"{path}.required must be an array of strings")
        elif declared is not None:
            out.extend(
                f'{path}.required names "{name}" which is not in properties'
                for name in cast(list[str], required)
                if name not in declared
            )
    if "additionalProperties" in node and type(node["additionalProperties"]) is not bool:
        out.append(f"{path}.additionalProperties must be a boolean")
    return children


def _scalar_node_violations(node: _Node, kind: str, path: str, out: list[str]) -> None:
    members: list[object] | None = None
    if "enum" in node:
        allowed = node["enum"]
        if (
            type(allowed) in _ARRAYS
            and allowed
            and all(_is_scalar_of(kind, member) for member in cast(list[object], allowed))
        ):
            members = cast(list[object], allowed)
        else:
            out.append(f"{path}.enum must be a non-empty array of {kind} values")
    if "const" in node:
        const = node["const"]
        if not _is_scalar_of(kind, const):
            article = "an" if kind == "integer" else "a"
            out.append(f"{path}.const must be {article} {kind} value")
        elif members is not None and not any(_same_scalar(const, m) for m in members):
            out.append(f"{path}.const must be a member of {path}.enum")


# --- the validator ------------------------------------------------------------------------------


def validate(schema: Mapping[str, object], value: object, root_label: str) -> list[str]:
    """Every way `value` breaks `schema`, in walk order; `[]` when it conforms. Never raises.

    `schema` should have passed `check_supported`; a node this cannot read is reported as
    `"<path>" must be a lossless JSON value` rather than raised. `root_label` names the value in
    messages: `"value"` gives `value`, `value.text`, `value[0]`; `""` (tool arguments) is shown as
    `arguments` at the root and leaves property paths without a leading dot (`config.host`,
    `tags[1]`, `servers[1].host`).

    Objects: required names (in `required` order), then declared properties present in the value
    (in `properties` order), then undeclared keys under `additionalProperties: false` (in the
    value's order), then, only if all that found nothing, the whole object must be lossless JSON.
    Arrays: each item in index order, then, if nothing was found, losslessness.
    """
    out: list[str] = []
    steps: list[_Step] = []
    steps.append(_guarded(partial(_visit, steps, schema, value, root_label, out), root_label, out))
    while steps:
        steps.pop()()
    return out


def _shown(path: str) -> str:
    return path or "arguments"


def _member(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def _guarded(step: _Step, path: str, out: list[str]) -> _Step:
    """`step`, reporting an exception it raises as a violation at `path` (validation is total)."""

    def run() -> None:
        try:
            step()
        except Exception:
            out.append(f'"{_shown(path)}" must be a lossless JSON value')

    return run


def _visit(steps: list[_Step], node: _Node, value: object, path: str, out: list[str]) -> None:
    """Check `value` against `node`, appending to `out` now or from steps pushed onto `steps`."""
    if not isinstance(node, Mapping):
        raise TypeError(f"a schema node must be a mapping, not {type(node).__name__}")
    if "oneOf" in node:
        branches = list(cast(list[_Node], node["oneOf"]))
        found: list[list[str]] = [[] for _ in branches]
        steps.append(_guarded(partial(_count_matches, found, path, out), path, out))
        for branch, branch_out in reversed(list(zip(branches, found, strict=True))):
            visit = partial(_visit, steps, branch, value, path, branch_out)
            steps.append(_guarded(visit, path, branch_out))
        return
    if "type" not in node:
        if not is_json_value(value):
            out.append(f'"{_shown(path)}" must be a lossless JSON value')
        return
    kind = node["type"]
    if kind == "object":
        _visit_object(steps, node, value, path, out)
    elif kind == "array":
        _visit_array(steps, node, value, path, out)
    else:
        problem = _scalar_violation(node, cast(str, kind), value, path)
        if problem is not None:
            out.append(problem)


def _count_matches(found: list[list[str]], path: str, out: list[str]) -> None:
    matched = sum(1 for branch_out in found if not branch_out)
    if matched != 1:
        out.append(f'"{_shown(path)}" must match exactly one oneOf branch (matched {matched})')


def _visit_object(
    steps: list[_Step], node: _Node, value: object, path: str, out: list[str]
) -> None:
    if type(value) not in _OBJECTS:
        out.append(f'"{_shown(path)}" must be an object')
        return
    members = cast(dict[object, object], value)
    properties = cast(Mapping[str, _Node], node.get("properties", {}))
    found: list[str] = [
        f'missing required property "{_member(path, name)}"'
        for name in cast(list[str], node.get("required", ()))
        if name not in members
    ]

    def finish() -> None:
        if found:
            out.extend(found)
        elif not _unchecked_members_lossless(members, properties):
            out.append(f'"{_shown(path)}" must be a lossless JSON object')

    def undeclared() -> None:
        found.extend(
            f'"{_member(path, key)}" is not a declared property (additionalProperties: false)'
            for key in members
            if key not in properties
        )

    steps.append(_guarded(finish, path, out))
    if node.get("additionalProperties") is False:
        steps.append(_guarded(undeclared, path, found))
    present = [(name, child) for name, child in properties.items() if name in members]
    for name, child in reversed(present):
        child_path = _member(path, name)
        visit = partial(_visit, steps, child, members[name], child_path, found)
        steps.append(_guarded(visit, child_path, found))


def _unchecked_members_lossless(
    members: dict[object, object], properties: Mapping[str, _Node]
) -> bool:
    """Whether an object whose declared members conformed is lossless JSON as a whole.

    A member that conformed to its schema is lossless JSON already (every node checks that), so
    only the keys and the undeclared members are left to look at.
    """
    if type(members) is FrozenDict:
        return True
    return all(
        type(key) is str and (key in properties or is_json_value(member))
        for key, member in members.items()
    )


def _visit_array(steps: list[_Step], node: _Node, value: object, path: str, out: list[str]) -> None:
    if type(value) not in _ARRAYS:
        out.append(f'"{_shown(path)}" must be an array')
        return
    items = cast(list[object], value)
    found: list[str] = []
    has_items = "items" in node

    def finish() -> None:
        if found:
            out.extend(found)
        elif not has_items and not is_json_value(items):  # with `items`, each item was checked
            out.append(f'"{_shown(path)}" must be a dense lossless JSON array')

    steps.append(_guarded(finish, path, out))
    if has_items:
        child = cast(_Node, node["items"])
        for index in range(len(items) - 1, -1, -1):
            item_path = f"{path}[{index}]"
            visit = partial(_visit, steps, child, items[index], item_path, found)
            steps.append(_guarded(visit, item_path, found))


def _scalar_violation(node: _Node, kind: str, value: object, path: str) -> str | None:
    shown = _shown(path)
    if kind == "string":
        if type(value) is not str:
            return f'"{shown}" must be a string'
    elif kind == "boolean":
        if type(value) is not bool:
            return f'"{shown}" must be a boolean'
    elif kind == "null":
        if value is not None:
            return f'"{shown}" must be null'
    elif kind in ("number", "integer"):
        if type(value) is float:
            if not _is_finite_json_float(value):
                return f'"{shown}" must be a finite JSON number'
            if kind == "integer" and not value.is_integer():
                return f'"{shown}" must be an integer'
        elif type(value) is not int:  # bool, int subclasses and non-numbers
            return f'"{shown}" must be {"a number" if kind == "number" else "an integer"}'
    else:
        raise ValueError(f"unsupported schema type {kind!r}")  # reported by the guard
    if "enum" in node:
        members = cast(list[object], node["enum"])
        if not any(_same_scalar(value, member) for member in members):
            return f'"{shown}" must be one of {_compact(members)}'
    if "const" in node:
        const = node["const"]
        if not _same_scalar(value, const):
            return f'"{shown}" must be {_compact(const)}'
    return None


# --- scalars ------------------------------------------------------------------------------------


def _is_finite_json_float(number: float) -> bool:
    return math.isfinite(number) and (number != 0.0 or math.copysign(1.0, number) > 0.0)


def _is_json_number(value: object) -> bool:
    return type(value) is int or (type(value) is float and _is_finite_json_float(value))


def _is_scalar_of(kind: str, value: object) -> bool:
    """Whether `value` is a JSON scalar a node of type `kind` accepts (bool-strict)."""
    if kind == "string":
        return type(value) is str
    if kind == "boolean":
        return type(value) is bool
    if kind == "null":
        return value is None
    if kind == "number":
        return _is_json_number(value)
    return _is_json_number(value) and (type(value) is int or cast(float, value).is_integer())


def _same_scalar(left: object, right: object) -> bool:
    """JSON equality of scalars: `1 == 1.0`, but `True` equals only `True`, never `1`."""
    if type(left) is bool or type(right) is bool:
        return left is right
    if type(left) in (int, float) and type(right) in (int, float):
        return left == right
    return type(left) is type(right) and left == right


def _compact(value: object) -> str:
    return dumps(value, separators=(",", ":"), ensure_ascii=False)


# --- output canonicalizer -----------------------------------------------------------------------


def compile_json_schema(schema: Mapping[str, object]) -> Callable[[str, object], JsonValue]:
    """Check `schema` once and return `canonical(tool_name, value)` for a tool's output values.

    Raises `JsonSchemaError` now if `schema` is outside the subset. The schema is detached (a
    frozen copy), so later changes to `schema` do not affect the canonicalizer. `canonical`
    returns `value` as deep-frozen JSON (`tether.core.json.snapshot`), or raises
    `ToolOutputError(tool_name, violations)` with the violations of `validate(schema, value,
    "value")`, or `["value is not lossless JSON"]` if the value cannot be snapshotted.
    """
    check_supported(schema)
    frozen = cast(_Node, snapshot(schema))  # a supported schema is lossless JSON

    def canonical(tool_name: str, value: object) -> JsonValue:
        violations: Sequence[str] = validate(frozen, value, "value")
        if violations:
            raise ToolOutputError(tool_name, violations)
        try:
            return snapshot(value)
        except NotLosslessJson:
            raise ToolOutputError(tool_name, ["value is not lossless JSON"]) from None

    return canonical
