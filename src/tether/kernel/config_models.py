"""What a plugin's `Config` may be, and turning a config mapping into it.

A `Config` is either
  * a pydantic `BaseModel` subclass: a mapping is validated with `model_validate`; or
  * a `ConfigValue` subclass (or a dataclass) whose fields are typed like a model's: constraints
    and validators in `Annotated` (`Annotated[int, Field(gt=0)]`, `AfterValidator(check)`),
    pydantic's model config in a plain `__pydantic_config__` dict (`{"extra": "forbid"}`), and
    a check of the whole (a pydantic "after" model validator) as
    `__config_check__ = staticmethod(check)`: `check(config)` raises `ValueError` naming the
    problem. Its module need not import pydantic: the names of `PYDANTIC_NAMES` it uses in
    annotations are imported under `TYPE_CHECKING` and resolved here. An instance is made by
    calling the class; a mapping is validated by a pydantic model derived from its fields (made
    once per class, when the first mapping needs it), so every message is the one the same
    fields on a `BaseModel` give.

`ConfigValue` is a frozen, keyword-only record like a dataclass (type checkers treat it as one),
but its methods are generic, not generated: a 3.11 `@dataclass(frozen=True)` compiles six
methods per class, which costs more than pydantic building the model (bench/README, issue 36,
third pass). A field's default is shared by every instance: make it immutable (a tuple, not a
list), or never mutate it where the declared type is a list or a dict.

A `ConfigValue` records which fields it was given (`fields_given`, pydantic's
`model_fields_set`), may be a field of another config (validated there by its derived model, an
instance passing as is) and has pydantic's `model_validate`. With `__config_validate__ = True`
its constructor validates as a pydantic model does (the same `ValidationError`, the same
conversions): values exactly of a plain declared type (`str`, `bool`, `int`, `float`, optionally
`| None`: no constraint) are taken as they are, anything else goes through the derived model, so
`Name(project_dir="/w")` needs no pydantic and `Name(api_key="x")` gets its `SecretStr`. A name an
annotation uses that its module provides lazily (PEP 562 `__getattr__`) is resolved through it
when the model is derived.

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
import inspect
import sys
import types
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from .errors import InvalidPluginConfig, describe_validation_error

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "PYDANTIC_NAMES",
    "ConfigValue",
    "fields_given",
    "is_config_model",
    "is_pydantic_model",
    "make_config",
]

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

_MISSING: Any = dataclasses.MISSING


@typing.dataclass_transform(kw_only_default=True, frozen_default=True)
class ConfigValue:
    """Base of a plugin's `Config` that needs no pydantic to exist (see the module note):
    `Name(field=value, ...)` with keywords only, the others at their class defaults; frozen;
    equal when of the same class with equal fields; hashable when its fields are."""

    __config_fields__: typing.ClassVar[tuple[tuple[str, Any], ...]] = ()
    """(name, default or `dataclasses.MISSING`) per field, the base classes' first."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = dict(cls.__config_fields__)
        for name, annotation in _own_annotations(cls).items():
            if not _is_class_var(annotation):
                fields[name] = cls.__dict__.get(name, _MISSING)
        cls.__config_fields__ = tuple(fields.items())

    __config_validate__: typing.ClassVar[bool] = False
    """Whether the constructor validates its values (see the module note)."""

    def __init__(self, **values: Any) -> None:
        if not self.__config_validate__:
            self._fill(values)
        elif _plain(type(self), values):
            self._fill(dict(values))
            if not _checked(self):  # the derived model raises the check's ValidationError
                _derived(type(self)).model_validate(values)
        else:
            validated = _derived(type(self)).model_validate(values)  # raises ValidationError
            self._fill({name: getattr(validated, name) for name in validated.model_fields_set})

    def _fill(self, values: dict[str, Any]) -> None:
        object.__setattr__(self, "_config_given", frozenset(values))
        for name, default in self.__config_fields__:
            if name in values:
                value = values.pop(name)
            elif default is _MISSING:
                raise TypeError(f"{type(self).__name__}() missing keyword argument {name!r}")
            else:
                value = default
            object.__setattr__(self, name, value)
        if values:
            raise TypeError(
                f"{type(self).__name__}() got an unexpected keyword argument {next(iter(values))!r}"
            )

    @classmethod
    def _from_valid(cls, values: dict[str, Any]) -> Any:
        """An instance of already validated `values` (the derived model's), not validated again."""
        made = object.__new__(cls)
        made._fill(dict(values))
        return made

    @classmethod
    def __config_from_model__(cls, model: BaseModel) -> Self:
        """The instance a derived model's validated instance holds, with the fields it was
        given (`make_config`)."""
        made: Self = cls._from_valid(
            {name: getattr(model, name) for name in model.model_fields_set}
        )
        return made

    @classmethod
    def model_validate(cls, obj: object) -> Self:
        """`obj` (a mapping, or an instance: as is) validated by the derived model, as a
        pydantic model's `model_validate` (raises pydantic's `ValidationError`)."""
        if isinstance(obj, cls):
            return obj
        return cls.__config_from_model__(_derived(cls).model_validate(obj))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """As a field of another config: an instance as is, anything else validated by this
        class's derived model (its messages and locations, as a nested pydantic model's)."""
        from pydantic_core import core_schema

        derived = _derived(cls)

        def validate(value: Any, inner: Any) -> Any:
            return value if isinstance(value, cls) else cls.__config_from_model__(inner(value))

        return core_schema.no_info_wrap_validator_function(
            validate, handler.generate_schema(derived)
        )

    def __setattr__(self, name: str, value: object) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name, _ in self.__config_fields__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name, _ in self.__config_fields__)
        return f"{type(self).__qualname__}({shown})"


