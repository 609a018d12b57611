"""Where model requests go: the `llm` plugin config and the route it resolves to.

Owns: `LlmConfig` (a `ConfigValue` whose constructor validates as the pydantic model it was),
`LlmRoute` (the resolved, frozen target: provider label, base URL, model, credential and stream
options) and `resolve_route`, which reads the environment once. Does not own sending anything
(`tether.agent.llm.openai`).

Resolution (explicit config wins over the environment):

    provider "deepseek"  key $DEEPSEEK_API_KEY, base $DEEPSEEK_BASE_URL or https://api.deepseek.com,
                         model $DEEPSEEK_MODEL or deepseek-chat; sends `reasoning_content` back
    provider "openai"    key $OPENAI_API_KEY, base $OPENAI_BASE_URL or https://api.openai.com/v1,
                         model $OPENAI_MODEL or gpt-4o-mini; any OpenAI-compatible server (vLLM,
                         Ollama, LM Studio...): a custom base URL works without a key
    provider "auto"      "deepseek" if $DEEPSEEK_API_KEY is set, else "openai" if $OPENAI_API_KEY
                         or $OPENAI_BASE_URL is set, else "deepseek" (whose missing key then fails
                         the first request with MISSING_CREDENTIAL, naming every way to
                         configure a model: DEEPSEEK_API_KEY, OPENAI_API_KEY, OPENAI_BASE_URL)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, ClassVar, Final, Literal, cast

from ...core.json import FrozenDict, JsonValue, snapshot
from ...core.lazy import lazy_names
from ...core.timeout import MAX_TIMER_DELAY_MS
from ...kernel.config_models import ConfigValue
from .retry import RetryPolicy

if TYPE_CHECKING:
    from pydantic import Field, SecretStr

    from .prices import PriceConfig

__all__ = [
    "DEEPSEEK_BASE_URL",
    "DEFAULT_STREAM_IDLE_TIMEOUT_MS",
    "OPENAI_BASE_URL",
    "LlmConfig",
    "LlmRoute",
    "resolve_route",
]

DEEPSEEK_BASE_URL: Final = "https://api.deepseek.com"
OPENAI_BASE_URL: Final = "https://api.openai.com/v1"
DEFAULT_STREAM_IDLE_TIMEOUT_MS: Final = 300_000


class LlmConfig(ConfigValue):
    """The `llm` plugin config. Every field is optional; see the module docstring. Made with
    values, it validates them as a pydantic model does (raising its `ValidationError`)."""

    __pydantic_config__: ClassVar = {"extra": "forbid", "frozen": True}
    __config_validate__: ClassVar = True

    provider: Literal["auto", "deepseek", "openai"] = "auto"
    base_url: Annotated[str | None, Field(min_length=1)] = None
    model: Annotated[str | None, Field(min_length=1)] = None
    api_key_env: Annotated[str | None, Field(min_length=1)] = None
    api_key: SecretStr | None = None  # prefer api_key_env: config files get committed
    stream_idle_timeout_ms: Annotated[float, Field(gt=0, le=MAX_TIMER_DELAY_MS)] = (
        DEFAULT_STREAM_IDLE_TIMEOUT_MS
    )
    connect_timeout_ms: Annotated[float, Field(gt=0, le=MAX_TIMER_DELAY_MS)] = 30_000
    max_tokens: Annotated[int | None, Field(ge=1)] = None
    temperature: float | None = None
    replay_reasoning: bool | None = None  # default: True for deepseek, False for openai
    headers: dict[str, str] = {}  # noqa: RUF012 (a shared default: never mutated)
    extra_body: dict[str, object] = {}  # noqa: RUF012
    retry: RetryPolicy = RetryPolicy()
    prices: dict[str, PriceConfig] = {}  # noqa: RUF012 (tether.agent.llm.prices)


@dataclass(frozen=True, kw_only=True)
class LlmRoute:
    """A resolved target. `api_key` is never shown in `repr`."""

    provider: str
    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    api_key_ref: str  # where the key comes from, for messages: "DEEPSEEK_API_KEY"
    key_required: bool = True
    chosen: bool = True  # False: "auto" found no model configured anywhere and fell back
    base_url_ref: str = "base_url"
    model_ref: str = "model"
    label: str = "model API"
    stream_idle_timeout_ms: float = DEFAULT_STREAM_IDLE_TIMEOUT_MS
    connect_timeout_ms: float = 30_000
    max_tokens: int | None = None
    temperature: float | None = None
    replay_reasoning: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)
    extra_body: Mapping[str, JsonValue] = field(default_factory=FrozenDict)


@dataclass(frozen=True, slots=True)
class _Provider:
    prefix: str
    base_url: str
    model: str
    label: str
    replay_reasoning: bool


_PROVIDERS: Final = {
    "deepseek": _Provider("DEEPSEEK", DEEPSEEK_BASE_URL, "deepseek-chat", "DeepSeek API", True),
    "openai": _Provider("OPENAI", OPENAI_BASE_URL, "gpt-4o-mini", "OpenAI API", False),
}


def resolve_route(config: LlmConfig, environ: Mapping[str, str] = os.environ) -> LlmRoute:
    """The route `config` selects, reading `environ` for what the config leaves unset."""

    def env(name: str) -> str | None:
        return environ.get(name) or None

    provider, chosen = config.provider, True
    if provider == "auto":
        if env("DEEPSEEK_API_KEY"):
            provider = "deepseek"
        elif env("OPENAI_API_KEY") or env("OPENAI_BASE_URL"):
            provider = "openai"
        else:
            provider, chosen = "deepseek", config.base_url is not None or config.api_key is not None
    spec = _PROVIDERS[provider]
    key_env = config.api_key_env or f"{spec.prefix}_API_KEY"
    if config.api_key is not None:
        api_key: str | None = config.api_key.get_secret_value()
        key_ref = "the llm plugin config (api_key)"
    else:
        api_key, key_ref = environ.get(key_env), key_env
    base_env, model_env = f"{spec.prefix}_BASE_URL", f"{spec.prefix}_MODEL"
    base_url = (config.base_url or env(base_env) or spec.base_url).rstrip("/")
    custom = base_url != spec.base_url.rstrip("/")
    label = (
        f"OpenAI-compatible API at {base_url}" if provider == "openai" and custom else spec.label
    )
    return LlmRoute(
        provider=provider,
        base_url=base_url,
        model=config.model or env(model_env) or spec.model,
        api_key=api_key,
        api_key_ref=key_ref,
        key_required=provider == "deepseek" or not custom,
        chosen=chosen,
        base_url_ref="the llm plugin config (base_url)" if config.base_url else base_env,
        model_ref="the llm plugin config (model)" if config.model else model_env,
        label=label,
        stream_idle_timeout_ms=config.stream_idle_timeout_ms,
        connect_timeout_ms=config.connect_timeout_ms,
        max_tokens=config.max_tokens,
        temperature=config.temperature,
        replay_reasoning=(
            spec.replay_reasoning if config.replay_reasoning is None else config.replay_reasoning
        ),
        headers=dict(config.headers),
        extra_body=cast(Mapping[str, JsonValue], snapshot(dict(config.extra_body))),
    )


__getattr__, __dir__ = lazy_names(globals(), {"PriceConfig": ".prices"})
"""`PriceConfig`, imported when a `prices:` config is first validated: the built-in price
table is not needed before a price is asked for (issue 36)."""
