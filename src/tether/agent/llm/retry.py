"""The model-request retry policy (spec §9.9): which failures are retried and how long to wait.

Owns: `RetryPolicy` (a `ConfigValue` validated as a pydantic model, so it sits in the `llm`
plugin config as `retry:`), its
backoff formula, and `sleep_unless_aborted`, the only way a retry waits. Does not own the retry
loop itself (`Llm.generate`, or the agent loop's own) nor logging `llm/retry` events.

Retries never outlive an abort: an `ABORTED` failure is never retried, and the backoff wait
returns early (False) the moment the caller's signal aborts.
"""

from __future__ import annotations

import asyncio
import json
import random as _random
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

from ...core.signals import AbortSignal
from ...core.timeout import MAX_TIMER_DELAY_MS
from ...kernel.config_models import ConfigValue
from ..messages import LlmFailure
from .errors import ABORTED, RETRYABLE_CODES

if TYPE_CHECKING:
    from pydantic import Field

__all__ = ["RetryPolicy", "sleep_unless_aborted"]


def _ordered(policy: RetryPolicy) -> None:
    if policy.initial_delay_ms > policy.max_delay_ms:
        raise ValueError("initial_delay_ms must be less than or equal to max_delay_ms")


class RetryPolicy(ConfigValue):
    """When and how long to wait before re-issuing a failed model request.

    `normal` retries the `retryable_codes` up to `max_retries` times; `always` retries every
    failure except an abort, without limit; `off` never retries. Backoff for retry `n` (1-based):
    `min(min(initial * 2**(n-1), max) * (1 - j + 2*j*random()), max)`; a provider `Retry-After`
    within `max_delay_ms` is used verbatim (over it, `normal` gives up, `always` backs off).
    """

    __pydantic_config__: ClassVar = {"extra": "forbid", "frozen": True}
    __config_check__: ClassVar = staticmethod(_ordered)
    __config_validate__: ClassVar = True

    mode: Literal["normal", "always", "off"] = "normal"
    max_retries: Annotated[int, Field(ge=0)] = 5
    retryable_codes: tuple[str, ...] = RETRYABLE_CODES
    initial_delay_ms: Annotated[float, Field(gt=0, le=MAX_TIMER_DELAY_MS)] = 500
    max_delay_ms: Annotated[float, Field(gt=0, le=MAX_TIMER_DELAY_MS)] = 10_000
    jitter_ratio: Annotated[float, Field(ge=0, le=1)] = 0.1

    @property
    def key(self) -> str:
        """A stable identity of the policy (the spec's `policyKey`), for `llm/retry` events."""
        backoff = [self.initial_delay_ms, self.max_delay_ms, self.jitter_ratio]
        if self.mode == "normal":
            parts: list[object] = [
                "normal",
                self.max_retries,
                sorted(self.retryable_codes),
                *backoff,
            ]
        else:
            parts = [self.mode, *backoff]
        return json.dumps(parts, separators=(",", ":"))

    def delay_ms(
        self,
        failure: LlmFailure,
        retry: int,
        *,
        random: Callable[[], float] = _random.random,
    ) -> float | None:
        """The wait in ms before retry number `retry` (1-based) of `failure`; None: give up."""
        if self.mode == "off" or failure.code == ABORTED:
            return None
        normal = self.mode == "normal"
        if normal and (failure.code not in self.retryable_codes or retry > self.max_retries):
            return None
        after = failure.retry_after_ms
        if after is not None and after > 0:
            if after <= self.max_delay_ms:
                return after
            if normal:
                return None
        base = min(self.initial_delay_ms * 2.0 ** (retry - 1), self.max_delay_ms)
        jitter = self.jitter_ratio
        delay: float = min(base * (1 - jitter + 2 * jitter * random()), self.max_delay_ms)
        return delay


async def sleep_unless_aborted(delay_ms: float, signal: AbortSignal) -> bool:
    """Wait `delay_ms`, or less if `signal` aborts. True when the full wait elapsed."""
    if signal.aborted:
        return False
    loop = asyncio.get_running_loop()
    woken: asyncio.Future[bool] = loop.create_future()

    def settle(elapsed: bool) -> None:
        if not woken.done():
            woken.set_result(elapsed)

    timer = loop.call_later(max(delay_ms, 0) / 1000, settle, True)
    remove = signal.add_listener(lambda _reason: settle(False))
    try:
        return await woken
    finally:
        timer.cancel()
        remove()
