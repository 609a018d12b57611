"""A plugin's `Config`: a pydantic model, a `ConfigValue` or a dataclass (issue 36).

Contract: a `ConfigValue` (or dataclass) `Config` validates a mapping with exactly the messages
the same fields declared on a pydantic model give; an instance of the `Config` (any kind) is
handed to the plugin as is; one whose fields all have defaults, given no config, is `Config()`;
a boot whose plugins take such configs as values or defaults never imports pydantic; and a
`ConfigValue` is a frozen keyword-only record (equality, hash, repr) without generated code.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, ClassVar, Literal

import pytest
from annotated_types import Ge, Gt
from pydantic import BaseModel, ConfigDict, Field

from tether.kernel import ConfigError, Context, InvalidPluginConfig, PluginEntry, TetherConfig, boot
from tether.kernel.config_models import ConfigValue

PATIENCE_S = 60.0


class Limits(ConfigValue):
    __pydantic_config__: ClassVar = {"extra": "forbid"}

    mode: Literal["fast", "slow"] = "fast"
    budget_ms: Annotated[float, Gt(0)] = 1_000.0
    retries: Annotated[int, Ge(0)] = 3
    names: tuple[str, ...] = ()
    label: str | None = None


class LimitsModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["fast", "slow"] = "fast"
    budget_ms: float = Field(default=1_000.0, gt=0)
    retries: int = Field(default=3, ge=0)
    names: tuple[str, ...] = ()
    label: str | None = None


def _ordered(config: Window) -> None:
    if config.low > config.high:
        raise ValueError(f"low ({config.low}) exceeds high ({config.high})")


class Window(ConfigValue):
    __pydantic_config__: ClassVar = {"extra": "forbid"}
    __config_check__: ClassVar = staticmethod(_ordered)

    low: int = 1
    high: int = 2


@dataclass(frozen=True, kw_only=True)
class BadDefaults:
    __config_check__ = staticmethod(_ordered)

    low: int = 3
    high: int = 2


@dataclass(frozen=True, kw_only=True)
class Required:
    __pydantic_config__ = {"extra": "forbid"}

    allow: bool


def taking(config_model: type) -> tuple[object, list[object]]:
    received: list[object] = []
    plugin = SimpleNamespace(
        name="p", Config=config_model, apply=lambda ctx, config: received.append(config)
    )
    return plugin, received


async def problem(config_model: type, config: object) -> str:
    plugin, _ = taking(config_model)
    with pytest.raises(InvalidPluginConfig) as caught:
        await Context().plugin(plugin, config)
    return str(caught.value)


@pytest.mark.parametrize(
    "config",
    [
        {"extra": 1},
        {"mode": "medium"},
        {"budget_ms": 0},
        {"budget_ms": "soon", "retries": -1},
        {"names": ["a", 2]},
        {"names": "ab"},
        {"label": 5},
        [1, 2],
    ],
)
async def test_a_dataclass_config_refuses_a_mapping_as_a_pydantic_model_with_its_fields_would(
    config: object,
) -> None:
    from_dataclass = await problem(Limits, config)
    from_model = await problem(LimitsModel, config)

    assert from_dataclass == from_model.replace("LimitsModel", "Limits")


async def test_a_dataclass_config_validates_a_mapping_into_an_instance() -> None:
    plugin, received = taking(Limits)

    await Context().plugin(plugin, {"mode": "slow", "budget_ms": 5, "names": ["a"]})

    assert received == [Limits(mode="slow", budget_ms=5.0, names=("a",))]


async def test_a_dataclass_config_without_a_config_is_its_defaults() -> None:
    plugin, received = taking(Limits)

    await Context().plugin(plugin)

    assert received == [Limits()]


async def test_a_dataclass_config_with_a_required_field_still_says_it_is_missing() -> None:
    assert await problem(Required, {}) == 'plugin "p": config.allow: Field required'


@pytest.mark.parametrize("config", [Limits(retries=9), LimitsModel(retries=9)])
async def test_an_instance_of_the_config_is_handed_to_the_plugin_as_is(config: object) -> None:
    plugin, received = taking(type(config))

    await Context().plugin(plugin, config)

    assert received[0] is config


async def test_boot_names_the_entry_when_a_dataclass_config_is_invalid() -> None:
    plugin, _ = taking(Limits)
    entry = PluginEntry(name="p", plugin=plugin, config={"retries": -1}, origin="tether.yml")

    with pytest.raises(ConfigError) as caught:
        await boot(Context(), TetherConfig(), builtins=[entry])

    assert str(caught.value) == (
        'tether.yml (id "p"): config.retries: Input should be greater than or equal to 0, got -1'
    )


_BOOT_WITHOUT_PYDANTIC = """
import asyncio, sys
from dataclasses import dataclass
from types import SimpleNamespace
from tether.kernel import Context, PluginEntry, TetherConfig, boot
from tether.kernel.config_models import ConfigValue

