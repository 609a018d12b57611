"""The JSON bodies the search APIs answer with (Exa, Brave, Tavily), as pydantic models.

Owns only their shapes: what a provider's `parse` validates a response against. A provider
imports this module at its first response, so a boot, which registers every provider but
searches with none, defines none of these models. Does not own the mapping to `WebSource`s
(each provider's module) or the error texts (`search_http.py`).
"""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["BraveResponse", "ExaResponse", "TavilyResponse"]


class ExaResult(BaseModel):
    url: str
    title: str | None = None
    highlights: list[str | None] | None = None
    publishedDate: str | None = None  # the API's spelling


class ExaResponse(BaseModel):
    results: list[ExaResult] = []


class BraveResult(BaseModel):
    url: str
    title: str | None = None
    description: str | None = None
    page_age: str | None = None
    age: str | None = None


class BraveWeb(BaseModel):
    results: list[BraveResult] = []


class BraveResponse(BaseModel):
    web: BraveWeb | None = None


class TavilyResult(BaseModel):
    url: str
    title: str | None = None
    content: str | None = None
    published_date: str | None = None


class TavilyResponse(BaseModel):
    answer: str | None = None
    results: list[TavilyResult] = []
