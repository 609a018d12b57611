"""What every HTTP search provider shares: key and base URL handling, one JSON API call with the
abort and error mapping of spec §2.4, and the client lifecycle.

Owns: `HttpSearchProvider` (subclasses say how to build the request and read the payload), the
error texts — `<Label> search aborted` (`WEB_ABORTED`, also while reading the body), `<Label>
search request failed: <error>` (network), the API's own `error`/`message`/`detail` or `<Label>
API error (HTTP <status>)` (non-2xx, redirects included), `<Label> returned an unprocessable
response body: <error>` (not JSON, wrong shape, or over the size cap) — all `WEB_PROVIDER_ERROR`
except the abort. Does not own timeouts: the caller's signal (the tool's `TOOL_TIMEOUT` budget)
bounds the call, and an abort closes the HTTP request.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar, Final
from urllib.parse import urlsplit

from ...core.errors import error_message
from ...core.signals import AbortSignal
from .errors import WEB_ABORTED, WEB_PROVIDER_ERROR, WEB_PROVIDER_UNAVAILABLE, WebError

if TYPE_CHECKING:
    import httpx2  # imported where used: it costs ~100 ms at startup
    from pydantic import SecretStr  # a configured key (the configs validate it)

    from .vocabulary import WebSearchRequest, WebSearchResult

__all__ = ["HttpSearchProvider", "api_key", "clean_text"]

MAX_RESPONSE_BYTES: Final = 5_000_000


def api_key(configured: SecretStr | None, env: str) -> str:
    """The configured key, else `$<env>`, else ""."""
    if configured is not None:
        return configured.get_secret_value().strip()
    return os.environ.get(env, "").strip()


def clean_text(value: object) -> str | None:
    """A non-blank string, stripped; None for anything else."""
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _looks_http(text: str) -> bool:
    """An absolute http(s) URL with a host, checked without httpx2 (which costs ~100 ms to
    import, at startup, for every configured provider)."""
    try:
        parts = urlsplit(text)
        host = parts.hostname
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(host)


def _http_base(text: str) -> httpx2.URL | None:
    import httpx2

    try:
        url = httpx2.URL(text)
    except (httpx2.InvalidURL, ValueError, TypeError):
        return None
    return url if url.scheme in ("http", "https") and url.host else None


def _api_message(body: bytes) -> str | None:
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    for key in ("error", "message", "detail"):
        value = payload.get(key)
        if isinstance(value, dict):
            value = value.get("message") or value.get("detail") or value.get("error")
        if (text := clean_text(value)) is not None:
            return text
    return None


class HttpSearchProvider(ABC):
    """A search provider that calls one JSON HTTP API. Owns a connection pool; `aclose()` it."""

    label: ClassVar[str]  # "Exa", shown in messages
    key_env: ClassVar[str]  # "EXA_API_KEY"
    id: str

    def __init__(self, provider_id: str, key: str, base_url: str) -> None:
        self.id = provider_id
        self._key = key
        self._base_ok = _looks_http(base_url)
        self._base_url: httpx2.URL | None = None  # parsed on first use
        self._base_text = base_url
        self._client: httpx2.AsyncClient | None = None

    def available(self) -> bool:
        """A key is set and the base URL is an http(s) URL (no network)."""
        return bool(self._key) and self._base_ok

    def unavailable_reason(self) -> str | None:
        """How to make the provider available, or None when it is."""
        if not self._key:
            return f"set {self.key_env} or configure api_key"
        if not self._base_ok:
            return f"base_url {self._base_text!r} is not an http(s) URL"
        return None

    def endpoint(self, path: str) -> httpx2.URL:
        """`<base_url>/<path>` (the base URL's own path is kept)."""
        if self._base_url is None and self._base_ok:
            self._base_url = _http_base(self._base_text)
        base = self._base_url
        if base is None:
            raise WebError(f"{self.label} search provider is unavailable", WEB_PROVIDER_UNAVAILABLE)
        return base.copy_with(path=base.path.rstrip("/") + path)

    async def aclose(self) -> None:
        """Close the connection pool."""
        if self._client is not None:
            await self._client.aclose()

    @property
    def client(self) -> httpx2.AsyncClient:
        if self._client is None:
            from .client import new_client  # at the first search (issue 36)

            self._client = new_client()
        return self._client

    @property
    def key(self) -> str:
        return self._key

    @abstractmethod
    def build(self, request: WebSearchRequest) -> httpx2.Request:
        """The API request for one search (use `self.client.build_request`)."""

    @abstractmethod
    def parse(self, payload: object) -> WebSearchResult:
        """The normalized result; raise `ValidationError`/`ValueError` for a wrong shape."""

    async def search(self, request: WebSearchRequest, *, signal: AbortSignal) -> WebSearchResult:
        """Call the API. Raises `WebError` (see the module docstring)."""
        label = self.label
        if signal.aborted:
            raise WebError(f"{label} search aborted", WEB_ABORTED)
        if (reason := self.unavailable_reason()) is not None:
            raise WebError(
                f"{label} search provider is unavailable: {reason}", WEB_PROVIDER_UNAVAILABLE
            )
        try:
            async with signal.cancels():
                status, body = await self._exchange(self.build(request))
        except WebError:
            raise
        except Exception as error:
            if signal.aborted:
                raise WebError(f"{label} search aborted", WEB_ABORTED) from error
            raise WebError(
                f"{label} search request failed: {error_message(error)}", WEB_PROVIDER_ERROR
            ) from error
        if not 200 <= status < 300:
            message = _api_message(body) or f"{label} API error (HTTP {status})"
            raise WebError(message, WEB_PROVIDER_ERROR)
        try:
            return self.parse(json.loads(body))
        except ValueError as error:  # pydantic's ValidationError is one
            raise WebError(
                f"{label} returned an unprocessable response body: {_short(error)}",
                WEB_PROVIDER_ERROR,
            ) from error

    async def _exchange(self, api_request: httpx2.Request) -> tuple[int, bytes]:
        response = await self.client.send(api_request, stream=True)
        try:
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise WebError(
                        f"{self.label} returned an unprocessable response body: larger than "
                        f"{MAX_RESPONSE_BYTES} bytes",
                        WEB_PROVIDER_ERROR,
                    )
                chunks.append(chunk)
            return response.status_code, b"".join(chunks)
        finally:
            await response.aclose()


def _short(error: Exception) -> str:
    from pydantic import ValidationError  # imported by `parse` already: the response models

    if isinstance(error, ValidationError):
        first = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        return f"{where}: {first['msg']}"
    return error_message(error)
