"""Fixtures for the web tests: a live HTTP server on 127.0.0.1, and contexts with the web plugins.

Every server these tests talk to is started here, on 127.0.0.1; nothing resolves a real host name
(`localhost` comes from the hosts file; other names go through an injected resolver).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

import pytest

from tether.core.signals import AbortController, AbortSignal
from tether.kernel import Context
from tether.kernel.config_models import make_config
from tether.plugins import timeout_policy
from tether.plugins.web import fetch_http
from tether.plugins.web import tools as tool_web
from tether.plugins.web.addresses import Resolver
from tether.plugins.web.service import WebService
from tether.tools import ToolExecutionInput, ToolExecutionResult, ToolFailure, ToolRuntime

from ...patience import PATIENCE_S
from .servers import Exchange, LocalServer

SERVER_REACHED_MS = 2000
"""A budget a test lets expire only after its request reached the test's server: on a loaded
machine the client and the server (one event loop) may be starved longer than a few 100 ms."""


@pytest.fixture
async def server() -> AsyncIterator[LocalServer]:
    async with LocalServer() as live:
        yield live


@pytest.fixture
async def ctx() -> AsyncIterator[Context]:
    root = Context()
    yield root
    await root.dispose()


MountWeb = Callable[..., Awaitable[Context]]


@pytest.fixture
def mount_web(ctx: Context, server: LocalServer) -> MountWeb:
    """`await mount_web(fetch={...}, tools={...}, policy=True)`: tools, (policy), web, the http
    fetch provider allowed to reach `server` only, and tool-web."""

    async def mount(
        *,
        fetch: Mapping[str, object] | None = None,
        tools: Mapping[str, object] | None = None,
        policy: bool = True,
    ) -> Context:
        await ctx.plugin(ToolRuntime)
        if policy:
            await ctx.plugin(timeout_policy)
        await ctx.plugin(WebService)
        fetch_config = {"private_address_allowlist": [f"127.0.0.1:{server.port}"], **(fetch or {})}
        await ctx.plugin(fetch_http, fetch_config)
        await ctx.plugin(tool_web, dict(tools or {}))
        return ctx

    return mount


async def call(
    ctx: Context, name: str, arguments: object, signal: AbortSignal | None = None
) -> ToolExecutionResult:
    """Execute one tool call with a fresh signal unless one is given."""
    result: ToolExecutionResult = await ctx.tools.execute(
        ToolExecutionInput(
            call_id="c1",
            name=name,
            arguments=arguments,
            signal=signal if signal is not None else AbortController().signal,
        )
    )
    return result


def code_of(result: ToolExecutionResult) -> str | None:
    assert isinstance(result, ToolFailure), result
    return None if result.error.info is None else result.error.info.code


def text_of(result: ToolExecutionResult) -> str:
    (block,) = result.content
    text = block["text"]
    assert isinstance(text, str)
    return text


def stalling(
    server: LocalServer, path: str, *, head: bool, body: bytes = b""
) -> asyncio.Future[Exchange]:
    """Route `path` to a handler that (optionally) sends headers and `body`, then waits for the
    client to close. The future resolves with the exchange once the handler reached that point."""
    reached: asyncio.Future[Exchange] = asyncio.get_running_loop().create_future()

    @server.route(path)
    async def handler(exchange: Exchange) -> None:
        if head:
            await exchange.send_head(
                200, {"content-type": "text/plain", "transfer-encoding": "chunked"}
            )
            if body:
                await exchange.write_chunk(body)
        if not reached.done():
            reached.set_result(exchange)
        await exchange.until_closed()

    return reached


async def closed(exchange: Exchange | Awaitable[Exchange]) -> None:
    """Wait (bounded) until the server saw the request, then the client close the connection."""
    async with asyncio.timeout(PATIENCE_S):
        if not isinstance(exchange, Exchange):
            exchange = await exchange
        await exchange.closed.wait()


def respond_with(
    server: LocalServer, path: str, status: int, headers: dict[str, str], body: bytes = b""
) -> None:
    @server.route(path)
    async def handler(exchange: Exchange) -> None:
        await exchange.respond(status, headers, body)


MakeProvider = Callable[..., fetch_http.HttpFetchProvider]


@pytest.fixture
async def make_provider(server: LocalServer) -> AsyncIterator[MakeProvider]:
    """`make_provider(**config)`: an `http` fetch provider allowed to reach `server` only (unless
    the config says otherwise); closed at teardown."""
    made: list[fetch_http.HttpFetchProvider] = []

    def make(resolver: Resolver | None = None, **config: object) -> fetch_http.HttpFetchProvider:
        settings = {"private_address_allowlist": [f"127.0.0.1:{server.port}"], **config}
        validated = make_config(fetch_http.name, fetch_http.HttpFetchConfig, settings)
        provider = (
            fetch_http.HttpFetchProvider(validated)
            if resolver is None
            else fetch_http.HttpFetchProvider(validated, resolver=resolver)
        )
        made.append(provider)
        return provider

    yield make
    for provider in made:
        await provider.aclose()
