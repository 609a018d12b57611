"""`Llm`, the model seam the loop talks to (`ctx.llm`): normalised streams and a retrying call.

Owns: failure normalisation at the adapter boundary (spec §9.7: whatever a transport raises
becomes exactly one terminal `Finish`; `aborted` when the caller's signal aborted or the code is
`ABORTED`), the one-`Finish` guarantee, and `generate`, which assembles a response and applies
the route's `RetryPolicy`. Does not own any wire format (the transport's) or durable logging (the
loop passes `on_chunk` / `on_retry` to log `assistant/chunk` and `llm/retry`).
"""

from __future__ import annotations

import inspect
import random as _random
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...core.errors import HarnessError, error_message
from ...core.signals import AbortError, AbortSignal
from ..assembly import BlockAssembler
from ..messages import (
    AssistantMessage,
    Finish,
    LlmFailure,
    StreamChunk,
    TokenUsage,
    assistant_message,
)
from .errors import ABORTED, LlmError
from .retry import RetryPolicy, sleep_unless_aborted
from .transport import LlmRequest, LlmTransport

if TYPE_CHECKING:
    from .prices import ModelPrice

__all__ = ["Generation", "Llm", "RetryNotice"]

_ABORTED_TEXT = "model request aborted by caller"


@dataclass(frozen=True, slots=True)
class Generation:
    """A completed model response: `finish.kind` is `stop`, `tool-calls` or `max-tokens`."""

    message: AssistantMessage
    finish: Finish
    usage: TokenUsage | None
    retries: int


@dataclass(frozen=True, slots=True)
class RetryNotice:
    """Handed to `on_retry` before `generate` waits `delay_ms` and re-issues the request."""

    retry: int  # 1-based
    delay_ms: float
    failure: LlmFailure
    policy: RetryPolicy


class Llm:
    """A transport plus its route (`provider`, `model`) and retry policy."""

    def __init__(
        self,
        transport: LlmTransport,
        *,
        provider: str,
        model: str,
        retry: RetryPolicy | None = None,
        prices: Mapping[str, ModelPrice] | None = None,
    ) -> None:
        self._transport = transport
        self._provider = provider
        self._model = model
        self._retry = RetryPolicy() if retry is None else retry
        self._prices = prices  # None: the built-in table (`price` imports it at first use)

    @property
    def transport(self) -> LlmTransport:
        return self._transport

    @property
    def provider(self) -> str:
        """The route label recorded in assistant message sources (e.g. `deepseek`)."""
        return self._provider

    @property
    def model(self) -> str:
        """The model used when a request does not name one."""
        return self._model

    def price(self, model: str | None = None) -> ModelPrice | None:
        """The price of `model` (default: this route's) from the price table, None if unknown
        (`tether.agent.llm.prices`)."""
        prices = self._prices
        if prices is None:
            from .prices import DEFAULT_PRICES  # imported at the first price asked (issue 36)

            prices = self._prices = DEFAULT_PRICES
        return prices.get(self._model if model is None else model)

    @property
    def retry_policy(self) -> RetryPolicy:
        return self._retry

    async def aclose(self) -> None:
        """Close the transport (its connection pool)."""
        await self._transport.aclose()

    async def stream(
        self, request: LlmRequest, *, signal: AbortSignal
    ) -> AsyncGenerator[StreamChunk, None]:
        """The transport's chunks, ending in exactly one `Finish`; never raises an `Exception`.

        A failure becomes `Finish("error", failure)`, or `Finish("aborted", failure)` with code
        `ABORTED` when `signal` aborted. A stream that ends without a finish gets `Finish("stop")`.
        Close it (`aclose()` / `contextlib.aclosing`) when you stop early: that closes the HTTP
        stream. Asyncio cancellation of the consuming task propagates unchanged.
        """
        if signal.aborted:
            yield Finish("aborted", LlmFailure(_ABORTED_TEXT, ABORTED))
            return
        try:
            inner = self._transport.stream(request, signal=signal)
            try:
                async for chunk in inner:
                    if isinstance(chunk, Finish):
                        yield _normalised(chunk, signal)
                        return
                    yield chunk
            finally:
                await inner.aclose()
        except Exception as error:
            yield _finish_for(error, signal)
            return
        yield Finish("stop")

    async def generate(
        self,
        request: LlmRequest,
        *,
        signal: AbortSignal,
        on_chunk: Callable[[StreamChunk], Awaitable[None] | None] | None = None,
        on_retry: Callable[[RetryNotice], Awaitable[None] | None] | None = None,
        on_retry_started: Callable[[RetryNotice], Awaitable[None] | None] | None = None,
        random: Callable[[], float] = _random.random,
    ) -> Generation:
        """Stream, assemble and return the response, retrying per `retry_policy`.

        Each attempt starts a fresh assembly; `on_chunk` sees every chunk of every attempt
        (including the failed attempt's terminal `Finish`); `on_retry` runs before each backoff
        wait (log `llm/retry` there), `on_retry_started` after it, just before the request is
        re-issued (`llm/retry-started`); an abort during the wait skips `on_retry_started`.
        Raises `LlmError` for the final failure (code `ABORTED` when `signal` aborted, also during
        a backoff wait); its `partial` holds the visible text/reasoning the failed stream had
        produced, if any.
        """
        retries = 0
        model = request.model or self._model
        while True:
            assembler = BlockAssembler()
            chunks = self.stream(request, signal=signal)
            try:
                async for chunk in chunks:
                    assembler.feed(chunk)
                    if on_chunk is not None:
                        await _maybe_await(on_chunk(chunk))
            finally:
                await chunks.aclose()
            finish = assembler.finish
            if finish.failure is None:
                message = assembler.message(provider=self._provider, model=model)
                return Generation(message, finish, assembler.usage, retries)
            failure = finish.failure
            delay = None
            if finish.kind == "error":
                delay = self._retry.delay_ms(failure, retries + 1, random=random)
            if delay is None:
                error = LlmError.from_failure(failure)
                partial = assembler.interrupted_blocks()
                if partial:
                    error.partial = assistant_message(partial, provider=self._provider, model=model)
                raise error
            retries += 1
            notice = RetryNotice(retries, delay, failure, self._retry)
            if on_retry is not None:
                await _maybe_await(on_retry(notice))
            if not await sleep_unless_aborted(delay, signal):
                raise LlmError(f"{_ABORTED_TEXT} during retry backoff", ABORTED)
            if on_retry_started is not None:
                await _maybe_await(on_retry_started(notice))


async def _maybe_await(result: Awaitable[None] | None) -> None:
    if inspect.isawaitable(result):
        await result


def _normalised(finish: Finish, signal: AbortSignal) -> Finish:
    failure = finish.failure
    if failure is None:
        return finish
    if signal.aborted or failure.code == ABORTED:
        if failure.code != ABORTED:
            failure = LlmFailure(_ABORTED_TEXT, ABORTED)
        return finish if finish.kind == "aborted" else Finish("aborted", failure)
    return finish if finish.kind == "error" else Finish("error", failure)


def _finish_for(error: Exception, signal: AbortSignal) -> Finish:
    if isinstance(error, LlmError):
        failure = error.failure
    elif isinstance(error, AbortError):
        failure = LlmFailure(_ABORTED_TEXT, ABORTED)
    else:
        code = error.code if isinstance(error, HarnessError) else "UNKNOWN"
        failure = LlmFailure(error_message(error) or "LLM adapter failed", code)
    return _normalised(Finish("error", failure), signal)
