"""The web error taxonomy of spec §2.2: the `WEB_*` codes and one coded `WebError`.

Owns: the codes and the class. Does not own the messages or when they are raised: each text sits
next to the check that raises it (service.py, fetch_http.py, urls.py, addresses.py, decoding.py,
the search providers). Consumers must tolerate codes not listed here: a third-party provider may
raise its own.

    HarnessError
     └── WebError    .code (a WEB_* code); .name == "WebError"
"""

from __future__ import annotations

from typing import Final

from ...core.errors import HarnessError

__all__ = [
    "WEB_ABORTED",
    "WEB_BLOCKED_URL",
    "WEB_DUPLICATE_PROVIDER",
    "WEB_FETCH_TIMEOUT",
    "WEB_FETCH_TOO_LARGE",
    "WEB_INVALID_URL",
    "WEB_PROVIDER_AMBIGUOUS",
    "WEB_PROVIDER_CONFIGURED_MISSING",
    "WEB_PROVIDER_CONFIGURED_UNAVAILABLE",
    "WEB_PROVIDER_ERROR",
    "WEB_PROVIDER_UNAVAILABLE",
    "WEB_REDIRECT_BLOCKED",
    "WEB_UNSUPPORTED_CONTENT_TYPE",
    "WebError",
]

WEB_DUPLICATE_PROVIDER: Final = "WEB_DUPLICATE_PROVIDER"
WEB_PROVIDER_CONFIGURED_MISSING: Final = "WEB_PROVIDER_CONFIGURED_MISSING"
WEB_PROVIDER_CONFIGURED_UNAVAILABLE: Final = "WEB_PROVIDER_CONFIGURED_UNAVAILABLE"
WEB_PROVIDER_UNAVAILABLE: Final = "WEB_PROVIDER_UNAVAILABLE"
WEB_PROVIDER_AMBIGUOUS: Final = "WEB_PROVIDER_AMBIGUOUS"
WEB_ABORTED: Final = "WEB_ABORTED"
WEB_PROVIDER_ERROR: Final = "WEB_PROVIDER_ERROR"
WEB_INVALID_URL: Final = "WEB_INVALID_URL"
WEB_BLOCKED_URL: Final = "WEB_BLOCKED_URL"
WEB_REDIRECT_BLOCKED: Final = "WEB_REDIRECT_BLOCKED"
WEB_FETCH_TOO_LARGE: Final = "WEB_FETCH_TOO_LARGE"
WEB_FETCH_TIMEOUT: Final = "WEB_FETCH_TIMEOUT"
WEB_UNSUPPORTED_CONTENT_TYPE: Final = "WEB_UNSUPPORTED_CONTENT_TYPE"


class WebError(HarnessError):
    """A web seam or provider failure, e.g. `WebError("web fetch timed out", WEB_FETCH_TIMEOUT)`.

    A tool result shows it as `Error: <message>` with `info = ("WebError", code)`.
    """
