"""The body Tavily's `/search` answers with, as pydantic models (`search_tavily.py` maps it).

Owns only its shape. `search_tavily` imports this module at its first response, so a boot, which
registers the provider but searches with none, defines none of these models. The class names are
the ones a wrong body's message names (`... instance of _Response`).
"""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["validate"]


class _Result(BaseModel):
    url: str
    title: str | None = None
    content: str | None = None
    published_date: str | None = None


class _Response(BaseModel):
    answer: str | None = None
    results: list[_Result] = []


def validate(payload: object) -> _Response:
    """The body as models. Raises `pydantic.ValidationError` for a wrong shape."""
    return _Response.model_validate(payload)
