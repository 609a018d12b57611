"""A lazy reference to a pydantic argument model: `ModelRef("package.module:Name")`.

A boot defines every built-in tool and most never run; `define_tool(parameters=ModelRef(...))`
takes the model-facing schema from the precomputed table (`tether.tools.precomputed`, keyed by
`ModelRef.key`) and imports the model — and pydantic — only when the tool's first call (or
`check_arguments`) validates. A model made per configuration is a factory reference:
`ModelRef("package.module:factory", (2000,))` calls `factory(2000)` at resolution.

Owns: the reference (what it names, its table key, checked when it is made) and resolving it to
the model class. Does not own the table or what a definition does with the model
(`tether.tools.definition`).
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["FactoryArg", "ModelRef"]

FactoryArg: TypeAlias = "str | int | float | bool | None"
"""A factory reference's argument: a JSON scalar, written into the table key."""


def _is_dotted(name: str) -> bool:
    return all(part.isidentifier() for part in name.split("."))


@dataclass(frozen=True, slots=True)
class ModelRef:
    """A pydantic model (`args` empty) or a model factory called with `args`, named by
    `"<module>:<attribute>"` and imported at first use."""

    target: str
    args: tuple[FactoryArg, ...] = ()

    def __post_init__(self) -> None:
        module, colon, attribute = self.target.partition(":")
        if not (colon and _is_dotted(module) and _is_dotted(attribute)):
            raise ValueError(
                f"ModelRef({self.target!r}): expected '<module>:<attribute>', e.g."
                " 'mypackage.args:ReadArgs'"
            )
        if not isinstance(self.args, tuple) or not all(
            a is None or isinstance(a, str | int | float | bool) for a in self.args
        ):
            raise ValueError(
                f"ModelRef({self.target!r}): factory args must be a tuple of JSON scalars,"
                f" got {self.args!r}"
            )

    @property
    def key(self) -> str:
        """The precomputed table's key: the target, and a factory's arguments as JSON, e.g.
        `tether.plugins.fs.args:read_args_model(2000)`."""
        if not self.args:
            return self.target
        return f"{self.target}({', '.join(json.dumps(a) for a in self.args)})"

    @property
    def factory(self) -> str | None:
        """The factory's target for a factory reference, else None."""
        return self.target if self.args else None

    def resolve(self) -> type[BaseModel]:
        """Import the target (and pydantic with it) and return the model class; a factory
        reference calls the factory. Raises TypeError when the target is not a pydantic model
        (or the factory does not return one)."""
        from pydantic import BaseModel

        module, _, attribute = self.target.partition(":")
        found: Any = importlib.import_module(module)
        for part in attribute.split("."):
            found = getattr(found, part)
        model: object = found(*self.args) if self.args else found
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise TypeError(f"ModelRef({self.key!r}) is {model!r}, not a pydantic model class")
        return model
