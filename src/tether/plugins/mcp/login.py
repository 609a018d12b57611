"""`tether mcp login SERVER`: authorize tether for an OAuth-protected HTTP server, once.

Owns `login`: listens on 127.0.0.1 (the entry's `oauth.callback_port`, else a port the kernel picks)
for the authorization server's redirect to `/callback`, starts a fresh login (the server's stored
tokens and dynamically registered client are dropped: the redirect URI is this login's; the scopes
it asked for, a step-up's included, are kept and asked again), connects with the SDK's OAuth
provider (`oauth.oauth_provider`: discovery, registration, PKCE, token exchange; the revision's
negotiation, `negotiate.py`, then `tools/list`, since a server may answer `server/discover` or
`initialize` without a token), and when the provider has the authorization URL, prints it and —
unless `browser` is False (headless: open it anywhere that can reach this machine's 127.0.0.1) —
opens the browser. The tokens are stored by the provider (`oauth.TokenFile`, 0600) and never
printed. The wait for the redirect is bounded (`wait_s`); a redirect carrying `error` ends the login
with it. Imports the `mcp` SDK: load it lazily.
"""

from __future__ import annotations

import asyncio
import contextlib
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import TextIO
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult

from .config import McpConfigError, ServerConfig
from .negotiate import negotiate
from .oauth import TokenFile, oauth_provider, token_path

__all__ = ["LoginFailed", "login"]

_PAGE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"tether: authorized. You can close this tab.\n"
)
_REFUSED = (
    b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close"
    b"\r\n\r\ntether: the authorization was refused.\n"
)


class LoginFailed(Exception):
    """The login did not complete; the message says why (one line)."""


async def login(
    name: str,
    config: ServerConfig,
    *,
    out: TextIO,
    browser: bool = True,
    wait_s: float = 300.0,
    home: Path | None = None,
    open_url: Callable[[str], object] = webbrowser.open,
) -> None:
    """Authorize tether for server `name` (an http entry); raises `LoginFailed`."""
    config = config.expanded()
    if config.transport != "http" or config.url is None:
        raise LoginFailed(f'server "{name}" is not an http server: nothing to log in to')
    if any(key.lower() == "authorization" for key in config.headers or {}):
        raise LoginFailed(f'server "{name}" sends a static Authorization header: no login needed')
    redirected: asyncio.Future[AuthorizationCodeResult] = asyncio.get_running_loop().create_future()

    async def on_callback(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await reader.readline()).decode("latin-1").split()
            target = urlsplit(line[1]) if len(line) >= 2 else None
            query = parse_qs(target.query) if target is not None else {}
            if target is None or target.path != "/callback" or redirected.done():
                writer.write(_REFUSED)
                return
            if "error" in query:
                said = _one(query, "error")
                redirected.set_exception(LoginFailed(f"the authorization server said: {said}"))
                writer.write(_REFUSED)
                return
            code = _one(query, "code")
            if not code:
                writer.write(_REFUSED)
                return
            redirected.set_result(
                AuthorizationCodeResult(
                    code=code, state=_one(query, "state"), iss=_one(query, "iss")
                )
            )
            writer.write(_PAGE)
        finally:
            with contextlib.suppress(OSError):
                await writer.drain()
                writer.close()

    port = config.oauth.callback_port if config.oauth is not None else 0
    try:
        listener = await asyncio.start_server(on_callback, "127.0.0.1", port)
    except OSError as exc:
        raise LoginFailed(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    bound = listener.sockets[0].getsockname()[1]
    redirect_uri = f"http://127.0.0.1:{bound}/callback"
    TokenFile(token_path(name, config.url, home)).fresh()  # a fresh login

    async def redirect(url: str) -> None:
        out.write(f"Authorize tether for {name} at:\n  {url}\n")
        out.flush()
        if browser:
            await asyncio.to_thread(open_url, url)

    async def callback() -> AuthorizationCodeResult:
        try:
            async with asyncio.timeout(wait_s):
                return await redirected
        except TimeoutError:
            raise LoginFailed(f"no authorization came back within {wait_s:g} s") from None

    provider = oauth_provider(
        name, config, redirect_uri=redirect_uri, redirect=redirect, callback=callback, home=home
    )
    try:
        async with (
            listener,
            httpx2.AsyncClient(headers=dict(config.headers or {}), auth=provider) as client,
            streamable_http_client(config.url, http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await _initialized(session, redirected, wait_s)
    except LoginFailed:
        raise
    except McpConfigError as exc:
        raise LoginFailed(str(exc)) from None
    except BaseException as exc:
        failure = _login_failure(exc)
        if failure is None:
            raise
        raise failure from None
    out.write(f"tether is authorized for {name}.\n")


async def _initialized(
    session: ClientSession, redirected: asyncio.Future[AuthorizationCodeResult], wait_s: float
) -> None:
    """The negotiation (`server/discover`, else `initialize`), unless the redirect failed first
    (then its error)."""
    # The probe's POST may be where the person authorizes: it is bounded by the login's wait.
    init: asyncio.Future[object] = asyncio.ensure_future(negotiate(session, probe_s=wait_s))
    came: asyncio.Future[object] = asyncio.ensure_future(_failed(redirected))
    try:
        await asyncio.wait({init, came}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        came.cancel()
        pending = not init.done()
        init.add_done_callback(_retrieved)
        if pending:
            init.cancel()
    failure = redirected.exception() if redirected.done() else None
    if pending and failure is not None:
        raise failure
    await init
    await session.list_tools()  # a server may answer the negotiation without a token


def _retrieved(task: asyncio.Future[object]) -> None:
    if not task.cancelled():
        task.exception()


async def _failed(redirected: asyncio.Future[AuthorizationCodeResult]) -> object:
    """Returns when the redirect came back with an error (never, otherwise)."""
    with contextlib.suppress(Exception):
        await asyncio.shield(redirected)
    if redirected.exception() is None:
        await asyncio.Event().wait()
    return None


def _login_failure(exc: BaseException) -> LoginFailed | None:
    if isinstance(exc, LoginFailed):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _login_failure(inner)
            if found is not None:
                return found
        return LoginFailed(f"{type(exc.exceptions[0]).__name__}: {exc.exceptions[0]}")
    if isinstance(exc, Exception):
        return LoginFailed(f"{type(exc).__name__}: {exc}")
    return None


def _one(query: dict[str, list[str]], key: str) -> str | None:
    values = query.get(key)
    return values[0] if values else None
