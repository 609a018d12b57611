"""`LlmConfig` made by a library user (issue 36: a `ConfigValue`, no longer a pydantic model).

Contract: constructing one with bad values fails at construction with the `ValidationError`
(and text) the pydantic model gave; good values are converted as it converted them (a string
`api_key` is a `SecretStr`, a mapping `retry` a `RetryPolicy`); made without values, or from a
mapping by the plugin, it is the same config.
"""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from tether.agent.llm import LlmConfig, RetryPolicy
from tether.agent.llm.prices import PriceConfig
from tether.kernel.config_models import fields_given, make_config


def refusal(**values: object) -> list[str]:
    """The first lines of the error (the rest is pydantic's documentation link)."""
    with pytest.raises(ValidationError) as caught:
        LlmConfig(**values)  # type: ignore[arg-type]
    return [line for line in str(caught.value).splitlines() if "errors.pydantic.dev" not in line]


def test_an_unknown_provider_is_refused_at_construction() -> None:
    assert refusal(provider="claude") == [
        "1 validation error for LlmConfig",
        "provider",
        "  Input should be 'auto', 'deepseek' or 'openai' [type=literal_error,"
        " input_value='claude', input_type=str]",
    ]


def test_every_bad_field_is_named_at_construction() -> None:
    assert refusal(max_tokens=0, temperature="hot") == [
        "2 validation errors for LlmConfig",
        "max_tokens",
        "  Input should be greater than or equal to 1 [type=greater_than_equal, input_value=0,"
        " input_type=int]",
        "temperature",
        "  Input should be a valid number, unable to parse string as a number"
        " [type=float_parsing, input_value='hot', input_type=str]",
    ]


def test_a_bad_nested_retry_policy_is_refused_with_its_check() -> None:
    assert refusal(retry={"initial_delay_ms": 5, "max_delay_ms": 1}) == [
        "1 validation error for LlmConfig",
        "retry",
        "  Value error, initial_delay_ms must be less than or equal to max_delay_ms"
        " [type=value_error, input_value={'initial_delay_ms': 5, 'max_delay_ms': 1},"
        " input_type=dict]",
    ]


def test_a_bad_price_entry_names_its_path() -> None:
    assert refusal(prices={"m": {"input": -1}}) == [
        "2 validation errors for LlmConfig",
        "prices.m.input",
        "  Input should be greater than or equal to 0 [type=greater_than_equal, input_value=-1,"
        " input_type=int]",
        "prices.m.output",
        "  Field required [type=missing, input_value={'input': -1}, input_type=dict]",
    ]


def test_an_unknown_keyword_is_refused_as_an_extra_input() -> None:
    assert refusal(api_keys="x") == [
        "1 validation error for LlmConfig",
        "api_keys",
        "  Extra inputs are not permitted [type=extra_forbidden, input_value='x', input_type=str]",
    ]


def test_a_retry_policy_made_directly_checks_its_delays() -> None:
    with pytest.raises(ValidationError, match="initial_delay_ms must be less than or equal to"):
        RetryPolicy(initial_delay_ms=5, max_delay_ms=1)


def test_construction_converts_values_as_the_pydantic_model_did() -> None:
    config = LlmConfig(
        api_key="sk-1",  # type: ignore[arg-type]
        retry={"mode": "off"},  # type: ignore[arg-type]
        prices={"m": {"input": 1, "output": 2}},  # type: ignore[dict-item]
        stream_idle_timeout_ms=5,
    )

    assert (config.api_key, config.retry, config.prices, config.stream_idle_timeout_ms) == (
        SecretStr("sk-1"),
        RetryPolicy(mode="off"),
        {"m": PriceConfig(input=1.0, output=2.0)},
        5.0,
    )
    assert type(config.stream_idle_timeout_ms) is float


def test_a_config_made_directly_equals_one_validated_from_the_same_mapping() -> None:
    values = {"provider": "openai", "base_url": "http://127.0.0.1:1", "retry": {"mode": "off"}}

    made = LlmConfig(**values)  # type: ignore[arg-type]
    validated = make_config("llm", LlmConfig, values)

    assert (made, fields_given(made)) == (validated, fields_given(validated))
    assert fields_given(made) == {"provider", "base_url", "retry"}