def fields_given(config: object) -> frozenset[str]:
    """The fields `config` was given (not left at their defaults): a pydantic model's
    `model_fields_set`, what a `ConfigValue` was made with (from a mapping: its keys), and every
    field of a dataclass (which does not record it)."""
    fields_set = getattr(config, "model_fields_set", None)
    if fields_set is not None:
        return frozenset(fields_set)
    if isinstance(config, ConfigValue):
        given: frozenset[str] = object.__getattribute__(config, "_config_given")
        return given
    return frozenset(name for name, _, _ in _fields(type(config)))


_PLAIN: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "bool": (bool,),
    "int": (int,),
    "float": (float,),
}


_PLAIN_SETTINGS = frozenset({"extra", "frozen", "populate_by_name"})
"""The model settings that leave a plain value as it is."""


def _plain(model: type[ConfigValue], values: Mapping[str, Any]) -> bool:
    """Whether every one of `values` is exactly of its field's plain declared type, so pydantic
    would take it unchanged (a field with a constraint or validator is `Annotated`: not plain),
    and every required field is among them (else pydantic says which is missing)."""
    if set(getattr(model, "__pydantic_config__", {})) - _PLAIN_SETTINGS:
        return False  # a setting such as str_strip_whitespace changes plain values too
    if any(default is _MISSING and name not in values for name, default in model.__config_fields__):
        return False
    annotations: dict[str, object] = {}
    for klass in reversed(model.__mro__):
        if klass is not object and issubclass(klass, ConfigValue):
            annotations.update(_own_annotations(klass))
    for name, value in values.items():
        annotation = _written(annotations.get(name))
        if annotation is None:
            return False
        plain, _, optional = annotation.partition(" | ")
        if value is None and optional == "None":
            continue
        if (optional not in ("", "None")) or type(value) not in _PLAIN.get(plain, ()):
            return False
    return True


def _written(annotation: object) -> str | None:
    """A plain annotation as written (`"str | None"`), also when it was evaluated (a module
    without `from __future__ import annotations`); None for any other."""
    if isinstance(annotation, str):
        return annotation
    plain = {str: "str", bool: "bool", int: "int", float: "float"}
    if annotation in plain:
        return plain[annotation]
    parts = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else ()
    if len(parts) == 2 and parts[1] is type(None) and parts[0] in plain:
        return f"{plain[parts[0]]} | None"
    return None


def _own_annotations(cls: type) -> dict[str, object]:
    """The annotations `cls` itself declares, unevaluated (as written)."""
    if sys.version_info >= (3, 14):
        import annotationlib

        return dict(inspect.get_annotations(cls, format=annotationlib.Format.STRING))
    return dict(inspect.get_annotations(cls))


def _is_class_var(annotation: object) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar", "Final", "typing.Final"))
    return typing.get_origin(annotation) is typing.ClassVar or annotation is typing.ClassVar


def _fields(model: type) -> list[tuple[str, Any, Any]]:
    """(name, default, default factory) of a `ConfigValue` or dataclass's init fields."""
    if issubclass(model, ConfigValue):
        return [(name, default, _MISSING) for name, default in model.__config_fields__]
    return [
        (each.name, each.default, each.default_factory)
        for each in dataclasses.fields(cast(Any, model))
        if each.init
    ]


_DERIVED: dict[type, type[BaseModel]] = {}  # per dataclass: the model that validates its mappings


def is_pydantic_model(model: object) -> bool:
    """Whether `model` is a pydantic `BaseModel` subclass (never importing pydantic: a class
    cannot subclass `BaseModel` before pydantic is imported)."""
    pydantic = sys.modules.get("pydantic")
    base = getattr(pydantic, "BaseModel", None) if pydantic is not None else None
    return isinstance(model, type) and base is not None and issubclass(model, base)


def is_config_model(model: object) -> bool:
    """Whether `model` may be a plugin's `Config`: a pydantic model, a `ConfigValue` or a
    dataclass."""
    return is_pydantic_model(model) or (
        isinstance(model, type)
        and (issubclass(model, ConfigValue) or dataclasses.is_dataclass(model))
    )


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
    if (made := getattr(model, "__config_from_model__", None)) is not None:
        return cast(T, made(validated))  # as validated, with the fields given
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
        default is not _MISSING or factory is not _MISSING for _, default, factory in _fields(model)
    )


def _hints(model: type, module: Any, names: dict[str, Any]) -> dict[str, Any]:
    """`model`'s type hints, a name its module provides lazily (PEP 562) resolved through it."""
    lazy = getattr(module, "__getattr__", None)
    while True:
        try:
            return typing.get_type_hints(model, localns=names, include_extras=True)
        except NameError as error:
            if lazy is None or error.name is None or error.name in names:
                raise
            names[error.name] = lazy(error.name)


def _derived(model: type) -> type[BaseModel]:
    """A pydantic model with `model`'s name, fields, defaults and `__pydantic_config__`."""
    if (found := _DERIVED.get(model)) is not None:
        return found
    import pydantic
    from pydantic import ConfigDict, Field, create_model, model_validator

    module = sys.modules[model.__module__]
    own = vars(module)
    names = {name: getattr(pydantic, name) for name in PYDANTIC_NAMES if name not in own}
    hints = _hints(model, module, names)
    fields: dict[str, Any] = {}
    for name, default, factory in _fields(model):
        if default is not _MISSING:
            fields[name] = (hints[name], default)
        elif factory is not _MISSING:
            fields[name] = (hints[name], Field(default_factory=factory))
        else:
            fields[name] = (hints[name], ...)
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
