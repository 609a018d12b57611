"""`ModelValue`: a `ConfigValue` that validates when it is constructed, as a pydantic model does.

A `ConfigValue` (config_models.py) is valid by trust: calling the class checks nothing. That
suits a plugin's `Config`, which the kernel makes from a mapping; it does not suit a value that
library code builds by hand and that other configs nest (`SandboxSettings`, `EnvPolicy`): built
with a bad value it must fail there, with pydantic's message, as the `BaseModel` it replaces did.

A `ModelValue` subclass declares its fields as a `ConfigValue` does (pydantic's validators in
`Annotated`, `__pydantic_config__`) and, per field, a *fast check* in `__config_fast__`: a
function given the value that returns the field's value when it is plainly valid and already
what pydantic would make of it (`["a"]` → `("a",)` for a tuple of strings), or `SLOW` when only
pydantic can say (a value to coerce, or a bad one whose message pydantic words). Constructing,
`model_validate` and a mapping nested in a pydantic model then take the fast path when every given
field passes its check — no pydantic — and otherwise validate through the model the kernel derives
from the fields: the same values, and the same `ValidationError`, as the `BaseModel`.

It keeps what of `BaseModel`'s API its users call: `model_validate`, `model_fields_set` (the
fields given, not defaulted), `model_dump(exclude_unset=...)`, `model_copy(update=...)` (like
pydantic's, not validated), iterating as `(name, value)` pairs, and
`__get_pydantic_core_schema__`, so it may be the type of a field of a pydantic model or of a
`ConfigValue` (an instance is kept as is; a mapping is validated as `model_validate` does, its
errors at the locations of the enclosing model; defining that model derives nothing).
`__config_before__` may rewrite an input before the mapping path (a bare `"read-only"` for a
sandbox), as a pydantic "before" model validator.

Owns: that base. Does not own: the derived model (config_models.py) or any config's fields.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final, Self

from .config_models import ConfigValue, _derived

if TYPE_CHECKING:
    from pydantic import BaseModel, GetCoreSchemaHandler, GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import CoreSchema

__all__ = ["SLOW", "ModelValue", "exactly", "optional", "string_tuple", "strings"]


class _Slow:
    def __repr__(self) -> str:
        return "SLOW"


SLOW: Final[Any] = _Slow()
"""What a fast check returns when pydantic must validate the value (see the module note)."""


def exactly(*types: type | None) -> Callable[[object], object]:
    """The fast check of a field that is one of `types` (None for None) and needs no more: a
    value of exactly such a type (not a subclass: pydantic turns a `bool` into `1` for an `int`,
    a `str` subclass into a `str`), else `SLOW`."""
    kinds = tuple(type(None) if kind is None else kind for kind in types)

    def check(value: object) -> object:
        return value if type(value) in kinds else SLOW

    return check


def strings(value: object) -> tuple[str, ...] | None:
    """`value` as a `tuple[str, ...]` field holds it when it is a list or tuple of exact strings
    (as pydantic makes it), else None."""
    if type(value) is not tuple and type(value) is not list:
        return None
    items: list[object] | tuple[object, ...] = value
    if all(type(item) is str for item in items):
        return tuple(items)  # type: ignore[arg-type]
    return None


def string_tuple(value: object) -> object:
    """The fast check of a `tuple[str, ...]` field with no check of its own (see `strings`)."""
    found = strings(value)
    return SLOW if found is None else found


def optional(check: Callable[[object], object]) -> Callable[[object], object]:
    """The fast check of a field that may also be None."""

    def checked(value: object) -> object:
        return None if value is None else check(value)

    return checked


class ModelValue(ConfigValue):
    """A `ConfigValue` validated on construction, with the pydantic-model API of the module
    note."""

    __config_fast__: ClassVar[Mapping[str, Callable[[Any], Any]]] = {}
    """Per field: its value when plainly valid, else `SLOW` (a field without one is slow)."""

    def __init__(self, **values: Any) -> None:
        fast = type(self)._fast(values)
        if fast is None:
            made = type(self)._from_model(_derived(type(self)).model_validate(values))
            given = _given(made)
            fast = {name: getattr(made, name) for name, _ in self.__config_fields__}
        else:
            given = frozenset(values)
        super().__init__(**fast)
        object.__setattr__(self, "_fields_set", given)

    @classmethod
    def __config_before__(cls, value: object) -> object:
        """The input a mapping (or an instance) is validated from; `value` itself by default."""
        return value

    @classmethod
    def _fast(cls, values: Mapping[str, Any]) -> dict[str, Any] | None:
        """Every given field's value when each passes its fast check, else None."""
        checks = cls.__config_fast__
        result: dict[str, Any] = {}
        for name, value in values.items():
            check = checks.get(name)
            if check is None:
                return None
            checked = check(value)
            if checked is SLOW:
                return None
            result[name] = checked
        return result

    @classmethod
    def fast_check(cls, value: object) -> object:
        """The fast check of a field of this type: an instance as is, a mapping (or what
        `__config_before__` accepts) whose every field passes its own check made into one,
        else `SLOW`."""
        value = cls.__config_before__(value)
        if isinstance(value, cls):
            return value
        if type(value) is not dict or not all(type(key) is str for key in value):
            return SLOW
        fast = cls._fast(value)
        return SLOW if fast is None else cls._trusted(fast, frozenset(value))

    @classmethod
    def _trusted(cls, values: Mapping[str, Any], given: frozenset[str]) -> Self:
        """An instance of already valid `values` (the others at their defaults)."""
        made = cls.__new__(cls)
        ConfigValue.__init__(made, **values)
        object.__setattr__(made, "_fields_set", given)
        return made

    @classmethod
    def _from_model(cls, model: BaseModel) -> Self:
        """The instance a derived model's validated instance holds."""
        return cls._trusted(
            {name: getattr(model, name) for name, _ in cls.__config_fields__},
            frozenset(model.model_fields_set),
        )

    @classmethod
    def __config_from_model__(cls, model: BaseModel) -> Self:
        """What `tether.kernel.config_models.make_config` makes of a validated mapping."""
        return cls._from_model(model)

    @classmethod
    def model_validate(cls, obj: object) -> Self:
        """An instance from a mapping (or what `__config_before__` accepts), or `obj` itself when
        it is one. Raises pydantic's `ValidationError` for a bad one."""
        obj = cls.__config_before__(obj)
        if isinstance(obj, cls):
            return obj
        if isinstance(obj, Mapping) and all(type(key) is str for key in obj):
            fast = cls._fast(obj)
            if fast is not None:
                return cls._trusted(fast, frozenset(obj))
        return cls._from_model(_derived(cls).model_validate(obj))

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        """`(name, value)` per field, as a pydantic model iterates (`dict(config)`)."""
        return iter([(name, getattr(self, name)) for name, _ in self.__config_fields__])

    @property
    def model_fields_set(self) -> set[str]:
        """The fields given when it was made (not left at their defaults)."""
        return set(_given(self))

    def model_dump(self, *, exclude_unset: bool = False) -> dict[str, Any]:
        """The fields as a dict (nested values dumped too); `exclude_unset`: only those given."""
        return {
            name: _dumped(getattr(self, name), exclude_unset)
            for name, _ in self.__config_fields__
            if not exclude_unset or name in _given(self)
        }

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A copy with `update`'s fields replaced, not validated (as pydantic's)."""
        values = {name: getattr(self, name) for name, _ in self.__config_fields__}
        values.update(update or {})
        return type(self)._trusted(values, _given(self) | frozenset(update or ()))

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[Any], handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        """Validate with `model_validate` (a `ValidationError` it raises is reported at the
        field's location) and dump with `model_dump`; the derived model is made only when a value
        needs it, not when the enclosing model is."""
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(
            cls.model_validate,
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda value: value.model_dump() if isinstance(value, ModelValue) else value
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """The derived model's JSON schema."""
        return handler(_derived(cls).__pydantic_core_schema__)


def _given(config: ModelValue) -> frozenset[str]:
    """The fields given when `config` was made (kept beside its fields, not one of them)."""
    given: frozenset[str] = vars(config)["_fields_set"]
    return given


def _dumped(value: object, exclude_unset: bool) -> object:
    if isinstance(value, ModelValue):
        return value.model_dump(exclude_unset=exclude_unset)
    if isinstance(value, dict):
        return dict(value)
    return value
