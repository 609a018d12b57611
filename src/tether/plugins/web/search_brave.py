"""The Brave Search provider (`web-search-brave`, provider id `brave`).

Owns: the Brave Web Search request — `GET <base_url>/res/v1/web/search?q=<query>&count=<n>`
(`n` = `request.max_results` or `config.count`, at most 20, the API's limit), header
`x-subscription-token: <key>` — and the mapping of `web.results[]` to `WebSource`s: `title`,
`description` as the snippet (Brave marks matches with `<strong>`; tags are removed and entities
decoded), `page_age` (else `age`) as `published_at`. No answer; never truncated. The key is
`api_key` or `$BRAVE_API_KEY`; without one the provider is unavailable.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Annotated, ClassVar, Final, Literal

from ...kernel import Context
from ...kernel.config_models import ConfigValue
from .search_http import HttpSearchProvider, api_key, clean_text

if TYPE_CHECKING:
    import httpx2  # imported where used: it costs ~100 ms at startup
    from pydantic import Field, SecretStr  # resolved by tether.kernel.config_models

    from .vocabulary import WebSearchRequest, WebSearchResult

__all__ = ["BraveConfig", "BraveSearchProvider", "apply", "inject", "name"]

name: Final = "web-search-brave"
inject: Final = ("web",)

MAX_COUNT: Final = 20
_TAG: Final = r"<[^>]*>"  # compiled by `re` at the first snippet, not at boot


class BraveConfig(ConfigValue):
    """`api_key` defaults to `$BRAVE_API_KEY`; `base_url` is configurable (tests, proxies)."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models

    api_key: SecretStr | None = None
    base_url: str = "https://api.search.brave.com"
    count: Annotated[int, Field(strict=True, gt=0, le=MAX_COUNT)] | None = None
    safesearch: Literal["off", "moderate", "strict"] = "moderate"
    country: str | None = None


def _plain(text: str | None) -> str | None:
    return None if text is None else clean_text(html.unescape(re.sub(_TAG, "", text)))


class BraveSearchProvider(HttpSearchProvider):
    label = "Brave"
    key_env = "BRAVE_API_KEY"

    def __init__(self, config: BraveConfig | None = None) -> None:
        self.config = cfg = config if config is not None else BraveConfig()
        super().__init__("brave", api_key(cfg.api_key, self.key_env), cfg.base_url)

    def build(self, request: WebSearchRequest) -> httpx2.Request:
        params: dict[str, str | int] = {"q": request.query, "safesearch": self.config.safesearch}
        count = request.max_results or self.config.count
        if count is not None:
            params["count"] = min(count, MAX_COUNT)
        if self.config.country:
            params["country"] = self.config.country
        return self.client.build_request(
            "GET",
            self.endpoint("/res/v1/web/search"),
            params=params,
            headers={"x-subscription-token": self.key, "accept": "application/json"},
        )

    def parse(self, payload: object) -> WebSearchResult:
        from . import brave_response  # at the first response, not at boot
        from .vocabulary import WebSearchResult, WebSource

        web = brave_response.validate(payload).web
        sources = tuple(
            WebSource(
                url=result.url,
                title=_plain(result.title),
                snippet=_plain(result.description),
                published_at=clean_text(result.page_age) or clean_text(result.age),
            )
            for result in (web.results if web is not None else ())
        )
        return WebSearchResult(sources=sources)


def apply(ctx: Context, config: BraveConfig) -> None:
    """Register the `brave` search provider; its connection pool closes with the plugin."""
    provider = BraveSearchProvider(config)
    ctx.effect(provider.aclose)
    ctx.web.register_search_provider(provider)


Config: Final = BraveConfig
