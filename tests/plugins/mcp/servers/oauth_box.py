"""An MCP server behind OAuth, with its own authorization server (the `mcp` SDK's auth helpers),
on 127.0.0.1, for the OAuth tests. Run as a subprocess.

Usage: `python oauth_box.py RECORD [CLIENT_ID CLIENT_SECRET]`. With a client id, that client is
pre-registered (confidential, `client_secret_post`, any loopback redirect URI, RFC 8252; it may
also be granted the scope `extra`, which no request needs).
Authorization is granted at once (the "browser" just follows the redirect). Events in RECORD, one
JSON line each: `start` (port), `register` (client id), `authorize` (client id, scopes, whether a
PKCE challenge came), `token` (grant, client id), `call` (the bearer's client id). Access tokens
last an hour; every token is bound to the `tools` scope, which every request needs.
"""

from __future__ import annotations

import json
import secrets
import socket
import sys
import time
from typing import Any

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl

RECORD = sys.argv[1]


def record(event: str, **fields: Any) -> None:
    with open(RECORD, "a", encoding="utf-8") as out:
        out.write(json.dumps({"event": event, "at": time.time(), **fields}) + "\n")


class LoopbackClient(OAuthClientInformationFull):
    """A pre-registered native client: any port on 127.0.0.1 is its redirect (RFC 8252 §7.3)."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        if redirect_uri is not None and redirect_uri.host == "127.0.0.1":
            return redirect_uri
        return super().validate_redirect_uri(redirect_uri)


class Provider:
    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.access: dict[str, AccessToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        record("register", client_id=client_info.client_id)
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        record(
            "authorize",
            client_id=client.client_id,
            scopes=params.scopes,
            pkce=bool(params.code_challenge),
        )
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["tools"],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], grant: str) -> OAuthToken:
        record("token", grant=grant, client_id=client_id)
        access, refresh = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=int(time.time()) + 3600
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        return OAuthToken(
            access_token=access, expires_in=3600, scope=" ".join(scopes), refresh_token=refresh
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(client.client_id, authorization_code.scopes, "authorization_code")

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]
        return self._issue(client.client_id, scopes or refresh_token.scopes, "refresh_token")

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: object) -> None:
        return None


def main() -> None:
    listening = socket.create_server(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    provider = Provider()
    if len(sys.argv) > 3:
        provider.clients[sys.argv[2]] = LoopbackClient(
            client_id=sys.argv[2],
            client_secret=sys.argv[3],
            token_endpoint_auth_method="client_secret_post",
            scope="tools extra",  # `extra`: a scope only a step-up asks for
        )
    server = MCPServer(
        "guarded",
        auth_server_provider=provider,  # type: ignore[arg-type]
        auth=AuthSettings(
            issuer_url=base,  # type: ignore[arg-type]
            resource_server_url=f"{base}/mcp",  # type: ignore[arg-type]
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["tools"], default_scopes=["tools"]
            ),
            required_scopes=["tools"],
            validate_token_resource=False,
        ),
    )

    @server.tool()
    def hello(ctx: Context) -> str:
        """Say hello to whoever holds the token."""
        record("call", tool="hello")
        return "hello"

    @server.tool()
    def forget() -> str:
        """Revoke every token (the next request is a 401 that only a new login can answer)."""
        provider.access.clear()
        provider.refresh.clear()
        return "forgotten"

    record("start", port=port)
    app = server.streamable_http_app()
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listening])


if __name__ == "__main__":
    main()
