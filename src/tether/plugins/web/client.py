"""The httpx2 client every web provider uses, configured for tether's cancellation model.

Owns: one way to build a provider's `AsyncClient` — no httpx timeouts (timing belongs to the
caller's signal and the provider's own `deadline`), no automatic redirects (the fetch provider
follows them itself; search APIs treat them as errors), no proxies or certificates from the
environment (a proxy would resolve names itself and defeat the fetch provider's address checks),
and one TLS context shared by all clients (building one costs tens of milliseconds).
"""

from __future__ import annotations

import functools
import ssl
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx2  # imported where used: it costs ~100 ms at startup


__all__ = ["new_client"]


@functools.cache
def _tls() -> ssl.SSLContext:
    import httpx2

    return httpx2.create_ssl_context(trust_env=False)


def new_client() -> httpx2.AsyncClient:
    """A fresh connection pool; the owner closes it with `aclose()`."""
    import httpx2

    return httpx2.AsyncClient(verify=_tls(), timeout=None, trust_env=False, follow_redirects=False)
