"""The model-facing parameters of `web_fetch` and `web_search` (pydantic models: their
descriptions are the schema).

Owns: `FetchArguments`, `SearchArguments` and `search_arguments_model` (the configured maximum
in the description). Imported by a tool's first call (`tether.plugins.web.tools` names them with
a `ModelRef`), not at boot. Does not own the value checks with their texts
(`tether.plugins.web.tools`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, create_model

__all__ = ["FetchArguments", "SearchArguments", "search_arguments_model"]


class FetchArguments(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # built by the first call

    url: str = Field(description="The HTTP(S) URL to fetch.")


class SearchArguments(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # built by the first call

    queries: list[str]


def search_arguments_model(max_queries: int) -> type[SearchArguments]:
    """`SearchArguments` whose `queries` description names the configured maximum."""
    described = Field(
        description=(
            f"Required search queries; accepts 1–{max_queries} items and merges their results."
        )
    )
    model: type[SearchArguments] = create_model(
        "SearchArguments", __base__=SearchArguments, queries=(list[str], described)
    )
    model.__qualname__ = f"SearchArguments[{max_queries}]"  # the configured variant, in reprs
    return model
