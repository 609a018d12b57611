"""What a plugin's `Config` may be, and turning a config mapping into it.

A `Config` is either
  * a pydantic `BaseModel` subclass: a mapping is validated with `model_validate`; or
  * a dataclass (frozen, by taste) whose fields are typed like a model's — constraints and
    validators in `Annotated` (`Annotated[int, Field(gt=0)]`, `AfterValidator(check)`), pydantic's
    model config in a plain `__pydantic_config__` dict (`{"extra": "forbid"}`), and a check of
    the whole (a pydantic "after" model validator) as `__config_check__ = staticmethod(check)`:
    `check(config)` raises `ValueError` naming the problem. Its module need
    not import pydantic: the names of `PYDANTIC_NAMES` it uses in annotations are imported under
    `TYPE_CHECKING` and resolved here. An instance is made by calling the class; a mapping is
    validated by a pydantic model derived from its fields (made once per class, when the first
    mapping needs it), so every message is the one the same fields on a `BaseModel` give.

Either way an instance of the `Config` given where a mapping is expected is already valid and is
handed to the plugin as is, and pydantic is imported only when a mapping must be validated: an
empty mapping for a dataclass whose every field has a default is `Config()` (pydantic does not
validate defaults either). So a boot whose plugins are given their configs as values, or take
their defaults, never imports pydantic.

Owns: recognising the two kinds, and validation into them. Does not own: a plugin's shape
(plugins.py) or where the message is prefixed with a file and an entry (boot.py).
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .errors import InvalidPluginConfig, describe_validation_error

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["PYDANTIC_NAMES", "is_config_model", "is_pydantic_model", "make_config"]

PYDANTIC_NAMES = (
    "AfterValidator",
    "AllowInfNan",
    "BeforeValidator",
    "Field",
    "PositiveInt",
    "SecretStr",
    "StrictInt",
    "ValidationInfo",
)
"""The pydantic names a dataclass `Config`'s annotations may use without importing them at run
time (under `TYPE_CHECKING`); a module's own global of the same name wins."""

T = TypeVar("T")

_DERIVED: dict[type, type[BaseModel]] = {}  # per dataclass: the model that validates its mappings


def is_pydantic_model(model: object) -> bool:
    """Whether `model` is a pydantic `BaseModel` subclass (never importing pydantic: a class
    cannot subclass `BaseModel` before pydantic is imported)."""
    pydantic = sys.modules.get("pydantic")
    base = getattr(pydantic, "BaseModel", None) if pydantic is not None else None
    return isinstance(model, type) and base is not None and issubclass(model, base)


def is_config_model(model: object) -> bool:
    """Whether `model` may be a plugin's `Config`: a pydantic model or a dataclass."""
    return is_pydantic_model(model) or (isinstance(model, type) and dataclasses.is_dataclass(model))


def make_config(plugin: str, model: type[T], config: object) -> T:
    """`config` as an instance of `model`: an instance as is, a mapping (or None) validated
    (anything else too: pydantic's message says what it expected).
    Raises InvalidPluginConfig naming the field, with the message pydantic gives."""
    if isinstance(config, model):
        return config
    values: object = dict(config) if isinstance(config, Mapping) else config
    if values is None:
        values = {}
    if values == {} and not is_pydantic_model(model) and _all_defaulted(model):
        default = model()
        if _checked(default):
            return default
    from pydantic import ValidationError

    validator = cast("type[BaseModel]", model) if is_pydantic_model(model) else _derived(model)
    try:
        validated = validator.model_validate(values)
    except ValidationError as error:
        raise InvalidPluginConfig(
            plugin, describe_validation_error(error, root="config")
        ) from error
    if validator is model:
        return cast(T, validated)
    return model(**{name: getattr(validated, name) for name in type(validated).model_fields})


def _checked(config: object) -> bool:
    """Whether `config` passes its `__config_check__` (if it has one)."""
    check = getattr(type(config), "__config_check__", None)
    try:
        if check is not None:
            check(config)
    except ValueError:
        return False
    return True


def _all_defaulted(model: type) -> bool:
    return all(
        each.default is not dataclasses.MISSING or each.default_factory is not dataclasses.MISSING
        for each in dataclasses.fields(model)
        if each.init
    )


def _derived(model: type) -> type[BaseModel]:
    """A pydantic model with `model`'s name, fields, defaults and `__pydantic_config__`."""
    if (found := _DERIVED.get(model)) is not None:
        return found
    import pydantic
    from pydantic import ConfigDict, Field, create_model, model_validator

    own = vars(sys.modules[model.__module__])
    names = {name: getattr(pydantic, name) for name in PYDANTIC_NAMES if name not in own}
    hints = typing.get_type_hints(model, localns=names, include_extras=True)
    fields: dict[str, Any] = {}
    for each in dataclasses.fields(model):
        if not each.init:
            continue
        if each.default is not dataclasses.MISSING:
            fields[each.name] = (hints[each.name], each.default)
        elif each.default_factory is not dataclasses.MISSING:
            fields[each.name] = (hints[each.name], Field(default_factory=each.default_factory))
        else:
            fields[each.name] = (hints[each.name], ...)
    settings = ConfigDict(**getattr(model, "__pydantic_config__", {}))  # type: ignore[typeddict-item]
    validators: dict[str, Any] = {}
    if (check := getattr(model, "__config_check__", None)) is not None:

        def checked(config: BaseModel) -> BaseModel:
            check(config)
            return config

        validators["config_check"] = model_validator(mode="after")(checked)
    derived: type[BaseModel] = create_model(
        model.__name__,
        __config__=settings,
        __module__=model.__module__,
        __validators__=validators,
        **fields,
    )
    _DERIVED[model] = derived
    return derived
