"""The `jobs` plugin's configuration.

Owns the fields, their defaults and the load-time checks (`jobs: wait_timeout_ms (<a>) exceeds
max_wait_timeout_ms (<b>)`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, ClassVar

from ...core.timeout import MAX_TIMER_DELAY_MS, format_ms
from ...kernel.config_models import ConfigValue

if TYPE_CHECKING:  # resolved where a config is validated (tether.kernel.config_models)
    from pydantic import AfterValidator, PositiveInt, ValidationInfo

__all__ = ["JobsConfig"]


def _timer(value: float, info: ValidationInfo) -> float:
    if not math.isfinite(value) or not 0 < value <= MAX_TIMER_DELAY_MS:
        raise ValueError(
            f"jobs: {info.field_name} must be a positive finite number no greater than "
            f"{MAX_TIMER_DELAY_MS}"
        )
    return value


def _ordered(config: JobsConfig) -> None:
    if config.wait_timeout_ms > config.max_wait_timeout_ms:
        raise ValueError(
            f"jobs: wait_timeout_ms ({format_ms(config.wait_timeout_ms)}) exceeds "
            f"max_wait_timeout_ms ({format_ms(config.max_wait_timeout_ms)})"
        )


class JobsConfig(ConfigValue):
    """`max_concurrent_jobs_per_owner`: admission limit (running + stopping jobs per owner);
    `wait_timeout_ms`: how long `job_output` waits when `wait: true` gives no `wait_ms`;
    `max_wait_timeout_ms`: the cap of any wait."""

    __pydantic_config__: ClassVar = {"extra": "forbid"}  # a mapping: tether.kernel.config_models
    __config_check__: ClassVar = staticmethod(_ordered)

    max_concurrent_jobs_per_owner: PositiveInt = 10
    wait_timeout_ms: Annotated[float, AfterValidator(_timer)] = 30_000
    max_wait_timeout_ms: Annotated[float, AfterValidator(_timer)] = 600_000
