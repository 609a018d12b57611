"""The web capability: the `ctx.web` seam, its HTTP fetch and search providers, and the
`web_fetch` / `web_search` tools.

    service.py        ctx.web: provider registries, selection, result caps   (plugin `web`)
    vocabulary.py     requests, results, the provider protocols
    errors.py         WebError and the WEB_* codes
    fetch_http.py     the `http` fetch provider on httpx2                    (`web-fetch-http`)
    urls.py           URL hygiene        addresses.py   public-address policy
    decoding.py       content types and charsets          client.py   the shared httpx2 setup
    search_http.py    shared plumbing of the HTTP search providers
    search_exa.py     (`web-search-exa`)   search_brave.py (`web-search-brave`)
    search_tavily.py  (`web-search-tavily`)
    tools.py          web_fetch / web_search                                 (`tool-web`)
    render.py         what the model sees        markdown.py   HTML -> Markdown
"""

__all__: list[str] = []
