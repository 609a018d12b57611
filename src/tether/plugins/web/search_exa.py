"""The Exa search provider (`web-search-exa`, provider id `exa`), spec §2.4.

Owns: the Exa request — `POST <base_url>/search`, `authorization: Bearer <key>`, JSON `{query,
type, contents: {highlights: {highlightsPerUrl}}, numResults?}` with `numResults =
request.max_results or config.num_results` (omitted when neither is set) — and the mapping of its
results to `WebSource`s: the title when non-blank, the first non-blank highlight as the snippet
(a result without one is dropped), `publishedDate` as `published_at`; no answer; never truncated.
The key is `api_key` or `$EXA_API_KEY`; without one the provider is unavailable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, ClassVar, Final, Literal

from ...kernel import Context
from ...kernel.config_models import ConfigValue
from .search_http import HttpSearchProvider, api_key, clean_text

if TYPE_CHECKING:
    import httpx2  # imported where used: it costs ~100 ms at startup
    from pydantic import Field, SecretStr  # resolved by tether.kernel.config_models

    from .vocabulary import WebSearchRequest, WebSearchResult, WebSource

__all__ = ["ExaConfig", "ExaSearchProvider", "apply", "inject", "name"]

name: Final = "web-search-exa"
inject: Final = ("web",)


class ExaConfig(ConfigValue):
    """`api_key` defaults to `$EXA_API_KEY`; `base_url` is configurable (tests, proxies)."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models

    api_key: SecretStr | None = None
    base_url: str = "https://api.exa.ai"
    search_type: Literal["auto", "keyword", "neural"] = "auto"
    num_results: Annotated[int, Field(strict=True, gt=0)] | None = None
    highlights_per_result: Annotated[int, Field(strict=True, gt=0)] = 1


class ExaSearchProvider(HttpSearchProvider):
    label = "Exa"
    key_env = "EXA_API_KEY"

    def __init__(self, config: ExaConfig | None = None) -> None:
        self.config = cfg = config if config is not None else ExaConfig()
        super().__init__("exa", api_key(cfg.api_key, self.key_env), cfg.base_url)

    def build(self, request: WebSearchRequest) -> httpx2.Request:
        body: dict[str, object] = {
            "query": request.query,
            "type": self.config.search_type,
            "contents": {"highlights": {"highlightsPerUrl": self.config.highlights_per_result}},
        }
        count = request.max_results or self.config.num_results
        if count is not None:
            body["numResults"] = count
        return self.client.build_request(
            "POST",
            self.endpoint("/search"),
            json=body,
            headers={"authorization": f"Bearer {self.key}", "accept": "application/json"},
        )

    def parse(self, payload: object) -> WebSearchResult:
        from . import exa_response  # at the first response, not at boot
        from .vocabulary import WebSearchResult, WebSource

        sources: list[WebSource] = []
        for result in exa_response.validate(payload).results:
            snippet = next(
                (text for text in map(clean_text, result.highlights or ()) if text), None
            )
            if snippet is None:
                continue
            sources.append(
                WebSource(
                    url=result.url,
                    title=clean_text(result.title),
                    snippet=snippet,
                    published_at=clean_text(result.publishedDate),
                )
            )
        return WebSearchResult(sources=tuple(sources))


def apply(ctx: Context, config: ExaConfig) -> None:
    """Register the `exa` search provider; its connection pool closes with the plugin."""
    provider = ExaSearchProvider(config)
    ctx.effect(provider.aclose)
    ctx.web.register_search_provider(provider)


Config: Final = ExaConfig
