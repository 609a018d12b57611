"""The built-in tools' model-facing parameter schemas, precomputed (issue 36).

A boot defines every built-in tool, and `model_facing_schema` would import pydantic, build each
argument model's validator and walk it into JSON Schema before the first model request; the
request needs only the schema. `builtin_schemas.json` (beside this module) holds those schemas as
pydantic generated them, keyed by the built-in tools' `ModelRef.key`s (`module:Name`, or
`module:factory(2000)` for a model made per configuration); `python -m tether.agent.tool_schemas`
rewrites it, and a test checks that the file equals what pydantic generates now for every key.
A built-in tool names its model with a `ModelRef`, so neither the model nor pydantic is imported
until the tool's first call validates.

Owns: reading the file (once, on the first lookup) and answering a lookup: `recorded_schema`
for a reference's key (what the table says: the test keeps it current), `factory_recorded` (is
a factory in the table at all), and `precomputed_schema` for a model class, None when the model
is not there or its `fingerprint` (field names and descriptions, docstring: what is read without
building the model) is not the recorded one — an edited model falls back to pydantic rather than
to a stale schema. Does not own generating the file (tether.agent.tool_schemas) or which models
are in it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final, cast

__all__ = [
    "TABLE_PATH",
    "factory_recorded",
    "fingerprint",
    "precomputed_schema",
    "recorded_schema",
    "schema_key",
]

TABLE_PATH: Final = Path(__file__).with_name("builtin_schemas.json")
"""`{key: {"fingerprint": fingerprint(model), "schema": model-facing schema}}`."""

_table: dict[str, dict[str, object]] | None = None


def schema_key(model: type) -> str:
    """`module:qualname` of an argument model: the key of a `ModelRef` naming the class where
    it is defined."""
    return f"{model.__module__}:{model.__qualname__}"


def fingerprint(model: type) -> list[object]:
    """What a pydantic model shows of its schema without being built, as JSON: its docstring,
    then `[name, description]` per field, in order."""
    fields = cast(dict[str, object], getattr(model, "model_fields", {}))
    return [
        model.__doc__,
        *([name, getattr(info, "description", None)] for name, info in fields.items()),
    ]


def _entries() -> dict[str, dict[str, object]]:
    global _table
    if _table is None:
        try:
            _table = cast(dict[str, dict[str, object]], json.loads(TABLE_PATH.read_text("utf-8")))
        except (OSError, ValueError):
            _table = {}
    return _table


def _copy(entry: dict[str, object]) -> dict[str, object]:
    # a copy of its own for each definition (a JSON round trip: ~20 µs a schema)
    return cast(dict[str, object], json.loads(json.dumps(entry["schema"])))


def recorded_schema(key: str) -> dict[str, object] | None:
    """A fresh copy of the schema recorded under `key` (a `ModelRef.key`), or None."""
    entry = _entries().get(key)
    return None if entry is None else _copy(entry)


def factory_recorded(target: str) -> bool:
    """Whether the table records `target` (a factory's `module:name`) for any arguments."""
    prefix = f"{target}("
    return any(key.startswith(prefix) for key in _entries())


def precomputed_schema(model: type) -> dict[str, object] | None:
    """A fresh copy of `model`'s recorded schema, or None when the table has none for it or
    recorded another `fingerprint`."""
    entry = _entries().get(schema_key(model))
    if entry is None or entry.get("fingerprint") != fingerprint(model):
        return None
    return _copy(entry)
