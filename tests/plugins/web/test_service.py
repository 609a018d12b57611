"""The `ctx.web` seam (spec §2.2): provider registries, per-call selection, result caps.

Contract: the provider is chosen at each call — the configured id (config, else the
environment), or else the only available one — never by registration order, with the exact
`WEB_PROVIDER_*` errors otherwise; the caller's signal object reaches the provider unchanged;
`max_results` caps a search's sources and marks it truncated; registrations belong to the plugin
that made them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from tether.core.signals import AbortController, AbortSignal
from tether.kernel import Context
from tether.plugins.web.errors import WebError
from tether.plugins.web.service import WebService, WebView
from tether.plugins.web.vocabulary import (
    FetchBody,
    WebFetchRequest,
    WebFetchResult,
    WebSearchRequest,
    WebSearchResult,
    WebSource,
)


@dataclass
class FakeSearch:
    id: str
    usable: bool = True
    sources: tuple[WebSource, ...] = ()
    signals: list[AbortSignal] = field(default_factory=list)

    def available(self) -> bool:
        return self.usable

    async def search(self, request: WebSearchRequest, *, signal: AbortSignal) -> WebSearchResult:
        self.signals.append(signal)
        return WebSearchResult(sources=self.sources, content=self.id)


@dataclass
class FakeFetch:
    id: str
    usable: bool = True
    signals: list[AbortSignal] = field(default_factory=list)

    def available(self) -> bool:
        return self.usable

    async def fetch(self, request: WebFetchRequest, *, signal: AbortSignal) -> WebFetchResult:
        self.signals.append(signal)
        return WebFetchResult(request.url, 200, FetchBody("text", self.id))


def sources(n: int) -> tuple[WebSource, ...]:
    return tuple(WebSource(f"https://example.test/{i}") for i in range(n))


async def web(ctx: Context, **config: object) -> WebView:
    await ctx.plugin(WebService, config)
    view = ctx.web
    assert isinstance(view, WebView)
    return view


async def search_error(service: WebView) -> WebError:
    with pytest.raises(WebError) as caught:
        await service.search(WebSearchRequest("q"), signal=AbortController().signal)
    return caught.value


# -- selection ----------------------------------------------------------------------------------


async def test_the_only_available_provider_is_used_and_unavailable_ones_are_ignored(
    ctx: Context,
) -> None:
    service = await web(ctx)
    service.register_search_provider(FakeSearch("off", usable=False))
    service.register_search_provider(FakeSearch("on"))
    result = await service.search(WebSearchRequest("q"), signal=AbortController().signal)
    assert result.content == "on"


async def test_a_configured_provider_wins_over_other_available_ones(ctx: Context) -> None:
    service = await web(ctx, search_provider="b")
    service.register_search_provider(FakeSearch("a"))
    service.register_search_provider(FakeSearch("b"))
    result = await service.search(WebSearchRequest("q"), signal=AbortController().signal)
    assert result.content == "b"


async def test_the_environment_names_the_provider_when_config_does_not(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TETHER_WEB_FETCH_PROVIDER", "second")
    service = await web(ctx)
    service.register_fetch_provider(FakeFetch("first"))
    service.register_fetch_provider(FakeFetch("second"))
    result = await service.fetch(
        WebFetchRequest("https://x.test/"), signal=AbortController().signal
    )
    assert result.body.content == "second"


async def test_config_wins_over_the_environment(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TETHER_WEB_SEARCH_PROVIDER", "env")
    service = await web(ctx, search_provider="conf")
    service.register_search_provider(FakeSearch("env"))
    service.register_search_provider(FakeSearch("conf"))
    result = await service.search(WebSearchRequest("q"), signal=AbortController().signal)
    assert result.content == "conf"


async def test_a_configured_provider_that_is_not_registered_is_an_error(ctx: Context) -> None:
    service = await web(ctx, search_provider="exa")
    service.register_search_provider(FakeSearch("brave"))
    error = await search_error(service)
    assert (error.code, error.message) == (
        "WEB_PROVIDER_CONFIGURED_MISSING",
        'configured web provider "exa" is not registered',
    )


async def test_a_configured_provider_that_is_unavailable_is_an_error(ctx: Context) -> None:
    service = await web(ctx, search_provider="exa")
    service.register_search_provider(FakeSearch("exa", usable=False))
    error = await search_error(service)
    assert (error.code, error.message) == (
        "WEB_PROVIDER_CONFIGURED_UNAVAILABLE",
        'configured web provider "exa" is registered but unavailable',
    )


async def test_no_usable_provider_is_an_error(ctx: Context) -> None:
    service = await web(ctx)
    service.register_search_provider(FakeSearch("off", usable=False))
    error = await search_error(service)
    assert (error.code, error.message) == (
        "WEB_PROVIDER_UNAVAILABLE",
        "no usable web provider is registered",
    )


async def test_several_usable_providers_without_configuration_is_an_error(ctx: Context) -> None:
    service = await web(ctx)
    service.register_search_provider(FakeSearch("zeta"))
    service.register_search_provider(FakeSearch("alpha"))
    error = await search_error(service)
    assert (error.code, error.message) == (
        "WEB_PROVIDER_AMBIGUOUS",
        "multiple usable web providers are registered (alpha, zeta); configure one explicitly",
    )


async def test_a_duplicate_id_is_refused_within_a_kind_but_not_across_kinds(ctx: Context) -> None:
    service = await web(ctx)
    service.register_search_provider(FakeSearch("same"))
    service.register_fetch_provider(FakeFetch("same"))
    with pytest.raises(WebError) as caught:
        service.register_search_provider(FakeSearch("same"))
    assert (caught.value.code, caught.value.message) == (
        "WEB_DUPLICATE_PROVIDER",
        'a web provider with id "same" is already registered',
    )


# -- forwarding and caps ------------------------------------------------------------------------


async def test_the_callers_signal_object_reaches_the_provider_unchanged(ctx: Context) -> None:
    service = await web(ctx)
    search, fetch = FakeSearch("s"), FakeFetch("f")
    service.register_search_provider(search)
    service.register_fetch_provider(fetch)
    signal = AbortController().signal
    await service.search(WebSearchRequest("q"), signal=signal)
    await service.fetch(WebFetchRequest("https://x.test/"), signal=signal)
    assert search.signals[0] is signal
    assert fetch.signals[0] is signal


async def test_max_results_caps_the_sources_and_marks_the_result_truncated(ctx: Context) -> None:
    service = await web(ctx)
    service.register_search_provider(FakeSearch("s", sources=sources(5)))
    result = await service.search(WebSearchRequest("q", 3), signal=AbortController().signal)
    assert (result.sources, result.truncated) == (sources(3), True)


async def test_a_result_within_max_results_is_returned_unchanged(ctx: Context) -> None:
    service = await web(ctx)
    service.register_search_provider(FakeSearch("s", sources=sources(2)))
    result = await service.search(WebSearchRequest("q", 3), signal=AbortController().signal)
    assert result == WebSearchResult(sources=sources(2), content="s")


# -- ownership ----------------------------------------------------------------------------------


class ProviderPlugin:
    name = "fake-search-provider"
    inject = ("web",)

    @staticmethod
    def apply(ctx: Context) -> None:
        ctx.web.register_search_provider(FakeSearch("owned"))


async def test_providers_registered_by_a_plugin_are_removed_when_it_is_disposed(
    ctx: Context,
) -> None:
    service = await web(ctx)
    handle = await ctx.plugin(ProviderPlugin)
    assert service.search_provider_ids() == ["owned"]
    await handle.dispose()
    assert service.search_provider_ids() == []
