"""The `jobs` plugin's configuration.

Owns the fields, their defaults and the load-time checks (`jobs: wait_timeout_ms (<a>) exceeds
max_wait_timeout_ms (<b>)`).
"""

from __future__ import annotations

import math

from pydantic import (
    BaseModel,
    ConfigDict,
    PositiveInt,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ...core.timeout import MAX_TIMER_DELAY_MS, format_ms

__all__ = ["JobsConfig"]


class JobsConfig(BaseModel):
    """`max_concurrent_jobs_per_owner`: admission limit (running + stopping jobs per owner);
    `wait_timeout_ms`: how long `job_output` waits when `wait: true` gives no `wait_ms`;
    `max_wait_timeout_ms`: the cap of any wait."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_concurrent_jobs_per_owner: PositiveInt = 10
    wait_timeout_ms: float = 30_000
    max_wait_timeout_ms: float = 600_000

    @field_validator("wait_timeout_ms", "max_wait_timeout_ms")
    @classmethod
    def _timer(cls, value: float, info: ValidationInfo) -> float:
        if not math.isfinite(value) or not 0 < value <= MAX_TIMER_DELAY_MS:
            raise ValueError(
                f"jobs: {info.field_name} must be a positive finite number no greater than "
                f"{MAX_TIMER_DELAY_MS}"
            )
        return value

    @model_validator(mode="after")
    def _ordered(self) -> JobsConfig:
        if self.wait_timeout_ms > self.max_wait_timeout_ms:
            raise ValueError(
                f"jobs: wait_timeout_ms ({format_ms(self.wait_timeout_ms)}) exceeds "
                f"max_wait_timeout_ms ({format_ms(self.max_wait_timeout_ms)})"
            )
        return self