class Config(ConfigValue):
    size: int = 1

received = []
plugin = SimpleNamespace(name="p", Config=Config, apply=lambda ctx, c: received.append(c))
entries = [
    PluginEntry(id="a", name="p", plugin=plugin),
    PluginEntry(id="b", name="p", plugin=plugin, value=Config(size=2)),
]
asyncio.run(boot(Context(), TetherConfig(), builtins=entries))
print(received, "pydantic" in sys.modules)
"""


def test_a_boot_of_dataclass_configs_given_as_values_or_defaults_never_imports_pydantic(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _BOOT_WITHOUT_PYDANTIC],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )

    assert (done.returncode, done.stdout) == (0, "[Config(size=1), Config(size=2)] False\n")


async def test_an_entry_given_both_a_config_and_a_value_is_refused() -> None:
    plugin, _ = taking(Limits)
    entry = PluginEntry(name="p", plugin=plugin, config={"retries": 1}, value=Limits(), origin="x")

    with pytest.raises(ConfigError) as caught:
        await boot(Context(), TetherConfig(), builtins=[entry])

    assert str(caught.value) == 'x (id "p"): give the plugin its config or its value, not both'


_PYDANTIC_NAMES_UNIMPORTED = """
from __future__ import annotations
import asyncio
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Annotated
from tether.kernel import Context, InvalidPluginConfig

def even(value: int) -> int:
    if value % 2:
        raise ValueError("size must be even")
    return value

@dataclass(frozen=True)
class Config:
    size: Annotated[int, Field(gt=0), AfterValidator(even)] = 2

plugin = SimpleNamespace(name="p", Config=Config, apply=lambda ctx, c: print(c))
for config in ({"size": 0}, {"size": 3}, {"size": 4}):
    try:
        asyncio.run(Context().plugin(plugin, config))
    except InvalidPluginConfig as error:
        print(error)
"""


def test_a_dataclass_config_may_use_pydantic_markers_its_module_never_imports(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PYDANTIC_NAMES_UNIMPORTED],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )

    assert (done.returncode, done.stdout.splitlines()) == (
        0,
        [
            'plugin "p": config.size: Input should be greater than 0, got 0',
            'plugin "p": config.size: Value error, size must be even, got 3',
            "Config(size=4)",
        ],
    ), done.stderr


async def test_a_dataclass_configs_check_of_the_whole_refuses_as_a_model_validator_would() -> None:
    assert await problem(Window, {"low": 5}) == (
        'plugin "p": config: Value error, low (5) exceeds high (2), got {"low": 5}'
    )


async def test_defaults_that_fail_the_check_are_refused_too() -> None:
    assert await problem(BadDefaults, {}) == (
        'plugin "p": config: Value error, low (3) exceeds high (2), got {}'
    )


async def test_a_plain_dataclass_may_be_a_config_too() -> None:
    plugin, received = taking(Required)

    await Context().plugin(plugin, {"allow": True})

    assert received == [Required(allow=True)]


def test_a_config_value_is_a_frozen_keyword_record() -> None:
    limits = Limits(retries=9, names=("a",))

    assert repr(limits) == (
        "Limits(mode='fast', budget_ms=1000.0, retries=9, names=('a',), label=None)"
    )
    assert (limits == Limits(retries=9, names=("a",)), limits == Limits()) == (True, False)
    assert hash(limits) == hash(Limits(retries=9, names=("a",)))
    with pytest.raises(AttributeError):
        limits.retries = 1  # type: ignore[misc]


def test_a_config_value_names_a_missing_or_unknown_keyword() -> None:
    with pytest.raises(TypeError, match="Window2\\(\\) missing keyword argument 'high'"):
        Window2(low=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'wide'"):
        Window(wide=1)  # type: ignore[call-arg]


class Window2(ConfigValue):
    low: int = 0
    high: int
