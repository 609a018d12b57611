"""What the model sees from `web_fetch` and `web_search` (spec §2.5), and the multi-query merge.

Owns: the canonical tool values (`WebFetchValue`, `WebSearchValue`), the exact renderings —
fetch: `Fetched <url> (HTTP <status>)`, HTML converted to Markdown, the output cap and its footer;
search: answer, `Sources:` list, truncation note, citation reminder — the presentation metadata,
and `merge_results`, the round-robin merge of several queries' results. Does not own fetching,
searching or argument validation (tools.py).

A fetch rendering is computed once per value: `render` and `presentation_meta` share it (the
effective `truncated` flag is a product of rendering), so the HTML is converted once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, Literal, NotRequired, cast
from urllib.parse import urlsplit

from typing_extensions import TypedDict

from ...core.json import JsonValue
from ...tools.results import ContentBlock, text_content

if TYPE_CHECKING:
    from .vocabulary import WebFetchResult, WebSearchResult, WebSource

__all__ = [
    "FETCH_FOOTER",
    "FetchBodyValue",
    "FetchRenderer",
    "SourceValue",
    "WebFetchValue",
    "WebSearchValue",
    "fetch_value",
    "merge_results",
    "render_fetch",
    "render_search",
    "search_meta",
    "search_value",
]

FETCH_FOOTER: Final = (
    "\n\n(Content truncated. Fetch a more specific URL or section for the full text.)"
)
_CACHE_SIZE: Final = 8


class FetchBodyValue(TypedDict):
    kind: Literal["html", "text"]
    content: str


class WebFetchValue(TypedDict):
    """The canonical `web_fetch` value."""

    url: str
    status_code: int
    body: FetchBodyValue
    truncated: bool


class SourceValue(TypedDict):
    url: str
    title: NotRequired[str]
    snippet: NotRequired[str]
    published_at: NotRequired[str]


class WebSearchValue(TypedDict):
    """The canonical `web_search` value; absent optional fields are omitted."""

    content: NotRequired[str]
    sources: list[SourceValue]
    truncated: bool


# -- fetch -------------------------------------------------------------------------------------


def fetch_value(result: WebFetchResult) -> WebFetchValue:
    return {
        "url": result.url,
        "status_code": result.status_code,
        "body": {"kind": result.body.kind, "content": result.body.content},
        "truncated": result.truncated,
    }


def render_fetch(value: WebFetchValue, max_chars: int) -> tuple[str, bool]:
    """`(text, effective truncated)` for a fetch value, at most `max_chars` characters."""
    from .markdown import html_to_markdown  # at the first fetch shown (issue 36)

    url = value["url"]
    header = f"Fetched {url} (HTTP {value['status_code']})\n\n"
    content = value["body"]["content"]
    source = content[:max_chars]
    rendered = source if value["body"]["kind"] == "text" else html_to_markdown(source, url)
    prefix = header + rendered
    truncated = value["truncated"] or len(content) > max_chars or len(prefix) > max_chars
    full = prefix + FETCH_FOOTER if truncated else prefix
    if len(full) <= max_chars:
        return full, truncated
    if max_chars < len(FETCH_FOOTER):
        return full[:max_chars], truncated
    return prefix[: max_chars - len(FETCH_FOOTER)] + FETCH_FOOTER, truncated


class FetchRenderer:
    """`render` and `presentation_meta` of `web_fetch` for one output cap, sharing one
    rendering per value (a small identity-keyed cache; values are frozen)."""

    __slots__ = ("_cache", "max_chars")

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self._cache: dict[int, tuple[object, str, bool]] = {}

    def _rendered(self, value: JsonValue) -> tuple[str, bool]:
        hit = self._cache.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1], hit[2]
        text, truncated = render_fetch(cast(WebFetchValue, value), self.max_chars)
        if len(self._cache) >= _CACHE_SIZE:
            self._cache.pop(next(iter(self._cache)))
        self._cache[id(value)] = (value, text, truncated)
        return text, truncated

    def render(self, _args: object, value: JsonValue) -> Sequence[ContentBlock]:
        return text_content(self._rendered(value)[0])

    def meta(self, _args: object, value: JsonValue) -> JsonValue:
        fetched = cast(WebFetchValue, value)
        return {
            "url": fetched["url"],
            "status_code": fetched["status_code"],
            "truncated": self._rendered(value)[1],
        }


# -- search ------------------------------------------------------------------------------------


def _source_value(source: WebSource) -> SourceValue:
    out: SourceValue = {"url": source.url}
    if source.title:
        out["title"] = source.title
    if source.snippet:
        out["snippet"] = source.snippet
    if source.published_at:
        out["published_at"] = source.published_at
    return out


def search_value(result: WebSearchResult) -> WebSearchValue:
    out: WebSearchValue = {
        "sources": [_source_value(source) for source in result.sources],
        "truncated": result.truncated,
    }
    if result.content:
        out["content"] = result.content
    return out


def merge_results(
    queries: Sequence[str], results: Sequence[WebSearchResult], max_results: int
) -> WebSearchResult:
    """Round-robin by rank across queries, skipping URLs already taken, at most `max_results`.

    `truncated` when any result was, or a source was dropped for the cap. Answers become
    `### <query>\\n\\n<answer>` blocks joined by blank lines (empty answers skipped).
    """
    from .vocabulary import WebSearchResult  # the web seam's data: not at boot

    taken: list[WebSource] = []
    seen: set[str] = set()
    dropped = False
    depth = max((len(result.sources) for result in results), default=0)
    for rank in range(depth):
        for result in results:
            if rank >= len(result.sources):
                continue
            source = result.sources[rank]
            if source.url in seen:
                continue
            if len(taken) >= max_results:
                dropped = True
                continue
            seen.add(source.url)
            taken.append(source)
    answers = [
        f"### {query}\n\n{result.content}"
        for query, result in zip(queries, results, strict=True)
        if result.content
    ]
    return WebSearchResult(
        sources=tuple(taken),
        truncated=dropped or any(result.truncated for result in results),
        content="\n\n".join(answers) or None,
    )


def _label(url: str, title: str | None) -> str:
    if title:
        return title
    try:
        host = urlsplit(url).hostname
    except ValueError:
        host = None
    return host or url


def render_search(_args: object, value: JsonValue) -> Sequence[ContentBlock]:
    """The exact `web_search` text of spec §2.5."""
    found = cast(WebSearchValue, value)
    parts: list[str] = []
    content = found.get("content")
    if content:
        parts.append(content)
    sources = found["sources"]
    if sources:
        lines = ["Sources:"]
        for source in sources:
            line = f"- [{_label(source['url'], source.get('title'))}]({source['url']})"
            extra = [source["snippet"]] if source.get("snippet") else []
            if source.get("published_at"):
                extra.append(f"({source['published_at']})")
            if extra:
                line += " — " + " ".join(extra)
            lines.append(line)
        parts.append("\n".join(lines))
    elif not content:
        parts.append("No results found.")
    if found["truncated"]:
        parts.append(f"(Showing the first {len(sources)} sources. Refine the query for more.)")
    parts.append("Cite the relevant URLs above as markdown links in your answer.")
    return text_content("\n\n".join(parts))


def search_meta(_args: object, value: JsonValue) -> JsonValue:
    """`{sources, truncated, answer?}` for a UI."""
    found = cast(WebSearchValue, value)
    meta: dict[str, JsonValue] = {
        "sources": cast(JsonValue, found["sources"]),
        "truncated": found["truncated"],
    }
    if found.get("content"):
        meta["answer"] = found["content"]
    return meta
