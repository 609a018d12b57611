"""Looking up a precomputed parameter schema (`tether.tools.precomputed`): a hit is the recorded
schema, a copy each time; a model not in the table, or with other fields, gets none (its
definition falls back to pydantic)."""

from __future__ import annotations

import json

from tether.tools.precomputed import TABLE_PATH, precomputed_schema

BASH_KEY = "tether.plugins.shell.bash:BashBackgroundParameters"


def _recorded(key: str) -> dict[str, object]:
    entry: dict[str, object] = json.loads(TABLE_PATH.read_text("utf-8"))[key]
    return entry


def _posing_as(key: str) -> type:
    module, qualname = key.split(":")
    return type("Posing", (), {"__module__": module, "__qualname__": qualname})


def test_a_recorded_model_gets_its_recorded_schema() -> None:
    entry = _recorded(BASH_KEY)
    fields = tuple(entry["fields"])  # type: ignore[arg-type]

    assert precomputed_schema(_posing_as(BASH_KEY), fields) == entry["schema"]


def test_each_lookup_is_a_fresh_copy() -> None:
    fields = tuple(_recorded(BASH_KEY)["fields"])  # type: ignore[arg-type]
    first = precomputed_schema(_posing_as(BASH_KEY), fields)
    assert first is not None
    first["properties"] = {}

    assert precomputed_schema(_posing_as(BASH_KEY), fields) == _recorded(BASH_KEY)["schema"]


def test_a_model_whose_fields_changed_gets_none() -> None:
    fields = (*tuple(_recorded(BASH_KEY)["fields"]), "added")  # type: ignore[arg-type]

    assert precomputed_schema(_posing_as(BASH_KEY), fields) is None


def test_a_model_not_in_the_table_gets_none() -> None:
    assert precomputed_schema(_posing_as("my.tools:Args"), ("path",)) is None
