"""The Tavily search provider (`web-search-tavily`, provider id `tavily`).

Owns: the Tavily request — `POST <base_url>/search`, `authorization: Bearer <key>`, JSON `{query,
search_depth, include_answer, max_results?}` — and the mapping of its payload: `answer` becomes
the result's `content` (the tool shows it above the sources), each of `results[]` a `WebSource`
(`title`, `content` as the snippet, `published_date` as `published_at`). Never truncated. The key
is `api_key` or `$TAVILY_API_KEY`; without one the provider is unavailable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, ClassVar, Final, Literal

from ...kernel import Context
from ...kernel.config_models import ConfigValue
from .search_http import HttpSearchProvider, api_key, clean_text

if TYPE_CHECKING:
    import httpx2  # imported where used: it costs ~100 ms at startup
    from pydantic import Field, SecretStr  # resolved by tether.kernel.config_models

    from .vocabulary import WebSearchRequest, WebSearchResult

__all__ = ["TavilyConfig", "TavilySearchProvider", "apply", "inject", "name"]

name: Final = "web-search-tavily"
inject: Final = ("web",)


class TavilyConfig(ConfigValue):
    """`api_key` defaults to `$TAVILY_API_KEY`; `base_url` is configurable (tests, proxies)."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models

    api_key: SecretStr | None = None
    base_url: str = "https://api.tavily.com"
    search_depth: Literal["basic", "advanced"] = "basic"
    include_answer: bool = True
    max_results: Annotated[int, Field(strict=True, gt=0)] | None = None


class TavilySearchProvider(HttpSearchProvider):
    label = "Tavily"
    key_env = "TAVILY_API_KEY"

    def __init__(self, config: TavilyConfig | None = None) -> None:
        self.config = cfg = config if config is not None else TavilyConfig()
        super().__init__("tavily", api_key(cfg.api_key, self.key_env), cfg.base_url)

    def build(self, request: WebSearchRequest) -> httpx2.Request:
        body: dict[str, object] = {
            "query": request.query,
            "search_depth": self.config.search_depth,
            "include_answer": self.config.include_answer,
        }
        count = request.max_results or self.config.max_results
        if count is not None:
            body["max_results"] = count
        return self.client.build_request(
            "POST",
            self.endpoint("/search"),
            json=body,
            headers={"authorization": f"Bearer {self.key}", "accept": "application/json"},
        )

    def parse(self, payload: object) -> WebSearchResult:
        from . import tavily_response  # at the first response, not at boot
        from .vocabulary import WebSearchResult, WebSource

        parsed = tavily_response.validate(payload)
        sources = tuple(
            WebSource(
                url=result.url,
                title=clean_text(result.title),
                snippet=clean_text(result.content),
                published_at=clean_text(result.published_date),
            )
            for result in parsed.results
        )
        return WebSearchResult(sources=sources, content=clean_text(parsed.answer))


def apply(ctx: Context, config: TavilyConfig) -> None:
    """Register the `tavily` search provider; its connection pool closes with the plugin."""
    provider = TavilySearchProvider(config)
    ctx.effect(provider.aclose)
    ctx.web.register_search_provider(provider)


Config: Final = TavilyConfig
