"""The body Exa's `/search` answers with, as pydantic models (`search_exa.py` maps it).

Owns only its shape. `search_exa` imports this module at its first response, so a boot, which
registers the provider but searches with none, defines none of these models. The class names are
the ones a wrong body's message names (`... instance of _Response`).
"""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["validate"]


class _Result(BaseModel):
    url: str
    title: str | None = None
    highlights: list[str | None] | None = None
    publishedDate: str | None = None  # the API's spelling


class _Response(BaseModel):
    results: list[_Result] = []


def validate(payload: object) -> _Response:
    """The body as models. Raises `pydantic.ValidationError` for a wrong shape."""
    return _Response.model_validate(payload)
