"""OAuth for Streamable HTTP servers: the `mcp` SDK's `OAuthClientProvider`, with tether's token
store and tether's answer to "a person must authorize this".

Owns `TokenFile` (the SDK's `TokenStorage`: one JSON file per server under
`$TETHER_HOME/mcp-oauth/`, mode 0600 in a 0700 directory, holding the tokens with their absolute
expiry, the client registration, and every scope the server asked for so far), `oauth_provider` (the
provider for one server) and `LoginNeeded`; the `oauth` entry of a server is `config.OAuthSettings`.
The SDK does the protocol: protected-resource metadata discovery (the `WWW-Authenticate`
`resource_metadata`, then the well-known paths), authorization server metadata (RFC 8414 and OpenID
paths, with the legacy fallbacks), dynamic client registration unless a client is pre-registered
(`oauth.client_id`/`client_secret` in the entry, used as is), PKCE (S256), the token endpoint auth
method the registration names (`client_secret_basic`, `client_secret_post`, `none`), scopes from
`WWW-Authenticate` or the metadata, step-up on `insufficient_scope`, a URL-based client id (CIMD)
where the entry names one and the authorization server supports it, and refreshing an expired token
before a request. The scopes of every authorization are remembered in the file
(`_Provider._perform_authorization`), so a step-up an unattended session could not complete is asked
for by the next `tether mcp login`.

Where a person must act (no token, or one that cannot be refreshed), the connection's provider
raises `LoginNeeded` (from the redirect, or before storing a client it registered: the login
registers its own, with its own redirect URI): the server is `failed` with "run `tether mcp login
NAME`". `tether mcp login` (`login.py`) builds the provider with a browser and a callback on
127.0.0.1 instead. Tokens never reach a log line. Imports the `mcp` SDK: load it lazily.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import union_scopes
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from ... import __version__
from ...kernel import tether_home
from .config import ServerConfig

__all__ = ["LoginNeeded", "TokenFile", "oauth_provider", "token_path"]

_EXPIRED_SKEW_S = 30.0
"""A token this close to its expiry counts as expired (it is refreshed first)."""


class LoginNeeded(Exception):
    """A person must authorize tether for this server: `tether mcp login NAME`."""

    def __init__(self, server: str) -> None:
        super().__init__(f'server "{server}" needs authorization: run `tether mcp login {server}`')


def token_path(name: str, url: str, home: Path | None = None) -> Path:
    """Where server `name` at `url` keeps its tokens (the URL is part of the key: a server
    renamed or moved is a new login)."""
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]
    return (home or tether_home()) / "mcp-oauth" / f"{name}-{digest}.json"


class TokenFile:
    """The SDK's `TokenStorage` over one file (mode 0600; the directory 0700)."""

    def __init__(
        self,
        path: Path,
        preregistered: OAuthClientInformationFull | None = None,
        *,
        login_needed: Callable[[], LoginNeeded] | None = None,
    ) -> None:
        self.path = path
        self._preregistered = preregistered
        self._login_needed = login_needed

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.path.parent, 0o700)
        temporary = self.path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out)
        os.chmod(temporary, 0o600)
        os.replace(temporary, self.path)

    def expires_at(self) -> float | None:
        """When the stored access token expires (seconds since the epoch), if it says."""
        value = self._read().get("expires_at")
        return float(value) - _EXPIRED_SKEW_S if isinstance(value, int | float) else None

    def wanted_scope(self) -> str | None:
        """Every scope this server asked for so far (a step-up included), space-separated."""
        value = self._read().get("scope")
        return value if isinstance(value, str) and value else None

    def want_scope(self, scope: str | None) -> None:
        """Remember `scope` (added to what was asked before) for the next authorization: a
        step-up that an unattended session could not complete is asked by the next login."""
        wanted = union_scopes(self.wanted_scope(), scope)
        if wanted and wanted != self.wanted_scope():
            data = self._read()
            data["scope"] = wanted
            self._write(data)

    def fresh(self) -> None:
        """Forget the tokens and the registered client (a new login), keep the scopes asked."""
        wanted = self.wanted_scope()
        self.path.unlink(missing_ok=True)
        if wanted is not None:
            self._write({"scope": wanted})

    async def get_tokens(self) -> OAuthToken | None:
        tokens = self._read().get("tokens")
        return None if tokens is None else OAuthToken.model_validate(tokens)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        data = self._read()
        data["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        data["expires_at"] = None if tokens.expires_in is None else time.time() + tokens.expires_in
        self._write(data)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self._preregistered is not None:
            return self._preregistered
        client = self._read().get("client")
        return None if client is None else OAuthClientInformationFull.model_validate(client)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self._login_needed is not None:
            raise self._login_needed()
        data = self._read()
        data["client"] = client_info.model_dump(mode="json", exclude_none=True)
        self._write(data)


class _Provider(OAuthClientProvider):
    """The SDK's provider, knowing when a stored token expires (the SDK's own loader only
    learns that from a fresh token response, so a token from an earlier run would be sent
    expired instead of refreshed)."""

    def __init__(self, *args: Any, store: TokenFile, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._store = store

    async def _initialize(self) -> None:
        await super()._initialize()
        self.context.token_expiry_time = self._store.expires_at()

    async def _perform_authorization(self) -> httpx2.Request:
        # The scopes of this authorization are also those an earlier session was challenged for
        # (a `403 insufficient_scope` it could not answer unattended); remembered before the
        # redirect, which is where an unattended provider stops.
        scope = union_scopes(self.context.client_metadata.scope, self._store.wanted_scope())
        self.context.client_metadata.scope = scope
        self._store.want_scope(scope)
        return await super()._perform_authorization()


def oauth_provider(
    name: str,
    config: ServerConfig,
    *,
    redirect_uri: str,
    redirect: Callable[[str], Awaitable[None]],
    callback: Callable[[], Awaitable[AuthorizationCodeResult]],
    home: Path | None = None,
    login_needed: Callable[[], LoginNeeded] | None = None,
) -> OAuthClientProvider:
    """The provider for server `name` (an http entry with a `url`). With `login_needed`, no
    client it registers is kept (the error it returns is raised instead: only a login
    registers)."""
    assert config.url is not None
    settings = config.oauth
    preregistered = None
    if settings is not None and settings.client_id is not None:
        method = settings.token_endpoint_auth_method or (
            "client_secret_basic" if settings.client_secret else "none"
        )
        preregistered = OAuthClientInformationFull(
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            redirect_uris=[redirect_uri],  # type: ignore[list-item]
            token_endpoint_auth_method=method,
            scope=settings.scope,
        )
    store = TokenFile(token_path(name, config.url, home), preregistered, login_needed=login_needed)
    metadata = OAuthClientMetadata(
        client_name=f"tether {__version__}",
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        scope=None if settings is None else settings.scope,
        token_endpoint_auth_method=None
        if settings is None
        else settings.token_endpoint_auth_method,
    )
    return _Provider(
        server_url=config.url,
        client_metadata_url=None if settings is None else settings.client_metadata_url,
        client_metadata=metadata,
        storage=store,
        redirect_handler=redirect,
        callback_handler=callback,
        store=store,
    )
