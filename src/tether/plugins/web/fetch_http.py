"""The HTTP fetch provider (`web-fetch-http`, provider id `http`), spec §2.3, on httpx2.

Owns: one `fetch` — URL hygiene, address policy for every hop, a manual redirect loop (same
origin only, `max_redirects` hops), the streamed body with its byte cap, content-type and charset
handling, the character cap — and *stopping the HTTP stream* when the caller's signal or its own
backstop deadline aborts. Does not own the model-facing timeout (the tool's `timeout_ms`, enforced
by the timeout policy) or HTML conversion (markdown.py, at render time).

Cancellation. All network work runs inside `async with limit.signal.cancels():`, where `limit` is
`deadline(signal, timeout_ms, "WEB_FETCH_TIMEOUT")`. An abort cancels the awaiting task; httpx2
unwinds and the response is closed in a `finally`, which closes a connection whose body was not
fully read — the server sees the socket close. The error is then classified by the deadline
signal: its own timer fired first -> `WEB_FETCH_TIMEOUT` "web fetch timed out"; aborted otherwise
(the caller, or an outer deadline such as the tool's `TOOL_TIMEOUT`) -> `WEB_ABORTED` "web fetch
aborted"; not aborted -> `WEB_PROVIDER_ERROR` "web fetch failed: <error>". A cancellation of the
task from outside stays `CancelledError`.

Caps. A `Content-Length` above `max_response_bytes` is refused unread (`WEB_FETCH_TOO_LARGE`);
otherwise the body streams until the cap, counted after content decoding (so a compressed bomb
is cut too), and the rest is never read. The decoded text is then cut to `max_body_chars`.

Addresses. Unless `allow_private_hosts` is set, every host is resolved and each of its addresses
checked (addresses.py); the request then connects to a checked address (the URL's host goes in
the `Host` header and TLS server name), so DNS cannot change the answer between check and connect.
Redirect targets are checked before anything else about them, so a redirect to a private address
is `WEB_BLOCKED_URL` even when it is also cross-origin. Proxies from the environment are not used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, ClassVar, Final

from ...core.errors import error_message
from ...core.signals import AbortSignal
from ...core.timeout import MAX_TIMER_DELAY_MS, deadline, timeout_of
from ...kernel import Context
from ...kernel.config_models import ConfigValue
from .errors import (
    WEB_ABORTED,
    WEB_FETCH_TIMEOUT,
    WEB_FETCH_TOO_LARGE,
    WEB_PROVIDER_ERROR,
    WEB_REDIRECT_BLOCKED,
    WebError,
)

if TYPE_CHECKING:
    import httpx2  # imported where used: it costs ~100 ms at startup
    from pydantic import AfterValidator, Field  # resolved where a config is validated

    from .addresses import AddressPolicy, Resolver
    from .vocabulary import WebFetchRequest, WebFetchResult

__all__ = ["HttpFetchConfig", "HttpFetchProvider", "apply", "inject", "name"]

name: Final = "web-fetch-http"
inject: Final = ("web",)

DEFAULT_USER_AGENT: Final = "tether/0.1 (web_fetch)"
ACCEPT: Final = "text/html,application/xhtml+xml,text/*;q=0.9,application/json;q=0.8"
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})


def _entries_parse(entries: tuple[str, ...]) -> tuple[str, ...]:
    from .addresses import parse_allow_entry  # where pydantic validates a mapping

    for entry in entries:
        parse_allow_entry(entry)
    return entries


class HttpFetchConfig(ConfigValue):
    """Caps, the backstop timeout, redirects and the address policy of the `http` provider.

    `timeout_ms` is a backstop for direct `ctx.web.fetch` callers; keep it above the tool's
    `fetch_timeout_ms` so the tool budget (`TOOL_TIMEOUT`) normally wins.
    """

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models

    max_url_length: Annotated[int, Field(gt=0)] = 2048
    max_response_bytes: Annotated[int, Field(gt=0)] = 5_000_000
    max_body_chars: Annotated[int, Field(gt=0)] = 100_000
    timeout_ms: Annotated[float, Field(gt=0, le=MAX_TIMER_DELAY_MS, allow_inf_nan=False)] = 60_000
    max_redirects: Annotated[int, Field(ge=0)] = 5
    user_agent: str = DEFAULT_USER_AGENT
    allow_private_hosts: bool = False
    private_address_allowlist: Annotated[tuple[str, ...], AfterValidator(_entries_parse)] = ()


def _aborted() -> WebError:
    return WebError("web fetch aborted", WEB_ABORTED)


class HttpFetchProvider:
    """Anonymous HTTP(S) GET with the hygiene above. Owns one connection pool; `aclose()` it."""

    id: ClassVar[str] = "http"

    def __init__(
        self,
        config: HttpFetchConfig | None = None,
        *,
        resolver: Resolver | None = None,
    ) -> None:
        """`resolver`: how a host's addresses are found (None: the system's,
        `addresses.system_resolver`)."""
        self.config = cfg = config if config is not None else HttpFetchConfig()
        self._resolver = resolver
        self._address_policy: AddressPolicy | None = None  # made by the first fetch (issue 36)
        if cfg.private_address_allowlist:  # a bad entry is refused here, at mount, as always
            self._address_policy = self._new_policy()
        self._headers = {"user-agent": cfg.user_agent, "accept": ACCEPT}
        self._pool: httpx2.AsyncClient | None = None  # created on the first fetch

    def _new_policy(self) -> AddressPolicy:
        from .addresses import AddressPolicy, system_resolver  # issue 36: not at mount

        cfg = self.config
        return AddressPolicy(
            allow_private=cfg.allow_private_hosts,
            allowlist=cfg.private_address_allowlist,
            resolver=system_resolver if self._resolver is None else self._resolver,
        )

    @property
    def _policy(self) -> AddressPolicy:
        if self._address_policy is None:
            self._address_policy = self._new_policy()
        return self._address_policy

    @property
    def _client(self) -> httpx2.AsyncClient:
        if self._pool is None:
            from .client import new_client  # at the first fetch (issue 36)

            self._pool = new_client()
        return self._pool

    def available(self) -> bool:
        """Always true: the provider needs no key."""
        return True

    async def aclose(self) -> None:
        """Close the connection pool (idle keep-alive connections)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.aclose()

    async def fetch(self, request: WebFetchRequest, *, signal: AbortSignal) -> WebFetchResult:
        """GET `request.url`. Raises `WebError` (see the module docstring for the codes)."""
        if signal.aborted:
            raise _aborted()
        with deadline(signal, self.config.timeout_ms, WEB_FETCH_TIMEOUT) as limit:
            try:
                async with limit.signal.cancels():
                    return await self._fetch(request.url)
            except WebError:
                raise
            except Exception as error:
                if timeout_of(limit.signal, WEB_FETCH_TIMEOUT) is not None:
                    raise WebError("web fetch timed out", WEB_FETCH_TIMEOUT) from error
                if limit.signal.aborted:
                    raise _aborted() from error
                raise WebError(
                    f"web fetch failed: {error_message(error)}", WEB_PROVIDER_ERROR
                ) from error

    async def _fetch(self, requested: str) -> WebFetchResult:
        from .urls import effective_port, origin, resolve_location, validate_url  # issue 36

        cfg = self.config
        url = validate_url(requested, cfg.max_url_length)
        self._policy.check_literal(url.host, effective_port(url))
        redirects = 0
        while True:
            response = await self._send(url)
            try:
                status = response.status_code
                if status not in _REDIRECTS:
                    return await self._read(url, response)
                if redirects >= cfg.max_redirects:
                    raise WebError(
                        f"exceeded the maximum of {cfg.max_redirects} redirects",
                        WEB_REDIRECT_BLOCKED,
                    )
                location = response.headers.get("location")
                if not location:
                    raise WebError(
                        f"redirect response (HTTP {status}) without a Location header",
                        WEB_PROVIDER_ERROR,
                    )
                target = resolve_location(url, location, cfg.max_url_length)
                self._policy.check_literal(target.host, effective_port(target))
                if origin(target) != origin(url):
                    raise WebError(
                        f"cross-origin redirect to {target} is not followed automatically; "
                        "retry against that URL directly",
                        WEB_REDIRECT_BLOCKED,
                    )
                redirects += 1
                url = target
            finally:
                await response.aclose()  # a body left unread closes its connection

    async def _send(self, url: httpx2.URL) -> httpx2.Response:
        """Send the GET and return once headers arrive, connecting only to vetted addresses."""
        import httpx2

        from .urls import effective_port

        client = self._client
        if not self._policy.checks_addresses:
            return await client.send(
                client.build_request("GET", url, headers=self._headers), stream=True
            )
        host = url.raw_host.decode("ascii")
        addresses = await self._policy.vet(host, effective_port(url))
        if addresses == [host]:  # a literal IP: nothing to pin
            return await client.send(
                client.build_request("GET", url, headers=self._headers), stream=True
            )
        headers = {**self._headers, "host": url.netloc.decode("ascii")}
        extensions = {"sni_hostname": host} if url.scheme == "https" else {}
        *earlier, last = addresses  # vet() never returns an empty list
        for address in earlier:
            try:
                return await client.send(
                    self._pinned(url, address, headers, extensions), stream=True
                )
            except httpx2.ConnectError:  # nothing was sent: try the next address
                continue
        return await client.send(self._pinned(url, last, headers, extensions), stream=True)

    def _pinned(
        self, url: httpx2.URL, address: str, headers: dict[str, str], extensions: dict[str, str]
    ) -> httpx2.Request:
        return self._client.build_request(
            "GET", url.copy_with(host=address), headers=headers, extensions=extensions
        )

    async def _read(self, url: httpx2.URL, response: httpx2.Response) -> WebFetchResult:
        from .decoding import body_kind, decode_body, parse_content_type  # issue 36: first read
        from .vocabulary import FetchBody, WebFetchResult  # the web seam's data: not at boot

        cfg = self.config
        media_type, charset = parse_content_type(response.headers.get("content-type"))
        kind = body_kind(media_type)
        declared = response.headers.get("content-length", "").strip()
        cap = cfg.max_response_bytes
        if declared.isdigit() and int(declared) > cap:
            raise WebError(f"response exceeds the maximum of {cap} bytes", WEB_FETCH_TOO_LARGE)
        chunks: list[bytes] = []
        size = 0
        cut_by_bytes = False
        async for chunk in response.aiter_bytes():
            room = cap - size
            if len(chunk) > room:
                chunks.append(chunk[:room])
                cut_by_bytes = True
                break
            chunks.append(chunk)
            size += len(chunk)
        text = decode_body(b"".join(chunks), charset, complete=not cut_by_bytes)
        cut_by_chars = len(text) > cfg.max_body_chars
        if cut_by_chars:
            text = text[: cfg.max_body_chars]
        return WebFetchResult(
            url=str(url),
            status_code=response.status_code,
            body=FetchBody(kind, text),
            truncated=cut_by_bytes or cut_by_chars,
        )


def apply(ctx: Context, config: HttpFetchConfig) -> None:
    """Register the `http` fetch provider on `ctx.web`; its pool closes when the plugin goes."""
    provider = HttpFetchProvider(config)
    ctx.effect(provider.aclose)
    ctx.web.register_fetch_provider(provider)


Config: Final = HttpFetchConfig
