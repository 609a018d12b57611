"""Schemas at the model boundary: pydantic models to model-facing JSON Schema, and pydantic
validation errors to the registry's violation texts.

Owns: `model_facing_schema` (titles dropped, `$defs` inlined so every model can read it),
`violations` (`<path>: <msg>`, list indices as `[i]`, the root written as `arguments`/`value`),
and `ValueCanonicalizer` (an output schema compiled once per definition). Does not own when
validation runs (the body wrapper for arguments, canonical success construction for values).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from ..core.json import JsonValue, snapshot
from .errors import ToolOutputError

if TYPE_CHECKING:  # pydantic is imported where a value is first validated, not at boot
    from pydantic import BaseModel, TypeAdapter, ValidationError
    from pydantic_core import ErrorDetails

__all__ = ["ValueCanonicalizer", "compile_output_schema", "model_facing_schema", "violations"]


def _path(loc: tuple[int | str, ...], root: str) -> str:
    out = root if loc and isinstance(loc[0], int) else ""  # `value[1]`, not a bare `[1]`
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out or root


_NOT_AN_OBJECT = frozenset({"model_type", "model_attributes_type", "dataclass_type", "dict_type"})


def violations(error: ValidationError, root: str) -> list[str]:
    """Each pydantic error as `<path>: <msg>`, in pydantic's order. A value that should be an
    object and is not says so without naming the model class (`Input should be a valid
    dictionary or instance of BashParameters` is pydantic's text): at the root, in CONTRACT
    §4.3's form with the root named, `arguments: must be a JSON object` (`value: ...` for an
    output); elsewhere `<path>: Input should be an object`."""
    return [_violation(e, root) for e in error.errors(include_url=False)]


def _violation(error: ErrorDetails, root: str) -> str:
    if error["type"] not in _NOT_AN_OBJECT:
        return f"{_path(error['loc'], root)}: {error['msg']}"
    if not error["loc"]:
        return f"{root}: must be a JSON object"
    return f"{_path(error['loc'], root)}: Input should be an object"


_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def _inline(node: object, defs: Mapping[str, object], depth: int = 0) -> object:
    if not isinstance(node, dict):
        return node
    if depth > 64:
        raise ValueError("parameter schema nests deeper than 64 levels (recursive model?)")
    node = cast(dict[str, object], node)
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = defs.get(ref.removeprefix("#/$defs/"))
        merged = {
            **cast(dict[str, object], target),
            **{k: v for k, v in node.items() if k != "$ref"},
        }
        return _inline(merged, defs, depth + 1)
    out: dict[str, object] = {}
    for key, value in node.items():
        if key in ("title", "$defs"):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {k: _inline(v, defs, depth + 1) for k, v in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_inline(v, defs, depth + 1) for v in value]
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            out[key] = _inline(value, defs, depth + 1)
        else:
            out[key] = value
    return out


def model_facing_schema(model: type[BaseModel]) -> dict[str, object]:
    """`model.model_json_schema()` (validation mode) without titles and with `$defs` inlined."""
    raw = model.model_json_schema(mode="validation")
    defs = cast(Mapping[str, object], raw.get("$defs", {}))
    schema = cast(dict[str, object], _inline(raw, defs))
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


ValueCanonicalizer = Callable[[str, object], JsonValue]
"""`(tool_name, value) -> frozen canonical JSON`; raises `ToolOutputError`."""


def _any_json(tool_name: str, value: object) -> JsonValue:
    try:
        return snapshot(value)
    except TypeError:
        raise ToolOutputError(tool_name, ["value is not lossless JSON"]) from None


_EXACT_SCALARS: dict[type, type] = {str: str, int: int, bool: bool}


def compile_output_schema(schema: object) -> ValueCanonicalizer:
    """Build the canonicalizer for an output schema once: `None` is any JSON value; a type is
    validated with a pydantic `TypeAdapter` (built on the first value that is not already its
    own canonical form) and dumped in JSON mode; a mapping is a JSON Schema (the subset the
    registry enforces, checked now)."""
    if schema is None:
        return _any_json
    if isinstance(schema, Mapping):
        from .json_schema import compile_json_schema

        return compile_json_schema(cast(Mapping[str, object], schema))
    exact = _EXACT_SCALARS.get(schema) if isinstance(schema, type) else None
    adapter: TypeAdapter[Any] | None = None  # built for the first value that needs it
    invalid: type[Exception] = Exception  # pydantic's ValidationError, imported with the adapter

    def canonical(tool_name: str, value: object) -> JsonValue:
        nonlocal adapter, invalid
        if exact is not None and type(value) is exact:
            return value  # type: ignore[return-value]  # already its own canonical JSON form
        if adapter is None:  # not at definition: a boot defines every tool, most never run
            from pydantic import TypeAdapter, ValidationError

            invalid = ValidationError
            try:
                adapter = TypeAdapter(cast(Any, schema))
            except Exception as exc:
                raise TypeError(
                    f'tool "{tool_name}": its output schema {schema!r} cannot validate values'
                    f" ({exc}); declare a type pydantic supports, or a JSON Schema mapping"
                ) from None
        try:
            dumped = adapter.dump_python(adapter.validate_python(value), mode="json")
        except invalid as exc:
            raise ToolOutputError(
                tool_name, violations(cast("ValidationError", exc), "value")
            ) from None
        return _any_json(tool_name, dumped)

    return canonical
