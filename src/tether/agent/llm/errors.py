"""`LlmError` and the failure codes of the model seam (spec §9.7).

Owns: the one exception type adapters raise and the service converts into a terminal
`Finish(kind="aborted"|"error", failure=...)`, and the stable codes:

    ABORTED                   the caller's signal aborted the request (never retried)
    LLM_STREAM_IDLE_TIMEOUT   no bytes arrived for `stream_idle_timeout_ms` (retried)
    TIMEOUT                   a request-level deadline fired (retried)
    CONNECT                   the connection was refused or the host did not resolve (not
                              retried by default: a wrong base URL fails at once)
    TRANSPORT                 the request or the stream failed otherwise (retried)
    SERVER                    HTTP >= 500 (retried)
    RATE_LIMIT                HTTP 429 (retried)
    EMPTY_RESPONSE            a `stop` finish with no content (retried)
    AUTH                      HTTP 401/403: the key is wrong (the message names its env var)
    MISSING_CREDENTIAL        no key configured for a route that needs one (before any I/O)
    INVALID_CREDENTIAL        the key cannot be sent in an HTTP header (blank, non-ASCII)
    QUOTA                     the account is out of balance/quota (any status)
    CONTEXT_WINDOW_EXCEEDED   HTTP 400 saying the prompt is too long
    INVALID_REQUEST           other HTTP 400, and 413
    HTTP_<status>             any other non-2xx status
    STREAM_CLOSED             the SSE stream ended without `[DONE]`
    MALFORMED_RESPONSE        an SSE payload that is not JSON
    PROVIDER_ERROR            the provider sent an `{"error": ...}` payload inside the stream
    UNSUPPORTED_CONTENT       a message block the wire format cannot carry (images)
    UNKNOWN                   a foreign exception from a custom transport

    HarnessError
     └── LlmError             .message .code .status .retry_after_ms .request_id; .failure
"""

from __future__ import annotations

from typing import Final

from ...core.errors import HarnessError
from ..messages import AssistantMessage, LlmFailure

__all__ = ["ABORTED", "LLM_CONNECT", "LLM_STREAM_IDLE_TIMEOUT", "RETRYABLE_CODES", "LlmError"]

ABORTED: Final = "ABORTED"
LLM_STREAM_IDLE_TIMEOUT: Final = "LLM_STREAM_IDLE_TIMEOUT"
LLM_CONNECT: Final = "CONNECT"
"""The connection could not be made (refused, DNS failure): not retried by default, so a wrong
base URL fails at once with one line naming it."""
RETRYABLE_CODES: Final = (
    "EMPTY_RESPONSE",
    LLM_STREAM_IDLE_TIMEOUT,
    "RATE_LIMIT",
    "SERVER",
    "TIMEOUT",
    "TRANSPORT",
)
"""The codes the `normal` retry policy retries (spec §9.9, plus the idle timeout)."""


class LlmError(HarnessError):
    """A model request failed; `code` says how (see the module docstring).

    `partial` is set by `Llm.generate` when the failed stream had already produced visible
    text or reasoning (the spec's "interrupted blocks"), so the loop can log what was seen.
    Raises `ValueError("LlmError code must be a non-empty string")` for an empty code.
    """

    def __init__(
        self,
        message: str,
        code: str,
        *,
        status: int | None = None,
        retry_after_ms: float | None = None,
        request_id: str | None = None,
        cause: BaseException | None = None,
    ) -> None:
        if not isinstance(code, str) or not code:
            raise ValueError("LlmError code must be a non-empty string")
        super().__init__(message, code, cause=cause)
        self.status = status
        self.retry_after_ms = retry_after_ms
        self.request_id = request_id
        self.partial: AssistantMessage | None = None

    @property
    def failure(self) -> LlmFailure:
        """The failure facts as a value (what a `Finish` chunk carries)."""
        return LlmFailure(
            self.message, self.code, self.status, self.retry_after_ms, self.request_id
        )

    @classmethod
    def from_failure(cls, failure: LlmFailure) -> LlmError:
        """The error for a failure value (e.g. the one in an error `Finish`)."""
        return cls(
            failure.message,
            failure.code,
            status=failure.status,
            retry_after_ms=failure.retry_after_ms,
            request_id=failure.request_id,
        )
