"""The HTTP search providers (Exa, Brave, Tavily) against local fakes of their APIs.

Contract: each sends its API's request (method, path, key header, query and result count),
normalizes the payload to `WebSearchResult`, and maps failures to `WebError`s with its label:
`<Label> search aborted` (`WEB_ABORTED`, the HTTP request closed), `<Label> search request failed:
<error>`, the API's own message or `<Label> API error (HTTP <status>)` (redirects included), and
`<Label> returned an unprocessable response body: <error>` (all `WEB_PROVIDER_ERROR`). Without a
key — from config or the environment — a provider is unavailable and says how to fix it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tether.core.signals import AbortController
from tether.kernel import Context
from tether.kernel.config_models import make_config
from tether.plugins import timeout_policy
from tether.plugins.web import search_brave, search_exa, search_tavily
from tether.plugins.web import tools as tool_web
from tether.plugins.web.errors import WebError
from tether.plugins.web.search_http import HttpSearchProvider
from tether.plugins.web.service import WebService
from tether.plugins.web.vocabulary import WebSearchRequest, WebSearchResult, WebSource
from tether.tools import ToolRuntime

from .conftest import SERVER_REACHED_MS, call, closed, code_of, respond_with, text_of
from .servers import Exchange, LocalServer, Request

JSON = {"content-type": "application/json"}


@dataclass(frozen=True)
class Api:
    """How one provider is mounted and what its API looks like."""

    plugin: Any
    label: str
    path: str
    key_env: str
    payload: object  # a realistic success body
    expected: WebSearchResult
    check_request: Callable[[Request], None]

    def provider(self, server: LocalServer, **config: object) -> HttpSearchProvider:
        settings = {"api_key": "k-123", "base_url": server.url(""), **config}
        return _build(self.plugin, settings)


def _build(plugin: Any, settings: dict[str, object]) -> HttpSearchProvider:
    classes = {
        search_exa: search_exa.ExaSearchProvider,
        search_brave: search_brave.BraveSearchProvider,
        search_tavily: search_tavily.TavilySearchProvider,
    }
    return classes[plugin](make_config(plugin.name, plugin.Config, settings))  # type: ignore[no-any-return]


def _exa_request(request: Request) -> None:
    assert (request.method, request.headers["authorization"]) == ("POST", "Bearer k-123")
    assert request.json() == {
        "query": "tether",
        "type": "auto",
        "contents": {"highlights": {"highlightsPerUrl": 1}},
        "numResults": 3,
    }


def _brave_request(request: Request) -> None:
    assert request.method == "GET"
    assert request.headers["x-subscription-token"] == "k-123"
    assert request.path == "/res/v1/web/search?q=tether&safesearch=moderate&count=3"


def _tavily_request(request: Request) -> None:
    assert (request.method, request.headers["authorization"]) == ("POST", "Bearer k-123")
    assert request.json() == {
        "query": "tether",
        "search_depth": "basic",
        "include_answer": True,
        "max_results": 3,
    }


EXA = Api(
    search_exa,
    "Exa",
    "/search",
    "EXA_API_KEY",
    {
        "results": [
            {"url": "https://a.test/", "title": "A", "highlights": ["  ", "the gist"],
             "publishedDate": "2024-05-01"},
            {"url": "https://b.test/", "title": " ", "highlights": ["b part"]},
            {"url": "https://c.test/", "title": "no highlight", "highlights": []},
        ]
    },
    WebSearchResult(
        sources=(
            WebSource("https://a.test/", "A", "the gist", "2024-05-01"),
            WebSource("https://b.test/", None, "b part"),
        )
    ),
    _exa_request,
)  # fmt: skip
BRAVE = Api(
    search_brave,
    "Brave",
    "/res/v1/web/search",
    "BRAVE_API_KEY",
    {
        "type": "search",
        "web": {
            "results": [
                {"url": "https://a.test/", "title": "A &amp; <strong>B</strong>",
                 "description": "about <strong>tether</strong>", "page_age": "2024-05-01T00:00:00"},
                {"url": "https://b.test/", "title": "B", "age": "2 days ago"},
            ]
        },
    },
    WebSearchResult(
        sources=(
            WebSource("https://a.test/", "A & B", "about tether", "2024-05-01T00:00:00"),
            WebSource("https://b.test/", "B", None, "2 days ago"),
        )
    ),
    _brave_request,
)  # fmt: skip
TAVILY = Api(
    search_tavily,
    "Tavily",
    "/search",
    "TAVILY_API_KEY",
    {
        "query": "tether",
        "answer": "Tether is a harness.",
        "results": [
            {"url": "https://a.test/", "title": "A", "content": "snippet a", "score": 0.9},
            {"url": "https://b.test/", "title": "B", "content": "", "published_date": "2024"},
        ],
    },
    WebSearchResult(
        sources=(
            WebSource("https://a.test/", "A", "snippet a"),
            WebSource("https://b.test/", "B", None, "2024"),
        ),
        content="Tether is a harness.",
    ),
    _tavily_request,
)  # fmt: skip
APIS = pytest.mark.parametrize("api", [EXA, BRAVE, TAVILY], ids=["exa", "brave", "tavily"])


@pytest.fixture
async def providers() -> Any:
    made: list[HttpSearchProvider] = []
    yield made
    for provider in made:
        await provider.aclose()


async def search(provider: HttpSearchProvider, signal: Any = None) -> WebSearchResult:
    return await provider.search(
        WebSearchRequest("tether", 3),
        signal=signal if signal is not None else AbortController().signal,
    )


async def search_error(provider: HttpSearchProvider) -> WebError:
    with pytest.raises(WebError) as caught:
        await search(provider)
    return caught.value


@APIS
async def test_a_search_sends_the_apis_request_and_normalizes_its_results(
    server: LocalServer, providers: list[HttpSearchProvider], api: Api
) -> None:
    respond_with(server, api.path, 200, JSON, json.dumps(api.payload).encode())
    provider = api.provider(server)
    providers.append(provider)
    assert await search(provider) == api.expected
    api.check_request(server.exchanges[-1].request)


@APIS
async def test_an_api_error_message_becomes_the_error(
    server: LocalServer, providers: list[HttpSearchProvider], api: Api
) -> None:
    body = {"error": "invalid api key"} if api is not BRAVE else {
        "type": "ErrorResponse", "error": {"detail": "invalid api key", "status": 401}
    }  # fmt: skip
    respond_with(server, api.path, 401, JSON, json.dumps(body).encode())
    providers.append(provider := api.provider(server))
    error = await search_error(provider)
    assert (error.code, error.message) == ("WEB_PROVIDER_ERROR", "invalid api key")


@APIS
@pytest.mark.parametrize(
    ("status", "headers"), [(503, {"content-type": "text/html"}), (302, {"location": "/elsewhere"})]
)
async def test_a_non_2xx_without_a_message_names_the_status_and_redirects_are_not_followed(
    server: LocalServer,
    providers: list[HttpSearchProvider],
    api: Api,
    status: int,
    headers: dict[str, str],
) -> None:
    respond_with(server, api.path, status, headers, b"<h1>down</h1>")
    providers.append(provider := api.provider(server))
    error = await search_error(provider)
    assert (error.code, error.message) == (
        "WEB_PROVIDER_ERROR",
        f"{api.label} API error (HTTP {status})",
    )
    assert server.hits("/elsewhere") == 0


@APIS
@pytest.mark.parametrize(
    ("body", "detail"),
    [(b"not json", "Expecting value: line 1 column 1 (char 0)"),
     (b'{"results": 5, "web": 5}', None)],
)  # fmt: skip
async def test_an_unprocessable_success_body_is_a_provider_error(
    server: LocalServer,
    providers: list[HttpSearchProvider],
    api: Api,
    body: bytes,
    detail: str | None,
) -> None:
    respond_with(server, api.path, 200, JSON, body)
    providers.append(provider := api.provider(server))
    error = await search_error(provider)
    assert error.code == "WEB_PROVIDER_ERROR"
    assert error.message.startswith(f"{api.label} returned an unprocessable response body: ")
    if detail is not None:
        assert error.message.endswith(detail)


@APIS
async def test_a_body_that_is_not_an_object_is_named_by_the_providers_response_model(
    server: LocalServer, providers: list[HttpSearchProvider], api: Api
) -> None:
    respond_with(server, api.path, 200, JSON, b"[1]")
    providers.append(provider := api.provider(server))
    error = await search_error(provider)
    assert (error.code, error.message) == (
        "WEB_PROVIDER_ERROR",
        f"{api.label} returned an unprocessable response body: body: Input should be a valid "
        "dictionary or instance of _Response",
    )


@APIS
async def test_an_unreachable_api_is_a_request_failure(
    providers: list[HttpSearchProvider], api: Api
) -> None:
    async with LocalServer() as gone:
        pass
    providers.append(provider := api.provider(gone))
    error = await search_error(provider)
    assert error.code == "WEB_PROVIDER_ERROR"
    assert error.message.startswith(f"{api.label} search request failed: ")


@APIS
async def test_an_abort_closes_the_request_and_is_web_aborted(
    server: LocalServer, providers: list[HttpSearchProvider], api: Api
) -> None:
    reached: asyncio.Future[Exchange] = asyncio.get_running_loop().create_future()

    @server.route(api.path)
    async def stall(exchange: Exchange) -> None:
        reached.set_result(exchange)
        await exchange.until_closed()

    providers.append(provider := api.provider(server))
    controller = AbortController()
    task = asyncio.create_task(search(provider, controller.signal))
    exchange = await reached
    controller.abort()
    with pytest.raises(WebError) as caught:
        await task
    assert (caught.value.code, caught.value.message) == (
        "WEB_ABORTED",
        f"{api.label} search aborted",
    )
    await closed(exchange)


@APIS
async def test_without_a_key_the_provider_is_unavailable_and_says_how_to_fix_it(
    server: LocalServer,
    providers: list[HttpSearchProvider],
    api: Api,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(api.key_env, raising=False)
    providers.append(provider := api.provider(server, api_key=None))
    assert not provider.available()
    assert provider.unavailable_reason() == f"set {api.key_env} or configure api_key"


@APIS
async def test_the_key_comes_from_the_environment(
    server: LocalServer,
    providers: list[HttpSearchProvider],
    api: Api,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(api.key_env, "k-123")
    respond_with(server, api.path, 200, JSON, json.dumps(api.payload).encode())
    providers.append(provider := api.provider(server, api_key=None))
    assert provider.available()
    assert await search(provider) == api.expected


@APIS
async def test_a_base_url_that_is_not_http_makes_the_provider_unavailable(
    server: LocalServer, providers: list[HttpSearchProvider], api: Api
) -> None:
    providers.append(provider := api.provider(server, base_url="ftp://nowhere"))
    assert not provider.available()
    assert provider.unavailable_reason() == "base_url 'ftp://nowhere' is not an http(s) URL"


# -- through the seam and the tool --------------------------------------------------------------


async def mount_search(ctx: Context, server: LocalServer, **tools: object) -> Context:
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(timeout_policy)
    await ctx.plugin(WebService, {"search_provider": "exa"})
    await ctx.plugin(search_exa, {"api_key": "k-123", "base_url": server.url("")})
    await ctx.plugin(tool_web, tools)
    return ctx


async def test_web_search_through_exa_renders_the_sources(
    ctx: Context, server: LocalServer
) -> None:
    respond_with(server, "/search", 200, JSON, json.dumps(EXA.payload).encode())
    await mount_search(ctx, server)
    result = await call(ctx, "web_search", {"queries": ["tether"]})
    assert text_of(result) == (
        "Sources:\n"
        "- [A](https://a.test/) — the gist (2024-05-01)\n"
        "- [b.test](https://b.test/) — b part\n\n"
        "Cite the relevant URLs above as markdown links in your answer."
    )
    assert server.exchanges[-1].request.json()["numResults"] == 8  # type: ignore[index]


async def test_a_slow_search_api_ends_web_search_as_tool_timeout_and_closes_the_request(
    ctx: Context, server: LocalServer
) -> None:
    reached: asyncio.Future[Exchange] = asyncio.get_running_loop().create_future()

    @server.route("/search")
    async def stall(exchange: Exchange) -> None:
        reached.set_result(exchange)
        await exchange.until_closed()

    await mount_search(ctx, server, search_timeout_ms=SERVER_REACHED_MS)
    result = await call(ctx, "web_search", {"queries": ["tether"]})
    assert (code_of(result), text_of(result)) == (
        "TOOL_TIMEOUT",
        f"Error: tool call timed out after {SERVER_REACHED_MS}ms",
    )
    await closed(reached)


async def test_the_search_plugin_registers_its_provider_until_disposed(
    ctx: Context, server: LocalServer
) -> None:
    await ctx.plugin(WebService)
    handle = await ctx.plugin(search_brave, {"api_key": "k", "base_url": server.url("")})
    assert ctx.web.search_provider_ids() == ["brave"]
    await handle.dispose()
    assert ctx.web.search_provider_ids() == []
