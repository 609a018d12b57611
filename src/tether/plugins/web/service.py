"""The `ctx.web` seam (spec §2.2): provider registries, per-call provider selection, result caps.

Owns: the search and fetch provider tables (independent id namespaces), choosing a provider at
each call — never by registration order — and enforcing `max_results` on search results. Does not
own any network I/O, URL policy or timeouts: providers do, and they receive the caller's signal
object unchanged. A non-2xx HTTP response is a fetch *result*, not an error.

Mount: `await ctx.plugin(WebService, {"search_provider": "exa"})` (entry point `web`). Both ids
default to `$TETHER_WEB_SEARCH_PROVIDER` / `$TETHER_WEB_FETCH_PROVIDER`, read at construction;
config wins. Providers registered through a plugin's context (`ctx.web.register_*`) belong to
that plugin and are removed when it is disposed.

Selection, per call:

    configured id, registered and available   that provider
    configured id, not registered             WEB_PROVIDER_CONFIGURED_MISSING
    configured id, registered, unavailable    WEB_PROVIDER_CONFIGURED_UNAVAILABLE
    no id, exactly one available              that one (unavailable ones are ignored)
    no id, none available                     WEB_PROVIDER_UNAVAILABLE
    no id, several available                  WEB_PROVIDER_AMBIGUOUS
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar, Protocol, TypeVar

from ...core.signals import AbortSignal
from ...kernel import Service
from ...kernel.config_models import ConfigValue
from .errors import (
    WEB_DUPLICATE_PROVIDER,
    WEB_PROVIDER_AMBIGUOUS,
    WEB_PROVIDER_CONFIGURED_MISSING,
    WEB_PROVIDER_CONFIGURED_UNAVAILABLE,
    WEB_PROVIDER_UNAVAILABLE,
    WebError,
)

if TYPE_CHECKING:
    from ...kernel import Context
    from .vocabulary import (
        FetchProvider,
        SearchProvider,
        WebFetchRequest,
        WebFetchResult,
        WebSearchRequest,
        WebSearchResult,
    )

__all__ = ["FETCH_PROVIDER_ENV", "SEARCH_PROVIDER_ENV", "WebConfig", "WebService", "WebView"]

SEARCH_PROVIDER_ENV = "TETHER_WEB_SEARCH_PROVIDER"
FETCH_PROVIDER_ENV = "TETHER_WEB_FETCH_PROVIDER"


class _Provider(Protocol):
    @property
    def id(self) -> str: ...

    def available(self) -> bool: ...


P = TypeVar("P", bound=_Provider)


class WebConfig(ConfigValue):
    """`search_provider` / `fetch_provider`: the provider id to use (None: the only usable one)."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models

    search_provider: str | None = None
    fetch_provider: str | None = None


def _register(table: dict[str, P], provider: P) -> Callable[[], None]:
    provider_id = provider.id
    if provider_id in table:
        raise WebError(
            f'a web provider with id "{provider_id}" is already registered', WEB_DUPLICATE_PROVIDER
        )
    table[provider_id] = provider

    def unregister() -> None:
        if table.get(provider_id) is provider:
            del table[provider_id]

    return unregister


def _hint(provider: object) -> str | None:
    explain = getattr(provider, "unavailable_reason", None)
    if not callable(explain):
        return None
    try:
        reason = explain()
    except Exception:
        return None
    return reason if isinstance(reason, str) and reason else None


def _select(table: Mapping[str, P], configured: str | None) -> P:
    if configured is not None:
        provider = table.get(configured)
        if provider is None:
            raise WebError(
                f'configured web provider "{configured}" is not registered',
                WEB_PROVIDER_CONFIGURED_MISSING,
            )
        if not provider.available():
            message = f'configured web provider "{configured}" is registered but unavailable'
            hint = _hint(provider)
            raise WebError(
                message if hint is None else f"{message} ({hint})",
                WEB_PROVIDER_CONFIGURED_UNAVAILABLE,
            )
        return provider
    usable = [provider for provider in table.values() if provider.available()]
    if len(usable) == 1:
        return usable[0]
    if not usable:
        hints = [f"{pid}: {hint}" for pid, p in table.items() if (hint := _hint(p)) is not None]
        message = "no usable web provider is registered"
        raise WebError(
            message if not hints else f"{message} ({'; '.join(hints)})", WEB_PROVIDER_UNAVAILABLE
        )
    ids = ", ".join(sorted(provider.id for provider in usable))
    raise WebError(
        f"multiple usable web providers are registered ({ids}); configure one explicitly",
        WEB_PROVIDER_AMBIGUOUS,
    )


