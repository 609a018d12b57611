"""Fast construction of frozen records: what the hot paths use instead of a frozen `__init__`.

Owns `layout_twin`. A frozen dataclass sets each field in `__init__` through
`object.__setattr__`, because its own `__setattr__` refuses; in CPython 3.11 that costs about ten
times a plain slot store. A layout twin is a plain class with exactly the record's `__slots__`:
build an instance of the twin with plain stores, then assign `__class__` to the record's class
(CPython allows it between classes with the same slots). The result is an ordinary instance of
the record — frozen, equal, hashable and `dataclasses.replace`-able like any other.
"""

from __future__ import annotations

from typing import Any

__all__ = ["layout_twin"]


def layout_twin(record: type) -> type[Any]:
    """A plain class with `record`'s slots, for building `record` instances with plain stores.

    Raises `TypeError` for a class without `__slots__` or with `__dict__`/`__weakref__` slots.
    """
    slots = record.__dict__.get("__slots__")
    if isinstance(slots, list):
        slots = tuple(slots)
    if not isinstance(slots, tuple):
        raise TypeError(f"{record.__name__} must declare __slots__ as a tuple or list of names")
    if "__dict__" in slots or "__weakref__" in slots:
        raise TypeError(f"{record.__name__} must declare its fields as __slots__ only")
    private = [name for name in slots if name.startswith("__") and not name.endswith("__")]
    if private:
        raise TypeError(
            f"{record.__name__} has private (name-mangled) slots, which a twin cannot share: "
            + ", ".join(private)
        )
    if record.__bases__ != (object,):
        raise TypeError(f"{record.__name__} must derive from object only")
    return type(f"_{record.__name__}Layout", (), {"__slots__": slots, "__module__": __name__})
