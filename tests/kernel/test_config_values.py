"""What a `ConfigValue` offers beyond a record (issue 36: the configs that replaced pydantic
models with nested configs, read given fields or validated their constructor).

Contract: a `ConfigValue` remembers the fields it was given (`fields_given`, as pydantic's
`model_fields_set`); as a field of another config it validates a mapping with the messages a
nested pydantic model gives, and an instance of it passes as is; `model_validate` is pydantic's;
with `__config_validate__` its constructor raises the `ValidationError` the same pydantic model
raises and converts values as it does, and plain values (`str`, `bool`, `int`, `float`, None)
exactly of their declared type need no pydantic.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar

import pytest
from annotated_types import Ge
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tether.kernel import Context, InvalidPluginConfig
from tether.kernel.config_models import ConfigValue, fields_given, make_config

PATIENCE_S = 60.0


def _ordered(config: Inner) -> None:
    if config.low > config.high:
        raise ValueError(f"low ({config.low}) exceeds high ({config.high})")


class Inner(ConfigValue):
    __pydantic_config__: ClassVar = {"extra": "forbid"}
    __config_check__: ClassVar = staticmethod(_ordered)

    low: Annotated[int, Ge(0)] = 1
    high: int = 2


class Outer(ConfigValue):
    __pydantic_config__: ClassVar = {"extra": "forbid"}

    inner: Inner = Inner()
    by_name: dict[str, Inner] = {}  # a shared default: never mutated


class InnerModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    low: int = Field(default=1, ge=0)
    high: int = 2


class OuterModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    inner: InnerModel = InnerModel()
    by_name: dict[str, InnerModel] = Field(default_factory=dict)


class Checked(ConfigValue):
    __pydantic_config__: ClassVar = {"extra": "forbid"}
    __config_validate__: ClassVar = True

    name: str | None = None
    size: Annotated[int, Ge(1)] = 1
    ratio: float = 0.5
    tags: tuple[str, ...] = ()
    inner: Inner = Inner()


class CheckedModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    size: int = Field(default=1, ge=1)
    ratio: float = 0.5
    tags: tuple[str, ...] = ()
    inner: InnerModel = InnerModel()


@dataclass(frozen=True)
class Plain:
    a: int = 1
    b: int = 2


def test_a_config_value_remembers_the_fields_it_was_given() -> None:
    assert fields_given(Inner(high=5)) == {"high"}
    assert fields_given(make_config("p", Inner, {"low": 0})) == {"low"}
    assert fields_given(InnerModel(high=5)) == {"high"}
    assert fields_given(Plain()) == {"a", "b"}


async def test_a_nested_config_value_refuses_a_mapping_as_a_nested_pydantic_model_would() -> None:
    for config in (
        {"inner": {"low": -1}},
        {"inner": {"low": 3}},
        {"inner": 5},
        {"inner": {"wide": 1}},
        {"by_name": {"a": {"high": "x"}, "b": []}},
    ):
        with pytest.raises(InvalidPluginConfig) as value_error:
            make_config("p", Outer, config)
        if config == {"inner": {"low": 3}}:  # the model has no check: compare with the text
            assert value_error.value.detail == (
                'config.inner: Value error, low (3) exceeds high (2), got {"low": 3}'
            )
            continue
        with pytest.raises(InvalidPluginConfig) as model_error:
            make_config("p", OuterModel, config)
        assert value_error.value.detail == model_error.value.detail.replace("InnerModel", "Inner")


def test_a_nested_mapping_becomes_an_instance_and_an_instance_passes_as_is() -> None:
    given = Inner(low=0)

    made = make_config("p", Outer, {"inner": given, "by_name": {"a": {"high": 9}}})

    assert made.inner is given
    assert made.by_name == {"a": Inner(high=9)}
    assert fields_given(made.by_name["a"]) == {"high"}


def test_model_validate_validates_a_mapping_and_keeps_an_instance() -> None:
    outer = Outer(inner=Inner(high=3))

    assert Outer.model_validate({"inner": {"high": 3}}) == outer
    assert Outer.model_validate(outer) is outer
    with pytest.raises(ValidationError, match=r"1 validation error for Outer\ninner\.low"):
        Outer.model_validate({"inner": {"low": -1}})


@pytest.mark.parametrize(
    "values",
    [
        {"size": 0},
        {"name": 5},
        {"ratio": "half", "tags": "ab"},
        {"inner": {"low": -1}},
        {"wide": 1},
    ],
)
def test_a_validating_constructor_raises_what_the_pydantic_model_raises(
    values: dict[str, object],
) -> None:
    with pytest.raises(ValidationError) as from_value:
        Checked(**values)  # type: ignore[arg-type]
    with pytest.raises(ValidationError) as from_model:
        CheckedModel(**values)  # type: ignore[arg-type]

    assert str(from_value.value) == (
        str(from_model.value).replace("CheckedModel", "Checked").replace("InnerModel", "Inner")
    )


def test_a_validating_constructor_converts_as_pydantic_does() -> None:
    made = Checked(size=3, ratio=1, tags=["a"], inner={"high": 4})  # type: ignore[arg-type]

    assert (made.size, made.ratio, made.tags, made.inner) == (3, 1.0, ("a",), Inner(high=4))
    assert type(made.ratio) is float
    assert fields_given(made) == {"size", "ratio", "tags", "inner"}


def test_a_validating_constructor_says_a_required_field_is_missing_as_pydantic_does() -> None:
    class Named(ConfigValue):
        __config_validate__: ClassVar = True

        name: str
        size: int = 1

    for values in ({}, {"size": 2}):
        with pytest.raises(ValidationError) as caught:
            Named(**values)  # type: ignore[arg-type]

        assert [(e["loc"], e["msg"]) for e in caught.value.errors()] == [
            (("name",), "Field required")
        ]


def test_a_validating_constructor_runs_the_check_of_the_whole() -> None:
    class Window(ConfigValue):
        __config_check__: ClassVar = staticmethod(_ordered)
        __config_validate__: ClassVar = True

        low: int = 1
        high: int = 2

    with pytest.raises(ValidationError, match="Value error, low \\(5\\) exceeds high \\(2\\)"):
        Window(low=5)


_PLAIN_VALUES = """
import sys
from typing import ClassVar
from tether.kernel.config_models import ConfigValue, fields_given

class Config(ConfigValue):
    __config_validate__: ClassVar = True
    root: str | None = None
    on: bool = True
    size: int = 1
    ratio: float = 0.5
    names: tuple[str, ...] = ()

made = Config(root="/w", on=False, size=2, ratio=1.5)
print(made, sorted(fields_given(made)), "pydantic" in sys.modules)
made = Config(root=None, names=("a",))
print(made.names, "pydantic" in sys.modules)
"""


def test_plain_values_of_their_declared_type_need_no_pydantic(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PLAIN_VALUES],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )

    assert (done.returncode, done.stdout.splitlines()) == (
        0,
        [
            "Config(root='/w', on=False, size=2, ratio=1.5, names=()) "
            "['on', 'ratio', 'root', 'size'] False",
            "('a',) True",
        ],
    ), done.stderr


async def test_a_plugin_given_a_validating_config_value_gets_it_as_is() -> None:
    received: list[object] = []

    class Plugin:
        name = "p"
        Config = Checked

        @staticmethod
        def apply(ctx: Context, config: Checked) -> None:
            received.append(config)

    given = Checked(name="x")
    await Context().plugin(Plugin, given)

    assert received[0] is given