class WebService(Service):
    """`ctx.web`: search and fetch through whichever registered provider is selected."""

    name: ClassVar[str] = "web"
    Config: ClassVar[type[WebConfig]] = WebConfig

    def __init__(self, ctx: Context, config: object = None) -> None:
        super().__init__(ctx, config)
        settings = config if isinstance(config, WebConfig) else WebConfig()
        self._search_id = settings.search_provider or os.environ.get(SEARCH_PROVIDER_ENV) or None
        self._fetch_id = settings.fetch_provider or os.environ.get(FETCH_PROVIDER_ENV) or None
        self._search: dict[str, SearchProvider] = {}
        self._fetch: dict[str, FetchProvider] = {}

    def __tether_bind__(self, ctx: Context) -> WebView:
        return WebView(self, ctx)

    # -- registries ----------------------------------------------------------------------------

    def register_search_provider(
        self, provider: SearchProvider, *, owner: Context | None = None
    ) -> Callable[[], None]:
        """Add a search provider; returns its idempotent remover (run with `owner`'s dispose).

        Raises `WebError(WEB_DUPLICATE_PROVIDER)` when a search provider has that id already.
        """
        remove = _register(self._search, provider)
        return owner.effect(remove) if owner is not None else remove

    def register_fetch_provider(
        self, provider: FetchProvider, *, owner: Context | None = None
    ) -> Callable[[], None]:
        """Add a fetch provider; returns its idempotent remover (run with `owner`'s dispose).

        Raises `WebError(WEB_DUPLICATE_PROVIDER)` when a fetch provider has that id already.
        """
        remove = _register(self._fetch, provider)
        return owner.effect(remove) if owner is not None else remove

    def search_provider_ids(self) -> list[str]:
        """Registered search provider ids, available or not."""
        return list(self._search)

    def fetch_provider_ids(self) -> list[str]:
        """Registered fetch provider ids, available or not."""
        return list(self._fetch)

    # -- operations ----------------------------------------------------------------------------

    async def search(self, request: WebSearchRequest, *, signal: AbortSignal) -> WebSearchResult:
        """Search with the selected provider, then cap the sources at `request.max_results`
        (setting `truncated`). Raises `WebError`: a selection code, or the provider's own."""
        provider = _select(self._search, self._search_id)
        result = await provider.search(request, signal=signal)
        cap = request.max_results
        if cap is not None and len(result.sources) > cap:
            return replace(result, sources=result.sources[:cap], truncated=True)
        return result

    async def fetch(self, request: WebFetchRequest, *, signal: AbortSignal) -> WebFetchResult:
        """Fetch with the selected provider. Raises `WebError`: a selection code, or the
        provider's own (`WEB_ABORTED`, `WEB_FETCH_TIMEOUT`, `WEB_BLOCKED_URL`, ...)."""
        provider = _select(self._fetch, self._fetch_id)
        return await provider.fetch(request, signal=signal)


class WebView:
    """`ctx.web` as seen from one plugin's context: registrations belong to that plugin."""

    __slots__ = ("_ctx", "_service", "fetch", "search")

    def __init__(self, service: WebService, ctx: Context) -> None:
        self._service = service
        self._ctx = ctx
        self.search = service.search
        self.fetch = service.fetch

    @property
    def service(self) -> WebService:
        """The shared service."""
        return self._service

    def register_search_provider(self, provider: SearchProvider) -> Callable[[], None]:
        """See `WebService.register_search_provider`; owned by this view's plugin."""
        return self._service.register_search_provider(provider, owner=self._ctx)

    def register_fetch_provider(self, provider: FetchProvider) -> Callable[[], None]:
        """See `WebService.register_fetch_provider`; owned by this view's plugin."""
        return self._service.register_fetch_provider(provider, owner=self._ctx)

    def search_provider_ids(self) -> list[str]:
        return self._service.search_provider_ids()

    def fetch_provider_ids(self) -> list[str]:
        return self._service.fetch_provider_ids()
