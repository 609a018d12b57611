"""The `http` fetch provider against real HTTP servers on 127.0.0.1 (spec §2.3).

Contract: a fetch returns the final URL, the status (any status is a result), the body as `html`
or `text` and a `truncated` flag; it follows at most `max_redirects` same-origin redirects; it
never reads more than `max_response_bytes` (a declared larger body is refused, a longer stream is
cut and its connection closed); it decodes by the `charset` parameter and never fails to decode;
it refuses binary types. It stops the HTTP stream — the server sees the connection close — when
the caller's signal or its own backstop deadline aborts: `WEB_ABORTED` / `WEB_FETCH_TIMEOUT`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tether.core.signals import AbortController
from tether.core.timeout import deadline
from tether.plugins.web.errors import WebError
from tether.plugins.web.vocabulary import FetchBody, WebFetchRequest, WebFetchResult

from .conftest import SERVER_REACHED_MS, MakeProvider, closed, respond_with, stalling
from .servers import Exchange, LocalServer


class ManualScheduler:
    """A `Scheduler` whose timers fire when the test says (`fire`), not after their delay."""

    def __init__(self) -> None:
        self.pending: list[Callable[[], None]] = []

    def call_later(self, delay_ms: float, callback: Callable[[], None]) -> ManualTimer:
        self.pending.append(callback)
        return ManualTimer(self, callback)

    def fire(self) -> None:
        due, self.pending = self.pending, []
        for callback in due:
            callback()


@dataclass(frozen=True)
class ManualTimer:
    clock: ManualScheduler
    callback: Callable[[], None]

    def cancel(self) -> None:
        if self.callback in self.clock.pending:
            self.clock.pending.remove(self.callback)


HTML = {"content-type": "text/html; charset=utf-8"}
TEXT = {"content-type": "text/plain"}


async def fetch(provider: object, url: str, signal: object = None) -> WebFetchResult:
    controller = AbortController()
    result: WebFetchResult = await provider.fetch(  # type: ignore[attr-defined]
        WebFetchRequest(url), signal=signal if signal is not None else controller.signal
    )
    return result


async def fetch_error(provider: object, url: str) -> WebError:
    with pytest.raises(WebError) as caught:
        await fetch(provider, url)
    return caught.value


# -- results ------------------------------------------------------------------------------------


async def test_an_html_page_is_returned_as_html_with_its_final_url_and_status(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    respond_with(server, "/page", 200, HTML, b"<h1>Hi</h1>")
    result = await fetch(make_provider(), server.url("/page"))
    assert result == WebFetchResult(server.url("/page"), 200, FetchBody("html", "<h1>Hi</h1>"))


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "text/markdown; charset=utf-8", "application/json", "application/ld+json",
     "application/xml", "image/svg+xml"],
)  # fmt: skip
async def test_text_json_and_xml_types_pass_through_as_text(
    server: LocalServer, make_provider: MakeProvider, content_type: str
) -> None:
    respond_with(server, "/doc", 200, {"content-type": content_type}, b'{"a": 1}')
    result = await fetch(make_provider(), server.url("/doc"))
    assert result.body == FetchBody("text", '{"a": 1}')


async def test_a_non_2xx_response_is_a_result_not_an_error(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    respond_with(server, "/gone", 404, TEXT, b"no such page")
    result = await fetch(make_provider(), server.url("/gone"))
    assert (result.status_code, result.body.content) == (404, "no such page")


async def test_the_request_carries_the_user_agent_and_accept_headers(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    respond_with(server, "/page", 200, TEXT, b"ok")
    await fetch(make_provider(user_agent="probe/1"), server.url("/page"))
    headers = server.exchanges[-1].request.headers
    assert headers["user-agent"] == "probe/1"
    assert headers["accept"] == (
        "text/html,application/xhtml+xml,text/*;q=0.9,application/json;q=0.8"
    )


# -- content types and charsets -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "shown"),
    [({"content-type": "application/octet-stream"}, "application/octet-stream"),
     ({"content-type": "IMAGE/PNG; x=1"}, "image/png"),
     ({}, "unknown")],
)  # fmt: skip
async def test_binary_or_missing_content_types_are_refused_without_reading_the_body(
    server: LocalServer, make_provider: MakeProvider, headers: dict[str, str], shown: str
) -> None:
    started: asyncio.Future[Exchange] = asyncio.get_running_loop().create_future()

    @server.route("/bin")
    async def binary(exchange: Exchange) -> None:
        await exchange.send_head(200, {**headers, "transfer-encoding": "chunked"})
        await exchange.write_chunk(b"\x89PNG\r\n\x1a\n")
        started.set_result(exchange)
        await exchange.until_closed()

    error = await fetch_error(make_provider(), server.url("/bin"))
    assert (error.code, error.message) == (
        "WEB_UNSUPPORTED_CONTENT_TYPE",
        f'unsupported content type "{shown}"',
    )
    await closed(started)


async def test_the_charset_parameter_decides_the_decoding_and_latin1_means_windows_1252(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    respond_with(
        server, "/l1", 200, {"content-type": 'text/plain; charset="ISO-8859-1"'}, b"caf\xe9 \x80"
    )
    result = await fetch(make_provider(), server.url("/l1"))
    assert result.body.content == "café €"


async def test_bytes_that_do_not_fit_the_declared_charset_become_replacement_characters(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    respond_with(server, "/lie", 200, {"content-type": "text/plain; charset=utf-8"}, b"caf\xe9!")
    result = await fetch(make_provider(), server.url("/lie"))
    assert result.body.content == "caf\ufffd!"


@pytest.mark.parametrize("label", ["x-no-such-charset", "base64"])
async def test_an_unknown_or_non_text_charset_label_falls_back_to_utf8(
    server: LocalServer, make_provider: MakeProvider, label: str
) -> None:
    respond_with(
        server, "/odd", 200, {"content-type": f"text/plain; charset={label}"}, "é".encode()
    )
    result = await fetch(make_provider(), server.url("/odd"))
    assert result.body.content == "é"


async def test_a_byte_order_mark_overrides_the_declared_charset(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    body = "\ufeffhé".encode("utf-16-le")
    respond_with(server, "/bom", 200, {"content-type": "text/plain; charset=latin1"}, body)
    result = await fetch(make_provider(), server.url("/bom"))
    assert result.body.content == "hé"


# -- size caps ----------------------------------------------------------------------------------


async def test_a_declared_length_over_the_byte_cap_is_refused_and_the_connection_closed(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    started: asyncio.Future[Exchange] = asyncio.get_running_loop().create_future()

    @server.route("/huge")
    async def huge(exchange: Exchange) -> None:
        await exchange.send_head(200, {**TEXT, "content-length": "50000000"})
        await exchange.write(b"x" * 1000)
        started.set_result(exchange)
        await exchange.until_closed()

    error = await fetch_error(make_provider(max_response_bytes=1000), server.url("/huge"))
    assert (error.code, error.message) == (
        "WEB_FETCH_TOO_LARGE",
        "response exceeds the maximum of 1000 bytes",
    )
    await closed(started)


async def test_a_never_ending_chunked_stream_is_cut_at_exactly_the_byte_cap_and_closed(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    stopped: asyncio.Future[Exchange] = asyncio.get_running_loop().create_future()

    @server.route("/forever")
    async def forever(exchange: Exchange) -> None:
        await exchange.send_head(200, {**TEXT, "transfer-encoding": "chunked"})
        try:
            while True:
                await exchange.write_chunk(b"y" * 4096)
        except ConnectionError:
            exchange.closed.set()
            stopped.set_result(exchange)

    result = await fetch(make_provider(max_response_bytes=10_000), server.url("/forever"))
    assert (len(result.body.content), result.truncated) == (10_000, True)
    assert set(result.body.content) == {"y"}
    await closed(stopped)


async def test_a_body_exactly_at_the_byte_cap_is_not_truncated(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    respond_with(server, "/exact", 200, TEXT, b"z" * 500)
    result = await fetch(make_provider(max_response_bytes=500), server.url("/exact"))
    assert (len(result.body.content), result.truncated) == (500, False)


async def test_a_huge_body_within_the_byte_cap_is_truncated_to_max_body_chars(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    respond_with(server, "/big", 200, HTML, b"<p>" + b"w" * 300_000 + b"</p>")
    result = await fetch(make_provider(max_body_chars=1000), server.url("/big"))
    assert (result.body.content, result.truncated) == ("<p>" + "w" * 997, True)


async def test_a_multibyte_character_cut_by_the_byte_cap_is_dropped_not_garbled(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    @server.route("/cut")
    async def cut(exchange: Exchange) -> None:
        await exchange.send_head(200, {**TEXT, "transfer-encoding": "chunked"})
        await exchange.write_chunk("aé".encode() * 3)
        await exchange.write(b"0\r\n\r\n")

    result = await fetch(make_provider(max_response_bytes=5), server.url("/cut"))
    assert (result.body.content, result.truncated) == ("aéa", True)


# -- redirects ----------------------------------------------------------------------------------


def redirect(server: LocalServer, path: str, location: str | None, status: int = 302) -> None:
    headers = {} if location is None else {"location": location}
    respond_with(server, path, status, headers)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_a_same_origin_redirect_is_followed_and_reports_the_final_url(
    server: LocalServer, make_provider: MakeProvider, status: int
) -> None:
    redirect(server, "/old", "/new", status)
    respond_with(server, "/new", 200, TEXT, b"moved here")
    result = await fetch(make_provider(), server.url("/old"))
    assert (result.url, result.body.content) == (server.url("/new"), "moved here")


async def test_a_redirect_loop_stops_after_max_redirects_plus_one_requests(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    redirect(server, "/a", "/b")
    redirect(server, "/b", "/a")
    error = await fetch_error(make_provider(max_redirects=2), server.url("/a"))
    assert (error.code, error.message) == (
        "WEB_REDIRECT_BLOCKED",
        "exceeded the maximum of 2 redirects",
    )
    assert [e.request.path for e in server.exchanges] == ["/a", "/b", "/a"]


async def test_max_redirects_zero_follows_none(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    redirect(server, "/a", "/b")
    error = await fetch_error(make_provider(max_redirects=0), server.url("/a"))
    assert error.message == "exceeded the maximum of 0 redirects"
    assert server.hits("/b") == 0


async def test_a_redirect_without_location_is_a_provider_error(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    redirect(server, "/a", None, 307)
    error = await fetch_error(make_provider(), server.url("/a"))
    assert (error.code, error.message) == (
        "WEB_PROVIDER_ERROR",
        "redirect response (HTTP 307) without a Location header",
    )


async def test_a_cross_origin_redirect_is_not_followed(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    target = server.url("/elsewhere", host="localhost")
    redirect(server, "/a", target)
    error = await fetch_error(make_provider(), server.url("/a"))
    assert (error.code, error.message) == (
        "WEB_REDIRECT_BLOCKED",
        f"cross-origin redirect to {target} is not followed automatically; retry against that"
        " URL directly",
    )


async def test_a_redirect_to_a_private_address_is_refused_before_connecting(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    async with LocalServer() as canary:  # a live private address the fetch must never reach
        redirect(server, "/a", canary.url("/secret"))
        error = await fetch_error(make_provider(), server.url("/a"))
        assert error.code == "WEB_BLOCKED_URL"
        assert error.message.startswith("refusing to fetch 127.0.0.1: not a public address")
        assert canary.connections == 0


async def test_credentials_in_a_redirect_location_are_blocked(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    redirect(server, "/a", server.url("/b").replace("://", "://user:pw@"))
    error = await fetch_error(make_provider(), server.url("/a"))
    assert (error.code, error.message) == ("WEB_BLOCKED_URL", "credentials in URLs are not allowed")


# -- URL hygiene (no network access) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "code", "message"),
    [("example.com", "WEB_INVALID_URL", "invalid URL: example.com"),
     ("http://", "WEB_INVALID_URL", "invalid URL: http://"),
     ("http://exa mple.com/", "WEB_INVALID_URL", "invalid URL: http://exa mple.com/"),
     ("http://example.com:99999/", "WEB_INVALID_URL", "invalid URL: http://example.com:99999/"),
     ("ftp://example.com/f", "WEB_INVALID_URL",
      'unsupported URL scheme "ftp:" (only http and https are allowed)'),
     ("file:///etc/passwd", "WEB_INVALID_URL",
      'unsupported URL scheme "file:" (only http and https are allowed)'),
     ("http://user:pw@example.com/", "WEB_BLOCKED_URL", "credentials in URLs are not allowed"),
     ("http://example.com/" + "a" * 40, "WEB_INVALID_URL", "URL exceeds the maximum length of 40")],
)  # fmt: skip
async def test_bad_urls_are_refused_before_any_network_access(
    make_provider: MakeProvider, url: str, code: str, message: str
) -> None:
    async def no_lookups(host: str, port: int) -> list[str]:
        raise AssertionError(f"resolved {host}")

    error = await fetch_error(make_provider(no_lookups, max_url_length=40), url)
    assert (error.code, error.message) == (code, message)


# -- failures, timeouts and cancellation --------------------------------------------------------


async def test_an_unreachable_host_is_a_provider_error(make_provider: MakeProvider) -> None:
    async with LocalServer() as gone:
        pass
    port = gone.port  # nothing listens there any more
    provider = make_provider(private_address_allowlist=[f"127.0.0.1:{port}"])
    error = await fetch_error(provider, f"http://127.0.0.1:{port}/")
    assert error.code == "WEB_PROVIDER_ERROR"
    assert error.message.startswith("web fetch failed: ")


async def test_an_already_aborted_signal_fails_before_any_request(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    controller = AbortController()
    controller.abort()
    with pytest.raises(WebError) as caught:
        await fetch(make_provider(), server.url("/page"), controller.signal)
    assert (caught.value.code, caught.value.message) == ("WEB_ABORTED", "web fetch aborted")
    assert server.connections == 0


async def test_the_backstop_deadline_mid_body_is_web_fetch_timeout_and_closes_the_stream(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    started = stalling(server, "/slow", head=True, body=b"partial")
    provider = make_provider(timeout_ms=SERVER_REACHED_MS)
    error = await fetch_error(provider, server.url("/slow"))
    assert (error.code, error.message) == ("WEB_FETCH_TIMEOUT", "web fetch timed out")
    await closed(started)


async def test_the_backstop_deadline_before_headers_is_web_fetch_timeout(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    started = stalling(server, "/silent", head=False)
    error = await fetch_error(make_provider(timeout_ms=SERVER_REACHED_MS), server.url("/silent"))
    assert error.code == "WEB_FETCH_TIMEOUT"
    await closed(started)


async def test_a_caller_abort_mid_body_is_web_aborted_and_closes_the_stream(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    started = stalling(server, "/slow", head=True, body=b"partial")
    controller = AbortController()
    task = asyncio.create_task(fetch(make_provider(), server.url("/slow"), controller.signal))
    exchange = await started
    controller.abort()
    with pytest.raises(WebError) as caught:
        await task
    assert (caught.value.code, caught.value.message) == ("WEB_ABORTED", "web fetch aborted")
    await closed(exchange)


async def test_the_provider_reads_an_outer_deadline_as_an_abort_not_its_own_timeout(
    server: LocalServer, make_provider: MakeProvider
) -> None:
    started = stalling(server, "/slow", head=True, body=b"partial")
    outer = AbortController()
    clock = ManualScheduler()
    with deadline(outer.signal, 50, "TOOL_TIMEOUT", scheduler=clock) as budget:
        provider = make_provider(timeout_ms=60_000)
        fetching = asyncio.create_task(fetch(provider, server.url("/slow"), budget.signal))
        exchange = await started
        clock.fire()  # the outer deadline expires mid-body
        with pytest.raises(WebError) as caught:
            await fetching
    assert caught.value.code == "WEB_ABORTED"
    await closed(exchange)
