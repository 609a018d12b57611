"""URL hygiene for the fetch provider (spec §2.3 step 3), applied to the first URL and every hop.

Owns: parsing a user- or server-supplied URL into an absolute `httpx2.URL`, with the exact
`WEB_INVALID_URL` / `WEB_BLOCKED_URL` texts (too long, unparsable, not http(s), credentials), the
origin of a URL (scheme, host, effective port) and resolving a redirect `Location`. Does not own
address policy (addresses.py) or the redirect loop (fetch_http.py).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Final

from .errors import WEB_BLOCKED_URL, WEB_INVALID_URL, WebError

if TYPE_CHECKING:
    import httpx2  # imported where used: it costs ~100 ms at startup

__all__ = ["Origin", "effective_port", "origin", "resolve_location", "validate_url"]

Origin = tuple[str, str, int]

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


@functools.cache
def _hostname() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z0-9_.-]+\Z")


def _invalid(text: str) -> WebError:
    return WebError(f"invalid URL: {text}", WEB_INVALID_URL)


def validate_url(text: str, max_length: int) -> httpx2.URL:
    """Parse `text` as an absolute http(s) URL without credentials. Raises `WebError`."""
    import httpx2

    if len(text) > max_length:
        raise WebError(f"URL exceeds the maximum length of {max_length}", WEB_INVALID_URL)
    try:
        url = httpx2.URL(text.strip())
    except (httpx2.InvalidURL, ValueError, TypeError):
        raise _invalid(text) from None
    scheme = url.scheme
    if not scheme:
        raise _invalid(text)
    if scheme not in _DEFAULT_PORTS:
        raise WebError(
            f'unsupported URL scheme "{scheme}:" (only http and https are allowed)',
            WEB_INVALID_URL,
        )
    host = url.raw_host.decode("ascii", "replace")
    if not host or not (":" in host or _hostname().match(host)):
        raise _invalid(text)
    port = url.port
    if port is not None and not 0 < port < 65536:
        raise _invalid(text)
    if url.userinfo:
        raise WebError("credentials in URLs are not allowed", WEB_BLOCKED_URL)
    return url


def effective_port(url: httpx2.URL) -> int:
    """The port a connection to `url` uses (80/443 when the URL names none)."""
    return url.port if url.port is not None else _DEFAULT_PORTS[url.scheme]


def origin(url: httpx2.URL) -> Origin:
    """`(scheme, host, port)` with the default port made explicit."""
    return (url.scheme, url.raw_host.decode("ascii", "replace"), effective_port(url))


def resolve_location(current: httpx2.URL, location: str, max_length: int) -> httpx2.URL:
    """The absolute URL a `Location` header points at, validated like any requested URL."""
    import httpx2

    try:
        target = current.join(location.strip())
    except (httpx2.InvalidURL, ValueError, TypeError):
        raise _invalid(location) from None
    return validate_url(str(target), max_length)
