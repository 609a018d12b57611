"""The `llm` plugin: provides `ctx.llm`, an `Llm` over the OpenAI-compatible adapter.

Mount it with `await ctx.plugin(tether.agent.llm.plugin, {...})` (config: `LlmConfig`), or by
name `llm` in `tether.yml`. The route is resolved from the config and the environment once, at
mount; the HTTP connection pool is closed when the plugin is disposed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from .config import LlmConfig, resolve_route
from .openai import OpenAICompatibleTransport
from .service import Llm

if TYPE_CHECKING:
    from ...kernel import Context

__all__ = ["Config", "apply", "build_llm", "name"]

name: Final = "llm"
Config = LlmConfig


def build_llm(config: LlmConfig | None = None, environ: Mapping[str, str] = os.environ) -> Llm:
    """An `Llm` over the OpenAI-compatible adapter for the route `config` and `environ` select.

    E.g. `build_llm(LlmConfig(provider="openai", base_url=server.base_url, model="scripted"))`
    for a local server. Close it with `await llm.aclose()`.
    """
    config = LlmConfig() if config is None else config
    route = resolve_route(config, environ)
    prices = None  # None: the built-in table, loaded when a price is first asked for (issue 36)
    if config.prices:
        from .prices import price_table

        prices = price_table(config.prices)
    return Llm(
        OpenAICompatibleTransport(route),
        provider=route.provider,
        model=route.model,
        retry=config.retry,
        prices=prices,
    )


def apply(ctx: Context, config: LlmConfig) -> None:
    """Provide `ctx.llm` for the route `config` (and the environment) resolves to."""
    llm = build_llm(config)
    ctx.provide("llm", llm)
    ctx.effect(llm.aclose)
