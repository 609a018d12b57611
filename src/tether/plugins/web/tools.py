"""The `tool-web` plugin: the model-facing `web_fetch` and `web_search` tools (spec §2.5).

Owns: the tool names, descriptions, parameters (the models are in `tether.plugins.web.args`,
imported by the first call; no timeout knob: budgets are deployment policy), value validation,
the multi-query fan-out of `web_search`, the prompt texts, and the plugin config.
`fetch_timeout_ms` / `search_timeout_ms` become the definitions' `timeout_ms`, so the timeout
policy — not these tools — enforces them and turns expiry into `TOOL_TIMEOUT`. Does not own
providers, networking or timers: bodies only forward `exec.signal` to `ctx.web`.

Tools are registered by enablement (`fetch`, `search`), not by provider availability: with no
usable provider they stay listed and fail with the seam's `WEB_PROVIDER_*` error. A web error
shows as `Error: <message>` with `info = ("WebError", code)`; a call the caller aborted after the
body started ends as the registry's `ABORTED` result (`tool call aborted`).

Multi-query search: the queries run concurrently on one fused signal (caller OR batch); the first
failure aborts the batch, every search is awaited, then that first failure is raised.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, ClassVar, Final

from ...core.signals import AbortController, AbortSignal
from ...core.timeout import MAX_TIMER_DELAY_MS
from ...kernel import Context
from ...kernel.config_models import ConfigValue
from ...tools.definition import ToolDefinition, ToolOutput, define_tool
from ...tools.errors import ToolCallAborted
from ...tools.execution import ToolRunContext
from ...tools.model_ref import ModelRef
from .errors import WEB_ABORTED, WebError
from .render import (
    FetchRenderer,
    WebFetchValue,
    WebSearchValue,
    fetch_value,
    merge_results,
    render_search,
    search_meta,
    search_value,
)
from .service import WebService, WebView

if TYPE_CHECKING:  # `Field`: resolved where a config is validated (tether.kernel.config_models)
    from pydantic import Field

    from .args import FetchArguments, SearchArguments  # imported by the first call, not at boot
    from .vocabulary import WebSearchResult

__all__ = [
    "FETCH_DESCRIPTION",
    "ToolCallAborted",
    "ToolWebConfig",
    "apply",
    "fetch_tool",
    "inject",
    "name",
    "prompt_sections",
    "search_tool",
]

name: Final = "tool-web"
inject: Final = ("tools", "web")

FETCH_DESCRIPTION: Final = (
    "Fetch the content of a specific HTTP(S) URL and return it decoded to text."
)
_FETCH_PROMPT: Final = (
    "Use the web_fetch tool to retrieve the content of a specific HTTP(S) URL (for example a"
    " result from web_search). It returns the page content decoded to text. Cite the URL as a"
    " markdown link when you use its content."
)

Web = WebService | WebView


class ToolWebConfig(ConfigValue):
    """Which tools to register, their budgets (ms) and output caps."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models

    search: bool = True
    fetch: bool = True
    search_max_results: Annotated[int, Field(strict=True, gt=0)] = 8
    search_max_queries: Annotated[int, Field(strict=True, gt=0)] = 4
    fetch_timeout_ms: Annotated[int, Field(strict=True, gt=0, le=MAX_TIMER_DELAY_MS)] = 30_000
    search_timeout_ms: Annotated[int, Field(strict=True, gt=0, le=MAX_TIMER_DELAY_MS)] = 30_000
    fetch_max_output_chars: Annotated[int, Field(strict=True, gt=0)] = 200_000


def _forwarded(error: WebError, signal: AbortSignal) -> Exception:
    """A provider's `WEB_ABORTED` for a call whose own signal aborted is the call's abort."""
    if error.code == WEB_ABORTED and signal.aborted:
        return ToolCallAborted()
    return error


def _always(_args: object) -> bool:
    return True


# -- web_fetch ---------------------------------------------------------------------------------


def fetch_tool(web: Web, config: ToolWebConfig) -> ToolDefinition:
    """The `web_fetch` definition, budget `config.fetch_timeout_ms`."""
    renderer = FetchRenderer(config.fetch_max_output_chars)

    async def run(args: FetchArguments, exec: ToolRunContext) -> WebFetchValue:
        from .vocabulary import WebFetchRequest  # the web seam's data: not at boot

        if not args.url.strip():
            raise ValueError("url must be a non-empty string")
        try:
            result = await web.fetch(WebFetchRequest(args.url), signal=exec.signal)
        except WebError as error:
            raise _forwarded(error, exec.signal) from error
        return fetch_value(result)

    return define_tool(
        name="web_fetch",
        description=FETCH_DESCRIPTION,
        parameters=ModelRef("tether.plugins.web.args:FetchArguments"),
        output=ToolOutput(
            schema=WebFetchValue, render=renderer.render, presentation_meta=renderer.meta
        ),
        execute=run,
        timeout_ms=config.fetch_timeout_ms,
        is_concurrency_safe=_always,
    )


