"""The `tool-web` plugin: `web_fetch` and `web_search` as the model sees them (spec §2.5).

Contract: the schemas carry no timeout knob; `fetch_timeout_ms` / `search_timeout_ms` are the
definitions' `timeout_ms`, so with the timeout policy loaded an expired budget is `TOOL_TIMEOUT`
— and the HTTP stream is closed — while without it the fetch provider's backstop answers
`WEB_FETCH_TIMEOUT`; a caller abort mid-body is `ABORTED`. Results render exactly as specified,
web errors show as `Error: <message>` with `info = (WebError, code)`, and several queries run
concurrently, fail as one, and merge round-robin.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

import pytest

from tether.core.signals import AbortController, AbortSignal
from tether.kernel import Context, InvalidPluginConfig
from tether.plugins.web import tools as tool_web
from tether.plugins.web.errors import WEB_PROVIDER_ERROR, WebError
from tether.plugins.web.render import FETCH_FOOTER, WebSearchValue, render_fetch
from tether.plugins.web.service import WebService
from tether.plugins.web.vocabulary import WebSearchRequest, WebSearchResult, WebSource
from tether.tools import ErrorInfo, ToolFailure, ToolRuntime, ToolSuccess

from .conftest import (
    SERVER_REACHED_MS,
    MountWeb,
    call,
    closed,
    code_of,
    respond_with,
    stalling,
    text_of,
)
from .servers import LocalServer

# -- web_fetch: budgets, backstop, cancellation -------------------------------------------------


async def test_a_slow_server_ends_web_fetch_as_tool_timeout_and_its_connection_is_closed(
    server: LocalServer, mount_web: MountWeb
) -> None:
    started = stalling(server, "/slow", head=True, body=b"partial")
    ctx = await mount_web(tools={"fetch_timeout_ms": SERVER_REACHED_MS})
    result = await call(ctx, "web_fetch", {"url": server.url("/slow")})
    assert isinstance(result, ToolFailure)
    assert (result.error.message, code_of(result)) == (
        f"tool call timed out after {SERVER_REACHED_MS}ms",
        "TOOL_TIMEOUT",
    )
    assert text_of(result) == f"Error: tool call timed out after {SERVER_REACHED_MS}ms"
    await closed(started)


async def test_without_the_timeout_policy_the_provider_backstop_ends_it_as_web_fetch_timeout(
    server: LocalServer, mount_web: MountWeb
) -> None:
    started = stalling(server, "/slow", head=False)
    ctx = await mount_web(fetch={"timeout_ms": SERVER_REACHED_MS}, policy=False)
    result = await call(ctx, "web_fetch", {"url": server.url("/slow")})
    assert isinstance(result, ToolFailure)
    assert (text_of(result), result.error.info) == (
        "Error: web fetch timed out",
        ErrorInfo("WebError", "WEB_FETCH_TIMEOUT"),
    )
    await closed(started)


async def test_a_caller_abort_mid_body_ends_web_fetch_as_aborted_and_closes_the_connection(
    server: LocalServer, mount_web: MountWeb
) -> None:
    started = stalling(server, "/slow", head=True, body=b"partial")
    ctx = await mount_web()
    controller = AbortController()
    task = asyncio.create_task(
        call(ctx, "web_fetch", {"url": server.url("/slow")}, controller.signal)
    )
    exchange = await started
    controller.abort()
    result = await task
    assert isinstance(result, ToolFailure)
    assert (text_of(result), result.error.info) == (
        "Error: tool call aborted",
        ErrorInfo("AbortError", "ABORTED"),
    )
    await closed(exchange)


async def test_the_budgets_are_the_definitions_timeout_ms_and_not_model_parameters(
    mount_web: MountWeb,
) -> None:
    ctx = await mount_web(tools={"fetch_timeout_ms": 1234, "search_timeout_ms": 5678})
    assert ctx.tools.get("web_fetch").timeout_ms == 1234
    assert ctx.tools.get("web_search").timeout_ms == 5678
    assert ctx.tools.schemas() == [
        {
            "name": "web_search",
            "description": "Search the web for current information. Provide 1–4 queries in the"
            " required queries array. Returns an optional summary answer and a list of source"
            " URLs.",
            "parameters": {
                "type": "object",
                "properties": {
                    "queries": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Required search queries; accepts 1–4 items and merges"
                        " their results.",
                    }
                },
                "required": ["queries"],
                "additionalProperties": False,
            },
        },
        {
            "name": "web_fetch",
            "description": "Fetch the content of a specific HTTP(S) URL and return it decoded to"
            " text.",
            "parameters": {
                "type": "object",
                "properties": {
                    "url": {"type": "string", "description": "The HTTP(S) URL to fetch."}
                },
                "required": ["url"],
                "additionalProperties": False,
            },
        },
    ]


async def test_a_timeout_argument_from_the_model_is_rejected(
    server: LocalServer, mount_web: MountWeb
) -> None:
    ctx = await mount_web()
    result = await call(ctx, "web_fetch", {"url": server.url("/"), "timeout_ms": 5})
    assert code_of(result) == "INVALID_ARGS"
    assert server.connections == 0


async def test_both_tools_are_concurrency_safe(mount_web: MountWeb) -> None:
    from tether.tools import ToolExecutionInput

    ctx = await mount_web()
    for name, args in (
        ("web_fetch", {"url": "https://x.test/"}),
        ("web_search", {"queries": ["q"]}),
    ):
        mode = ctx.tools.execution_mode(
            ToolExecutionInput(
                call_id="c", name=name, arguments=args, signal=AbortController().signal
            )
        )
        assert mode == "parallel"


# -- web_fetch: results and rendering -----------------------------------------------------------


async def test_an_html_page_renders_as_markdown_under_a_fetched_header(
    server: LocalServer, mount_web: MountWeb
) -> None:
    page = b"<h2>Heading</h2><ul><li>one</li><li>two</li></ul><script>x()</script>"
    respond_with(server, "/p", 200, {"content-type": "text/html"}, page)
    ctx = await mount_web()
    result = await call(ctx, "web_fetch", {"url": server.url("/p")})
    assert isinstance(result, ToolSuccess)
    assert text_of(result) == f"Fetched {server.url('/p')} (HTTP 200)\n\n## Heading\n\n- one\n- two"
    assert result.meta == {"url": server.url("/p"), "status_code": 200, "truncated": False}
    assert result.value == {
        "url": server.url("/p"),
        "status_code": 200,
        "body": {"kind": "html", "content": page.decode()},
        "truncated": False,
    }


async def test_a_text_body_renders_verbatim_and_a_404_is_still_content(
    server: LocalServer, mount_web: MountWeb
) -> None:
    respond_with(server, "/missing", 404, {"content-type": "text/plain"}, b"<b>not</b> here")
    ctx = await mount_web()
    result = await call(ctx, "web_fetch", {"url": server.url("/missing")})
    assert text_of(result) == f"Fetched {server.url('/missing')} (HTTP 404)\n\n<b>not</b> here"


async def test_a_provider_truncated_body_renders_with_the_truncation_footer(
    server: LocalServer, mount_web: MountWeb
) -> None:
    respond_with(server, "/long", 200, {"content-type": "text/plain"}, b"a" * 50)
    ctx = await mount_web(fetch={"max_body_chars": 10})
    result = await call(ctx, "web_fetch", {"url": server.url("/long")})
    assert (
        text_of(result) == f"Fetched {server.url('/long')} (HTTP 200)\n\n{'a' * 10}{FETCH_FOOTER}"
    )
    assert isinstance(result, ToolSuccess)
    assert result.meta == {"url": server.url("/long"), "status_code": 200, "truncated": True}


HEADER = "Fetched https://e.x/ (HTTP 200)\n\n"


def fetched(content: str, kind: str = "text", truncated: bool = False) -> dict[str, object]:
    return {
        "url": "https://e.x/",
        "status_code": 200,
        "body": {"kind": kind, "content": content},
        "truncated": truncated,
    }


@pytest.mark.parametrize(
    ("cap", "content", "expected"),
    [(10, "hello", "Fetched ht"),
     (200, "x" * 300, HEADER + "x" * (200 - len(HEADER) - len(FETCH_FOOTER)) + FETCH_FOOTER),
     (40, "hi", HEADER + "hi")],
)  # fmt: skip
def test_the_rendering_fits_the_output_cap_footer_included(
    cap: int, content: str, expected: str
) -> None:
    text, _ = render_fetch(fetched(content), cap)  # type: ignore[arg-type]
    assert (text, len(text) <= cap) == (expected, True)


def test_html_nested_deeper_than_512_elements_is_shown_raw() -> None:
    deep = "<div>" * 600 + "x"
    text, _ = render_fetch(fetched(deep, "html"), 10_000)  # type: ignore[arg-type]
    assert text == f"Fetched https://e.x/ (HTTP 200)\n\n{deep}"


async def test_a_blank_url_is_refused_before_the_seam(
    mount_web: MountWeb, server: LocalServer
) -> None:
    ctx = await mount_web()
    result = await call(ctx, "web_fetch", {"url": "   "})
    assert isinstance(result, ToolFailure)
    assert (text_of(result), result.error.info) == ("Error: url must be a non-empty string", None)


async def test_a_web_error_shows_its_message_and_code(mount_web: MountWeb) -> None:
    ctx = await mount_web()
    result = await call(ctx, "web_fetch", {"url": "ftp://x.test/"})
    assert isinstance(result, ToolFailure)
    assert (text_of(result), result.error.info) == (
        'Error: unsupported URL scheme "ftp:" (only http and https are allowed)',
        ErrorInfo("WebError", "WEB_INVALID_URL"),
    )


# -- web_search ---------------------------------------------------------------------------------


@dataclass
class ScriptedSearch:
    """A search provider answering from a table: a result, or an error to raise."""

    answers: Mapping[str, WebSearchResult | Exception]
    id: str = "scripted"
    requests: list[WebSearchRequest] = field(default_factory=list)
    signals: list[AbortSignal] = field(default_factory=list)
    hold: set[str] = field(default_factory=set)  # queries that wait for their signal to abort
    all_held: asyncio.Event = field(default_factory=asyncio.Event)  # every held query is waiting
    _waiting: int = 0

    def available(self) -> bool:
        return True

    async def search(self, request: WebSearchRequest, *, signal: AbortSignal) -> WebSearchResult:
        self.requests.append(request)
        self.signals.append(signal)
        if request.query in self.hold:
            self._waiting += 1
            if self._waiting == len(self.hold):
                self.all_held.set()
            await signal.wait()
            raise WebError("Scripted search aborted", "WEB_ABORTED")
        answer = self.answers[request.query]
        if isinstance(answer, Exception):
            raise answer
        return answer


def hits(*names: str, truncated: bool = False, answer: str | None = None) -> WebSearchResult:
    return WebSearchResult(
        sources=tuple(WebSource(f"https://{n}.test/", title=n.upper()) for n in names),
        truncated=truncated,
        content=answer,
    )


async def search_ctx(ctx: Context, provider: ScriptedSearch, **config: object) -> Context:
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(WebService)
    ctx.web.register_search_provider(provider)
    await ctx.plugin(tool_web, config)
    return ctx


@pytest.mark.parametrize(
    ("queries", "max_queries", "message"),
    [([], 4, "queries must contain at least one query"),
     (["a", "b"], 1, "queries must contain at most 1 query"),
     (["a", "a", "a"], 2, "queries must contain at most 2 queries"),
     (["a", "  "], 4, "each query must be a non-empty string")],
)  # fmt: skip
async def test_query_lists_are_validated_before_any_search(
    ctx: Context, queries: list[str], max_queries: int, message: str
) -> None:
    provider = ScriptedSearch({})
    await search_ctx(ctx, provider, search_max_queries=max_queries)
    result = await call(ctx, "web_search", {"queries": queries})
    assert text_of(result) == f"Error: {message}"
    assert provider.requests == []


@pytest.mark.parametrize("arguments", [{}, {"queries": "one"}, {"queries": [1]}])
async def test_malformed_query_arguments_are_invalid_args(
    ctx: Context, arguments: dict[str, object]
) -> None:
    await search_ctx(ctx, ScriptedSearch({}))
    result = await call(ctx, "web_search", arguments)
    assert code_of(result) == "INVALID_ARGS"


async def test_one_query_is_one_search_capped_at_search_max_results(ctx: Context) -> None:
    provider = ScriptedSearch({"q": hits("a", "b", "c")})
    await search_ctx(ctx, provider, search_max_results=2)
    result = await call(ctx, "web_search", {"queries": ["q"]})
    assert provider.requests == [WebSearchRequest("q", 2)]
    assert text_of(result) == (
        "Sources:\n- [A](https://a.test/)\n- [B](https://b.test/)\n\n"
        "(Showing the first 2 sources. Refine the query for more.)\n\n"
        "Cite the relevant URLs above as markdown links in your answer."
    )


async def test_exact_duplicate_queries_collapse_keeping_first_occurrence(ctx: Context) -> None:
    provider = ScriptedSearch({"one": hits("a"), " two ": hits("b")})
    await search_ctx(ctx, provider)
    await call(ctx, "web_search", {"queries": ["one", "one", " two "]})
    assert sorted(r.query for r in provider.requests) == [" two ", "one"]


async def test_several_queries_share_one_fused_signal_and_merge_round_robin(ctx: Context) -> None:
    provider = ScriptedSearch(
        {
            "x": hits("a", "b", "c", answer="X says"),
            "y": hits("b", "d", answer=""),
            "z": hits("e", answer="Z says"),
        }
    )
    await search_ctx(ctx, provider, search_max_results=4)
    result = await call(ctx, "web_search", {"queries": ["x", "y", "z"]})
    assert isinstance(result, ToolSuccess)
    assert provider.signals[0] is provider.signals[1] is provider.signals[2]
    value = cast(WebSearchValue, result.value)
    assert [s["url"] for s in value["sources"]] == [
        "https://a.test/", "https://b.test/", "https://e.test/", "https://d.test/",
    ]  # fmt: skip
    assert value["truncated"] is True  # c was dropped for the cap
    assert value.get("content") == "### x\n\nX says\n\n### z\n\nZ says"


async def test_the_first_failure_aborts_the_other_searches_and_is_the_result(
    ctx: Context,
) -> None:
    failure = WebError("Exa API error (HTTP 500)", WEB_PROVIDER_ERROR)
    provider = ScriptedSearch({"bad": failure}, hold={"slow"})
    await search_ctx(ctx, provider)
    result = await call(ctx, "web_search", {"queries": ["slow", "bad"]})
    assert isinstance(result, ToolFailure)
    assert (text_of(result), result.error.info) == (
        "Error: Exa API error (HTTP 500)",
        ErrorInfo("WebError", "WEB_PROVIDER_ERROR"),
    )
    assert provider.signals[0].aborted
    assert provider.signals[0].reason is failure


async def test_a_caller_abort_during_several_searches_is_aborted(ctx: Context) -> None:
    provider = ScriptedSearch({}, hold={"a", "b"})
    await search_ctx(ctx, provider)
    controller = AbortController()
    task = asyncio.create_task(call(ctx, "web_search", {"queries": ["a", "b"]}, controller.signal))
    await provider.all_held.wait()
    controller.abort()
    result = await task
    assert code_of(result) == "ABORTED"


async def test_sources_render_with_labels_snippets_and_dates(ctx: Context) -> None:
    found = WebSearchResult(
        sources=(
            WebSource(
                "https://a.test/x", title="Alpha", snippet="first", published_at="2024-01-02"
            ),
            WebSource("https://b.test/y", snippet="second"),
            WebSource("not a url", published_at="2023"),
        ),
        content="The answer.",
    )
    await search_ctx(ctx, ScriptedSearch({"q": found}))
    result = await call(ctx, "web_search", {"queries": ["q"]})
    assert text_of(result) == (
        "The answer.\n\n"
        "Sources:\n"
        "- [Alpha](https://a.test/x) — first (2024-01-02)\n"
        "- [b.test](https://b.test/y) — second\n"
        "- [not a url](not a url) — (2023)\n\n"
        "Cite the relevant URLs above as markdown links in your answer."
    )
    assert isinstance(result, ToolSuccess)
    assert result.meta == {
        "sources": [
            {
                "url": "https://a.test/x",
                "title": "Alpha",
                "snippet": "first",
                "published_at": "2024-01-02",
            },
            {"url": "https://b.test/y", "snippet": "second"},
            {"url": "not a url", "published_at": "2023"},
        ],
        "truncated": False,
        "answer": "The answer.",
    }


async def test_no_sources_and_no_answer_render_as_no_results(ctx: Context) -> None:
    await search_ctx(ctx, ScriptedSearch({"q": WebSearchResult()}))
    result = await call(ctx, "web_search", {"queries": ["q"]})
    assert text_of(result) == (
        "No results found.\n\nCite the relevant URLs above as markdown links in your answer."
    )


# -- enablement and config ----------------------------------------------------------------------


async def test_tools_are_registered_by_enablement_even_without_a_provider(ctx: Context) -> None:
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(WebService)
    await ctx.plugin(tool_web, {"fetch": False})
    assert ctx.tools.names() == ["web_search"]
    result = await call(ctx, "web_search", {"queries": ["q"]})
    assert isinstance(result, ToolFailure)
    assert (text_of(result), result.error.info) == (
        "Error: no usable web provider is registered",
        ErrorInfo("WebError", "WEB_PROVIDER_UNAVAILABLE"),
    )


@pytest.mark.parametrize(
    "config",
    [{"fetch_timeout_ms": 0}, {"search_timeout_ms": -1}, {"search_max_results": 1.5},
     {"search_max_queries": True}, {"fetch_max_output_chars": "9"}, {"fetch_timeout": 5}],
)  # fmt: skip
async def test_bad_config_fails_at_load(ctx: Context, config: dict[str, object]) -> None:
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(WebService)
    with pytest.raises(InvalidPluginConfig, match='plugin "tool-web": config'):
        await ctx.plugin(tool_web, config)


def test_prompt_sections_follow_enablement() -> None:
    both = tool_web.prompt_sections(tool_web.ToolWebConfig())
    assert [(sid, order) for sid, order, _ in both] == [
        ("tool:web_search", 110),
        ("tool:web_fetch", 111),
    ]
    assert "Follow up with web_fetch" in both[0][2]
    (search_only,) = tool_web.prompt_sections(tool_web.ToolWebConfig(fetch=False))
    assert "web_fetch" not in search_only[2]
    assert search_only[2].endswith(
        "Use the returned source snippets when available, and cite the relevant URLs as markdown"
        " links."
    )
