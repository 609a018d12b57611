"""The `ctx.web` vocabulary: requests, results and the two provider protocols (spec §2.2).

Owns: `WebSearchRequest`/`WebSearchResult`/`WebSource`, `WebFetchRequest`/`WebFetchResult`/
`FetchBody` (a closed union: only `html` and `text`), and `SearchProvider`/`FetchProvider` — what
a provider implements. Does not own provider selection or caps (service.py) nor any I/O.

Every provider method takes a required keyword-only `signal`: the seam forwards the caller's
signal object unchanged, and the provider stops its own network work when it aborts. A provider
may also implement `unavailable_reason() -> str | None` to say how to make itself available
(shown in the seam's "no usable provider" errors).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias, runtime_checkable

from ...core.signals import AbortSignal

__all__ = [
    "BodyKind",
    "FetchBody",
    "FetchProvider",
    "SearchProvider",
    "WebFetchRequest",
    "WebFetchResult",
    "WebSearchRequest",
    "WebSearchResult",
    "WebSource",
]

BodyKind: TypeAlias = Literal["html", "text"]


@dataclass(frozen=True, slots=True)
class WebSearchRequest:
    """One search. `max_results`, when set, caps the sources the seam returns."""

    query: str
    max_results: int | None = None


@dataclass(frozen=True, slots=True)
class WebSource:
    """One search hit. Optional fields are None when the provider had nothing (never empty)."""

    url: str
    title: str | None = None
    snippet: str | None = None
    published_at: str | None = None


@dataclass(frozen=True, slots=True)
class WebSearchResult:
    """What a search returns: an optional provider answer (`content`) and its sources."""

    sources: tuple[WebSource, ...] = ()
    truncated: bool = False
    content: str | None = None


@dataclass(frozen=True, slots=True)
class WebFetchRequest:
    """One retrieval of `url` (http or https)."""

    url: str


@dataclass(frozen=True, slots=True)
class FetchBody:
    """The decoded body: `html` (to be converted for display) or `text` (shown verbatim)."""

    kind: BodyKind
    content: str


@dataclass(frozen=True, slots=True)
class WebFetchResult:
    """A fetched page. `url` is the final URL after redirects; any HTTP status is a result
    (a 404 page is content, not an error); `truncated` says a byte or character cap cut it."""

    url: str
    status_code: int
    body: FetchBody
    truncated: bool = False


@runtime_checkable
class SearchProvider(Protocol):
    """A search backend registered with `ctx.web.register_search_provider`."""

    @property
    def id(self) -> str: ...

    def available(self) -> bool:
        """Cheap and local (no network): can this provider serve a search right now?"""
        ...

    async def search(self, request: WebSearchRequest, *, signal: AbortSignal) -> WebSearchResult:
        """Search; stop the HTTP request when `signal` aborts (raise `WEB_ABORTED`)."""
        ...


@runtime_checkable
class FetchProvider(Protocol):
    """A fetch backend registered with `ctx.web.register_fetch_provider`."""

    @property
    def id(self) -> str: ...

    def available(self) -> bool:
        """Cheap and local (no network): can this provider serve a fetch right now?"""
        ...

    async def fetch(self, request: WebFetchRequest, *, signal: AbortSignal) -> WebFetchResult:
        """Fetch; stop the HTTP stream when `signal` aborts (raise `WEB_ABORTED`)."""
        ...