# -- web_search --------------------------------------------------------------------------------


def _checked_queries(queries: Sequence[str], max_queries: int) -> list[str]:
    if not queries:
        raise ValueError("queries must contain at least one query")
    if len(queries) > max_queries:
        noun = "query" if max_queries == 1 else "queries"
        raise ValueError(f"queries must contain at most {max_queries} {noun}")
    if any(not query.strip() for query in queries):
        raise ValueError("each query must be a non-empty string")
    return list(dict.fromkeys(queries))  # exact duplicates collapse, first occurrence kept


async def _search_batch(
    web: Web, queries: list[str], max_results: int, signal: AbortSignal
) -> WebSearchResult:
    from .vocabulary import WebSearchRequest  # the web seam's data: not at boot

    batch = AbortController()
    failures: list[Exception] = []
    with AbortSignal.any(signal, batch.signal) as fused:

        async def one(query: str) -> WebSearchResult | None:
            try:
                return await web.search(WebSearchRequest(query, max_results), signal=fused)
            except Exception as error:
                failures.append(error)
                batch.abort(error)
                return None

        tasks = [asyncio.create_task(one(query)) for query in queries]
        interrupted = False
        while not all(task.done() for task in tasks):
            try:
                await asyncio.wait(tasks)
            except asyncio.CancelledError:  # never abandon started searches
                interrupted = True
                batch.abort()
        if interrupted:
            raise asyncio.CancelledError
    if failures:
        raise failures[0]
    results = [task.result() for task in tasks]
    return merge_results(queries, [r for r in results if r is not None], max_results)


def search_tool(web: Web, config: ToolWebConfig) -> ToolDefinition:
    """The `web_search` definition, budget `config.search_timeout_ms`."""
    max_queries, max_results = config.search_max_queries, config.search_max_results

    async def run(args: SearchArguments, exec: ToolRunContext) -> WebSearchValue:
        from .vocabulary import WebSearchRequest  # the web seam's data: not at boot

        queries = _checked_queries(args.queries, max_queries)
        signal = exec.signal
        try:
            if len(queries) == 1:
                request = WebSearchRequest(queries[0], max_results)
                result = await web.search(request, signal=signal)
            else:
                result = await _search_batch(web, queries, max_results, signal)
        except WebError as error:
            raise _forwarded(error, signal) from error
        return search_value(result)

    return define_tool(
        name="web_search",
        description=(
            "Search the web for current information. Provide 1–"
            f"{max_queries} queries in the required queries array. Returns an optional summary"
            " answer and a list of source URLs."
        ),
        parameters=ModelRef("tether.plugins.web.args:search_arguments_model", (max_queries,)),
        output=ToolOutput(
            schema=WebSearchValue, render=render_search, presentation_meta=search_meta
        ),
        execute=run,
        timeout_ms=config.search_timeout_ms,
        is_concurrency_safe=_always,
    )


# -- plugin ------------------------------------------------------------------------------------


def prompt_sections(config: ToolWebConfig) -> tuple[tuple[str, int, str], ...]:
    """(section id, order, text) of the enabled tools, for a system-prompt assembler."""
    sections: list[tuple[str, int, str]] = []
    if config.search:
        n = config.search_max_queries
        head = (
            "Use the web_search tool to discover current information on the web. The required"
            f" queries array accepts 1–{n} non-empty search queries; use a one-item array for a"
            " single search. It returns an optional answer plus a list of source URLs."
        )
        tail = (
            " Follow up with web_fetch when you need the full content of a specific result, and"
            " cite the relevant URLs as markdown links."
            if config.fetch
            else " Use the returned source snippets when available, and cite the relevant URLs"
            " as markdown links."
        )
        sections.append(("tool:web_search", 110, head + tail))
    if config.fetch:
        sections.append(("tool:web_fetch", 111, _FETCH_PROMPT))
    return tuple(sections)


def apply(ctx: Context, config: ToolWebConfig) -> None:
    """Register the enabled tools; they are removed when the plugin is disposed."""
    web: Web = ctx.web
    if config.search:
        ctx.tools.register(search_tool(web, config))
    if config.fetch:
        ctx.tools.register(fetch_tool(web, config))


Config: Final = ToolWebConfig
