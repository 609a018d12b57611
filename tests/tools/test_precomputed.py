"""Looking up a precomputed parameter schema (`tether.tools.precomputed`): a hit is the recorded
schema, a copy each time; a model not in the table, or whose fields or descriptions changed,
gets none (its definition falls back to pydantic)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from tether.tools.precomputed import TABLE_PATH, precomputed_schema

BASH_KEY = "tether.plugins.shell.bash_args:BashBackgroundParameters"


def _recorded(key: str) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads(TABLE_PATH.read_text("utf-8"))[key]
    return entry


def _posing_as(key: str, fields: list[list[str | None]], doc: str | None = None) -> type:
    """A class with `key`'s module and qualname, and `fields` ([name, description] pairs)."""
    module, qualname = key.split(":")
    model_fields = {name: SimpleNamespace(description=text) for name, text in fields}
    namespace = {"__module__": module, "__qualname__": qualname, "__doc__": doc}
    return type("Posing", (), {**namespace, "model_fields": model_fields})


def _as_recorded(key: str) -> type:
    doc, *fields = _recorded(key)["fingerprint"]
    return _posing_as(key, fields, doc)


def test_a_recorded_model_gets_its_recorded_schema() -> None:
    assert precomputed_schema(_as_recorded(BASH_KEY)) == _recorded(BASH_KEY)["schema"]


def test_each_lookup_is_a_fresh_copy() -> None:
    first = precomputed_schema(_as_recorded(BASH_KEY))
    assert first is not None
    first["properties"] = {}

    assert precomputed_schema(_as_recorded(BASH_KEY)) == _recorded(BASH_KEY)["schema"]


def test_a_model_with_another_field_gets_none() -> None:
    doc, *fields = _recorded(BASH_KEY)["fingerprint"]

    assert precomputed_schema(_posing_as(BASH_KEY, [*fields, ["added", None]], doc)) is None


def test_a_model_whose_description_changed_gets_none() -> None:
    doc, *fields = _recorded(BASH_KEY)["fingerprint"]
    edited = [[fields[0][0], "Another description."], *fields[1:]]

    assert precomputed_schema(_posing_as(BASH_KEY, edited, doc)) is None


def test_a_model_not_in_the_table_gets_none() -> None:
    assert precomputed_schema(_posing_as("my.tools:Args", [["path", None]])) is None
