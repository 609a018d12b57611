"""The OpenAI-compatible adapter: streaming chat completions over one `httpx2.AsyncClient`.

Owns: the HTTP exchange (one `POST {base_url}/chat/completions` per request, no retries here:
retrying is the `RetryPolicy`'s job), SSE reading with the idle watchdog, closing the HTTP stream
on abort, idle timeout or early exit, and translating every failure into an `LlmError`. The wire
format itself lives in `tether.agent.llm.wire`; httpx2 is imported on first use, with its default
network backend (an asyncio-native one would import nothing less: httpcore2's pool itself runs on
anyio under asyncio; see bench/http_backend.py).

Why not the `openai` SDK: one streamed POST is all this adapter sends, and the SDK costs a
quarter of a second to import (its typed models, and aiohttp), paid before a `tether run`'s
first request (issue 27 §1). A plain-HTTP route (`http://127.0.0.1:8000/v1`, a local vLLM or
Ollama) builds no certificate store: its TLS context trusts nothing, so it can never verify
anything (no redirects are followed; an `https://` route gets the default verified context).

Cancellation design
-------------------
Contract: when the caller's signal aborts, the pending read is interrupted, the HTTP response is
closed (the server sees the connection drop) and `LlmError(code="ABORTED")` is raised. When no
byte arrives for `stream_idle_timeout_ms` while a read is outstanding, the same happens with
`LLM_STREAM_IDLE_TIMEOUT`. Mechanism: `idle_watchdog(signal, idle_ms, LLM_STREAM_IDLE_TIMEOUT)`
arms its timer only while one read is outstanding (consumer think-time between chunks is not
counted), and each read runs inside `async with watchdog.signal.cancels():`, which turns the abort
into a task cancellation at that await only — never across a `yield`, so a consumer is never
cancelled by us. The response is closed in `finally`. Classification order: watchdog expiry, then
caller abort, then the error itself (spec §9.8). Residual window: an abort that lands after a read
completed is seen before the next read, so at most one already-received chunk is still yielded.
After `[DONE]` the rest of the body is drained for at most 100 ms so an HTTP/1.1 connection can go
back to the pool; an early exit closes the connection instead.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import math
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable
from typing import TYPE_CHECKING, Final, Generic, TypeVar, cast

from ...core.json import JsonValue
from ...core.signals import AbortSignal
from ...core.timeout import IdleWatchdog, deadline, format_ms, idle_watchdog, timeout_of
from ..messages import StreamChunk
from .config import LlmRoute
from .errors import ABORTED, LLM_CONNECT, LLM_STREAM_IDLE_TIMEOUT, LlmError
from .sse import SseDecoder
from .transport import LlmRequest
from .wire import ChunkTranslator, build_body, error_text, is_context_overflow, is_quota

if TYPE_CHECKING:
    import ssl

    import httpx2

__all__ = ["OpenAICompatibleTransport", "check_credential"]

T = TypeVar("T")

_DRAIN_MS: Final = 100


class _Once(Generic[T]):
    """An async iterator whose one `__anext__` is a given awaitable (for `watchdog.next`)."""

    __slots__ = ("_awaitable",)

    def __init__(self, awaitable: Awaitable[T]) -> None:
        self._awaitable = awaitable

    def __aiter__(self) -> _Once[T]:
        return self

    def __anext__(self) -> Awaitable[T]:
        return self._awaitable


def check_credential(route: LlmRoute) -> str | None:
    """The API key to send, checked before any I/O (spec §9.7 key checks).

    Raises LlmError `MISSING_CREDENTIAL` (none, and the route needs one) or `INVALID_CREDENTIAL`
    (blank, or characters an HTTP header cannot carry). The key never appears in a message.
    """
    ref = route.api_key_ref
    if route.api_key is None:
        if not route.key_required:
            return None
        if not route.chosen:
            raise LlmError(
                "llm: no model is configured; export DEEPSEEK_API_KEY (DeepSeek), "
                "OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL for any OpenAI-compatible server "
                "(vLLM, Ollama, LM Studio; OPENAI_MODEL names the model, OPENAI_API_KEY if it "
                "needs one), or configure the llm plugin in tether.yml",
                "MISSING_CREDENTIAL",
            )
        raise LlmError(
            f'llm: no API key for provider "{route.provider}"; export {ref} in the launching'
            f" environment (or set api_key_env in the llm plugin config)",
            "MISSING_CREDENTIAL",
        )
    key = route.api_key.strip()
    if not key:
        raise LlmError(
            f"llm: the API key resolved from {ref} is blank; set {ref} to the raw key",
            "INVALID_CREDENTIAL",
        )
    if any(not 0x21 <= ord(ch) <= 0x7E for ch in key):
        raise LlmError(
            f"llm: the API key resolved from {ref} contains characters no HTTP header can carry;"
            f" set {ref} to the raw key alone",
            "INVALID_CREDENTIAL",
        )
    return key


class _StatusError(Exception):
    """The server answered the POST with an HTTP error status (its body already read)."""

    def __init__(self, status: int, body: object, headers: httpx2.Headers) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body  # the JSON body when it parses, else its text
        self.headers = headers


class OpenAICompatibleTransport:
    """An `LlmTransport` for any OpenAI-compatible `/chat/completions` endpoint (DeepSeek too)."""

    def __init__(self, route: LlmRoute) -> None:
        self._route = route
        self._url = route.base_url.rstrip("/") + "/chat/completions"
        self._client: httpx2.AsyncClient | None = None
        self._closed = False

    @property
    def route(self) -> LlmRoute:
        return self._route

    def _http(self) -> httpx2.AsyncClient:
        if self._closed:
            raise LlmError("llm transport is closed", "TRANSPORT")
        if self._client is None:
            import httpx2

            connect = self._route.connect_timeout_ms / 1000
            self._client = httpx2.AsyncClient(
                timeout=httpx2.Timeout(connect=connect, read=None, write=connect, pool=connect),
                verify=_tls_context(self._url),
                follow_redirects=False,
            )
        return self._client

    async def aclose(self) -> None:
        """Close the connection pool. Idempotent."""
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def stream(
        self, request: LlmRequest, *, signal: AbortSignal
    ) -> AsyncGenerator[StreamChunk, None]:
        """Stream one response; raises LlmError (see the module docstring)."""
        route = self._route
        key = check_credential(route)
        body = build_body(request, route)
        client = self._http()
        headers = {
            "accept": "text/event-stream",
            "content-type": "application/json",
            "user-agent": _user_agent(),
            **route.headers,
        }
        if key is not None:
            headers["authorization"] = f"Bearer {key}"
        if request.session_id:
            headers["x-tether-session-id"] = request.session_id
        watchdog = idle_watchdog(signal, route.stream_idle_timeout_ms, LLM_STREAM_IDLE_TIMEOUT)
        response: httpx2.Response | None = None
        reader: AsyncIterator[bytes] | None = None
        try:
            self._raise_if_aborted(watchdog, signal)
            post = _post(client, self._url, body, headers)
            response = await self._await(watchdog, signal, _Once(post), True)
            decoder = SseDecoder()
            translator = ChunkTranslator()
            reader = response.aiter_bytes()
            done = False
            while not done:
                self._raise_if_aborted(watchdog, signal)
                try:
                    data = await self._await(watchdog, signal, reader, False)
                except StopAsyncIteration:
                    break
                for event in decoder.feed(data):
                    if event.data == "[DONE]":
                        done = True
                        break
                    for chunk in translator.payload(_parse(event.data)):
                        yield chunk
            if not done:
                raise LlmError("SSE stream ended without [DONE]", "STREAM_CLOSED")
            await _drain(reader, signal)
            for chunk in translator.done():
                yield chunk
        finally:
            watchdog.dispose()
            if reader is not None:
                await _close(reader)
            if response is not None:
                await response.aclose()

    def _raise_if_aborted(self, watchdog: IdleWatchdog, signal: AbortSignal) -> None:
        if watchdog.signal.aborted:
            raise self._aborted(watchdog, signal)

    def _aborted(self, watchdog: IdleWatchdog, signal: AbortSignal) -> LlmError:
        label = self._route.label
        expired = timeout_of(watchdog.signal, LLM_STREAM_IDLE_TIMEOUT)
        if expired is not None and expired is not signal.reason:  # our watchdog fired first
            return LlmError(
                f"{label} stream idle timeout after {format_ms(expired.timeout_ms)}ms"
                " (no data from the server; raise stream_idle_timeout_ms in the llm plugin"
                " config if the model is just slow)",
                LLM_STREAM_IDLE_TIMEOUT,
            )
        return LlmError(f"{label} request aborted by caller", ABORTED)

    async def _await(
        self,
        watchdog: IdleWatchdog,
        signal: AbortSignal,
        source: AsyncIterator[T],
        is_request: bool,
    ) -> T:
        try:
            async with watchdog.signal.cancels():
                return await watchdog.next(source)
        except (StopAsyncIteration, LlmError):
            raise
        except Exception as error:
            if watchdog.signal.aborted:
                raise self._aborted(watchdog, signal) from error
            raise self._translate(error, is_request) from error

    def _translate(self, error: Exception, is_request: bool) -> LlmError:
        route = self._route
        if isinstance(error, _StatusError):
            return _status_error(route, error)
        detail = str(error.__cause__ or error) or type(error).__name__
        if is_request and _connect_failure(error):
            return LlmError(
                f"cannot connect to {route.base_url} ({detail}); is the server running, and is"
                f" {route.base_url_ref} right?",
                LLM_CONNECT,
                cause=error,
            )
        phase = f"request to {route.base_url}" if is_request else f"stream from {route.base_url}"
        return LlmError(f"{route.label} {phase} failed: {detail}", "TRANSPORT", cause=error)


async def _post(
    client: httpx2.AsyncClient, url: str, body: JsonValue, headers: dict[str, str]
) -> httpx2.Response:
    """POST the request and return the streaming response; an error status reads its body and
    raises `_StatusError` (the response closed)."""
    payload = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    request = client.build_request("POST", url, content=payload.encode(), headers=headers)
    response = await client.send(request, stream=True)
    if response.status_code < 400:
        return response
    try:
        raw = await response.aread()
    finally:
        await response.aclose()
    try:
        parsed: object = json.loads(raw)
    except ValueError:
        parsed = raw.decode(errors="replace")
    raise _StatusError(response.status_code, parsed, response.headers)


def _tls_context(url: str) -> ssl.SSLContext | bool:
    """Default verification for an `https://` route; for a plain-HTTP one a context with no
    trusted certificates (loading the store costs ~20 ms; this one would refuse any peer)."""
    if url.lower().startswith("https://"):
        return True
    import ssl

    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies, and trusts no one


def _user_agent() -> str:
    from ... import __version__

    return f"tether/{__version__}"


def _connect_failure(error: BaseException) -> bool:
    """Whether the connection itself could not be made (refused, unresolvable host, no route):
    `httpx2.ConnectError` anywhere in the cause chain. A connect timeout is not one."""
    import httpx2

    seen: BaseException | None = error
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, httpx2.ConnectError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


async def _drain(reader: AsyncIterator[bytes], signal: AbortSignal) -> None:
    """Read what follows `[DONE]` (the body's end), briefly, so HTTP/1.1 can reuse the
    connection. Bounded by `_DRAIN_MS`; cleanup never turns a complete response into an error."""
    with deadline(signal, _DRAIN_MS, "LLM_STREAM_DRAIN") as bound:
        try:
            async with bound.signal.cancels():
                async for _ in reader:
                    pass
        except Exception:
            pass


async def _close(reader: AsyncIterator[bytes]) -> None:
    close = getattr(reader, "aclose", None)
    if close is not None:
        with contextlib.suppress(Exception):
            await close()


def _parse(data: str) -> JsonValue:
    try:
        return cast(JsonValue, json.loads(data))
    except ValueError:
        raise LlmError(f"malformed SSE payload: {data[:120]}", "MALFORMED_RESPONSE") from None


def _status_error(route: LlmRoute, err: _StatusError) -> LlmError:
    status = err.status
    body = err.body
    provider_message, text = error_text(body.get("error", body) if isinstance(body, dict) else None)
    shown = f"{route.label} error (HTTP {status})"
    if provider_message:
        shown = f"{shown}: {provider_message}"
    code, hint = _classify(route, status, text)
    headers = err.headers
    request_id = headers.get("x-request-id") or headers.get("x-deepseek-request-id") or None
    return LlmError(
        f"{shown}{hint}",
        code,
        status=status,
        retry_after_ms=_retry_after_ms(headers.get("retry-after")),
        request_id=request_id,
        cause=err,
    )


def _classify(route: LlmRoute, status: int, text: str) -> tuple[str, str]:
    if status in (401, 403):
        return "AUTH", (
            f"; the API key comes from {route.api_key_ref}: set it to a valid key for"
            f" {route.base_url}"
        )
    if status == 413:
        return "INVALID_REQUEST", "; the request is too large for the server"
    if is_quota(text):
        return "QUOTA", "; the account is out of quota or balance: top it up at the provider"
    if status == 429:
        return "RATE_LIMIT", "; rate limited by the provider"
    if status == 400:
        if is_context_overflow(text):
            return "CONTEXT_WINDOW_EXCEEDED", (
                "; the conversation no longer fits the model's context window"
            )
        return "INVALID_REQUEST", ""
    if status == 404:
        return f"HTTP_{status}", (
            f'; check the model name "{route.model}" ({route.model_ref}) and the base URL'
            f" {route.base_url} ({route.base_url_ref})"
        )
    if status >= 500:
        return "SERVER", ""
    return f"HTTP_{status}", ""


def _retry_after_ms(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        ms = int(value) * 1000.0
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        ms = (when.timestamp() - time.time()) * 1000
    return ms if math.isfinite(ms) and ms > 0 else None
