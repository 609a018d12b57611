"""What a model's tokens cost: the per-model price table `total_cost_usd` is computed from.

Owns `ModelPrice` (US dollars per million tokens: uncached input, cached input, cache writes,
output), `DEFAULT_PRICES` (list prices of the models tether routes to by default) and
`cost_usd`. The `llm` plugin's `prices:` config adds or replaces entries by model name:

    - name: llm
      config:
        prices:
          my-local-model: {input: 0, output: 0}
          deepseek-chat: {input: 0.28, cached_input: 0.028, output: 0.42}

A model absent from the table has no price: its cost is unknown (`None`), never guessed. Does
not own counting tokens (the adapter's `TokenUsage`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, ClassVar, Final

from ...kernel.config_models import ConfigValue
from ..messages import TokenUsage

if TYPE_CHECKING:
    from pydantic import Field

__all__ = ["DEFAULT_PRICES", "ModelPrice", "PriceConfig", "cost_usd", "price_table"]


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """US dollars per million tokens. `cached_input` / `cache_write` default to `input`."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None


class PriceConfig(ConfigValue):
    """One `prices:` entry of the `llm` plugin config (validated as a pydantic model)."""

    __pydantic_config__: ClassVar = {"extra": "forbid", "frozen": True}
    __config_validate__: ClassVar = True

    input: Annotated[float, Field(ge=0)]
    output: Annotated[float, Field(ge=0)]
    cached_input: Annotated[float | None, Field(ge=0)] = None
    cache_write: Annotated[float | None, Field(ge=0)] = None

    def price(self) -> ModelPrice:
        return ModelPrice(self.input, self.output, self.cached_input, self.cache_write)


DEFAULT_PRICES: Final[Mapping[str, ModelPrice]] = MappingProxyType(
    {
        # DeepSeek's list prices (V3.2: cache miss, cache hit, output).
        "deepseek-chat": ModelPrice(input=0.28, cached_input=0.028, output=0.42),
        "deepseek-reasoner": ModelPrice(input=0.28, cached_input=0.028, output=0.42),
        # OpenAI's list prices.
        "gpt-4o-mini": ModelPrice(input=0.15, cached_input=0.075, output=0.60),
        "gpt-4o": ModelPrice(input=2.50, cached_input=1.25, output=10.00),
        "gpt-4.1": ModelPrice(input=2.00, cached_input=0.50, output=8.00),
        "gpt-4.1-mini": ModelPrice(input=0.40, cached_input=0.10, output=1.60),
    }
)
"""The built-in table; `price_table` layers the config's entries over it."""


def price_table(configured: Mapping[str, PriceConfig]) -> Mapping[str, ModelPrice]:
    """`DEFAULT_PRICES` with `configured` added or replacing entries by model name."""
    table = dict(DEFAULT_PRICES)
    table.update({name: entry.price() for name, entry in configured.items()})
    return MappingProxyType(table)


def cost_usd(usage: TokenUsage, price: ModelPrice | None) -> float | None:
    """What `usage` cost at `price`; None when the price is unknown. `usage.input_tokens` is
    the uncached input (tether counts cached input apart)."""
    if price is None:
        return None
    cached = price.input if price.cached_input is None else price.cached_input
    written = price.input if price.cache_write is None else price.cache_write
    total = (
        usage.input_tokens * price.input
        + (usage.cache_read_tokens or 0) * cached
        + (usage.cache_write_tokens or 0) * written
        + usage.output_tokens * price.output
    )
    return total / 1_000_000
