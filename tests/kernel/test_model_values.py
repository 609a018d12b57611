"""`ModelValue`: a `ConfigValue` validated when constructed, as the pydantic model with the same
fields is (issue 36: `SandboxSettings`, `EnvPolicy` and the shell's and file tools' configs).

Contract: a plainly valid value is made without importing pydantic; any other value is made, or
refused with the `ValidationError`, exactly as the `BaseModel` with the same fields makes or
refuses it (construction, `model_validate`, a field of a pydantic model, a plugin's config);
`model_fields_set`, `model_dump`, `model_copy` and iteration behave as the model's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any, ClassVar

import pytest
from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from tether.kernel import Context
from tether.kernel.config_models import _DERIVED
from tether.kernel.model_values import SLOW, ModelValue, exactly, strings

PATIENCE_S = 60.0


def _named(names: tuple[str, ...]) -> tuple[str, ...]:
    if any(not name for name in names):
        raise ValueError("a name is empty")
    return names


def _fast_names(value: object) -> object:
    names = strings(value)
    return names if names is not None and all(names) else SLOW


class Inner(ModelValue):
    __pydantic_config__: ClassVar = {"extra": "forbid"}
    __config_fast__: ClassVar = {"names": _fast_names}

    names: Annotated[tuple[str, ...], AfterValidator(_named)] = ()


class Outer(ModelValue):
    __pydantic_config__: ClassVar = {"extra": "forbid"}
    __config_fast__: ClassVar = {
        "label": exactly(str, None),
        "ratio": exactly(float),
        "inner": Inner.fast_check,
    }

    label: str | None = None
    ratio: float = 1
    inner: Inner = Inner()


class InnerModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    names: Annotated[tuple[str, ...], AfterValidator(_named)] = ()


class OuterModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str | None = None
    ratio: float = 1
    inner: InnerModel = InnerModel()


class Holder(BaseModel):
    outer: Outer = Outer()


def _errors(error: ValidationError) -> list[dict[str, Any]]:
    """The errors, with the models' class names as the values' (`OuterModel` → `Outer`)."""
    return [
        {
            "type": details["type"],
            "loc": details["loc"],
            "msg": details["msg"].replace("Model", ""),
            "input": details["input"],
        }
        for details in error.errors(include_url=False)
    ]


@pytest.mark.parametrize(
    "values",
    [
        {"label": 5},
        {"ratio": "fast"},
        {"inner": {"names": ["a", ""]}},
        {"inner": {"name": ["a"]}},
        {"inner": 3},
        {"other": 1},
    ],
)
def test_a_bad_value_is_refused_at_construction_as_the_model_refuses_it(
    values: dict[str, Any],
) -> None:
    with pytest.raises(ValidationError) as made:
        Outer(**values)
    with pytest.raises(ValidationError) as modelled:
        OuterModel(**values)

    assert made.value.title == "Outer"
    assert _errors(made.value) == _errors(modelled.value)


@pytest.mark.parametrize(
    "values",
    [
        {},
        {"label": "x", "ratio": 2.5},
        {"ratio": 2},
        {"ratio": "2.5"},
        {"inner": {"names": ["a", "b"]}},
        {"inner": {"names": ("a",)}},
    ],
)
def test_a_good_value_is_made_as_the_model_makes_it(values: dict[str, Any]) -> None:
    made, modelled = Outer(**values), OuterModel(**values)

    assert repr(made) == repr(modelled).replace("InnerModel", "Inner").replace("Model", "")
    assert type(made.ratio) is type(modelled.ratio)
    assert made.model_fields_set == modelled.model_fields_set
    assert made.model_dump() == modelled.model_dump()
    assert made.model_dump(exclude_unset=True) == modelled.model_dump(exclude_unset=True)
    assert dict(made) == {key: value for key, value in dict(modelled).items() if key != "inner"} | {
        "inner": made.inner
    }


def test_model_validate_refuses_what_is_not_a_mapping_as_the_model_does() -> None:
    with pytest.raises(ValidationError) as made:
        Outer.model_validate([1])
    with pytest.raises(ValidationError) as modelled:
        OuterModel.model_validate([1])

    assert _errors(made.value) == _errors(modelled.value)


def test_a_copy_replaces_fields_without_validating_and_counts_them_as_given() -> None:
    copied = Outer(label="x").model_copy(update={"ratio": "unchecked"})

    fields: tuple[object, object] = (copied.label, copied.ratio)
    assert fields == ("x", "unchecked")
    assert copied.model_fields_set == {"label", "ratio"}


def test_as_a_field_of_a_pydantic_model_an_instance_is_kept_and_a_mapping_validated() -> None:
    given = Outer(label="x")

    assert Holder(outer=given).outer is given
    assert Holder.model_validate({"outer": {"inner": {"names": ["a"]}}}).outer == Outer(
        inner=Inner(names=("a",))
    )
    with pytest.raises(ValidationError) as caught:
        Holder.model_validate({"outer": {"inner": {"names": [""]}}})
    assert [(error["loc"], error["msg"]) for error in caught.value.errors()] == [
        (("outer", "inner", "names"), "Value error, a name is empty")
    ]


def test_a_pydantic_model_with_such_a_field_is_defined_without_deriving_a_model() -> None:
    class Lazy(ModelValue):
        __config_fast__: ClassVar = {"size": exactly(int)}

        size: int = 1

    class LazyHolder(BaseModel):
        lazy: Lazy = Lazy()

    assert LazyHolder(lazy=Lazy(size=2)).lazy == Lazy(size=2)
    assert Lazy not in _DERIVED
    assert LazyHolder.model_validate({"lazy": {"size": "3"}}).lazy == Lazy(size=3)


async def test_a_plugin_config_made_from_a_mapping_keeps_what_was_given() -> None:
    received: list[Outer] = []
    plugin = SimpleNamespace(name="p", Config=Outer, apply=lambda ctx, c: received.append(c))

    await Context().plugin(plugin, {"label": "x"})

    assert received == [Outer(label="x")]
    assert received[0].model_fields_set == {"label"}
    assert type(received[0].ratio) is int  # the default, as declared: not validated


_WITHOUT_PYDANTIC = """
import sys
from typing import ClassVar
from tether.kernel.model_values import ModelValue, exactly, strings

class Config(ModelValue):
    __config_fast__: ClassVar = {"name": exactly(str), "tags": lambda v: strings(v)}

    name: str = ""
    tags: tuple[str, ...] = ()

made = Config(name="a", tags=["x"])
print(made, Config.model_validate({"tags": ("y",)}), "pydantic" in sys.modules)
"""


def test_a_plainly_valid_value_is_made_without_importing_pydantic(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_PYDANTIC],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )

    assert (done.returncode, done.stdout) == (
        0,
        "Config(name='a', tags=('x',)) Config(name='', tags=('y',)) False\n",
    ), done.stderr
