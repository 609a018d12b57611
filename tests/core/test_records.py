"""Contract of `tether.core.records.layout_twin`.

- `layout_twin(record)` returns a plain class with exactly `record`'s `__slots__`. An instance of
  it, filled with plain stores and given `record` as its `__class__`, is an ordinary `record`
  instance: equal and hashing equal to a constructed one, frozen, `dataclasses.replace`-able, with
  the record's repr.
- It refuses, with a `TypeError` naming the class, a class without `__slots__`, one whose slots
  include `__dict__` or `__weakref__`, and one with a base other than `object`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pytest

from tether.core.records import layout_twin


@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int = 0


_PointLayout: Any = layout_twin(Point)


def build_point(x: int, y: int) -> Point:
    """A `Point` built the hot-path way: plain stores on the twin, then the class swap."""
    record = _PointLayout()
    record.x = x
    record.y = y
    record.__class__ = Point
    return record  # type: ignore[no-any-return]


# -- the twin -----------------------------------------------------------------------------------


def test_the_twin_has_exactly_the_records_slots() -> None:
    assert _PointLayout.__slots__ == ("x", "y")
    assert _PointLayout.__bases__ == (object,)
    assert not hasattr(_PointLayout(), "__dict__")


def test_the_twin_is_a_distinct_plain_class() -> None:
    assert _PointLayout is not Point
    assert not issubclass(_PointLayout, Point)
    assert _PointLayout.__name__ == "_PointLayout"


# -- an instance built through the twin ---------------------------------------------------------


def test_a_record_built_through_its_twin_is_an_instance_of_the_record() -> None:
    point = build_point(1, 2)

    assert type(point) is Point
    assert (point.x, point.y) == (1, 2)


def test_a_record_built_through_its_twin_equals_one_built_by_the_constructor() -> None:
    point = build_point(1, 2)

    assert point == Point(1, 2)
    assert point != Point(1, 3)
    assert hash(point) == hash(Point(1, 2))


def test_a_record_built_through_its_twin_is_frozen() -> None:
    point = build_point(1, 2)

    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.y
    assert (point.x, point.y) == (1, 2)


def test_a_record_built_through_its_twin_works_with_replace() -> None:
    point = build_point(1, 2)

    moved = dataclasses.replace(point, y=3)

    assert moved == Point(1, 3)
    assert type(moved) is Point
    assert point == Point(1, 2)


def test_a_record_built_through_its_twin_has_the_records_repr() -> None:
    assert repr(build_point(1, 2)) == "Point(x=1, y=2)"
    assert repr(build_point(1, 2)) == repr(Point(1, 2))


# -- refusals -----------------------------------------------------------------------------------


def test_a_class_without_slots_is_refused() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        x: int

    with pytest.raises(TypeError) as caught:
        layout_twin(NoSlots)

    assert str(caught.value) == "NoSlots must declare __slots__ as a tuple or list of names"


def test_a_class_with_a_weakref_slot_is_refused() -> None:
    @dataclass(frozen=True, slots=True, weakref_slot=True)
    class WeaklyReferenced:
        x: int

    with pytest.raises(TypeError) as caught:
        layout_twin(WeaklyReferenced)

    assert str(caught.value) == "WeaklyReferenced must declare its fields as __slots__ only"


def test_a_class_with_a_dict_slot_is_refused() -> None:
    class WithDict:
        __slots__ = ("__dict__", "x")

    with pytest.raises(TypeError) as caught:
        layout_twin(WithDict)

    assert str(caught.value) == "WithDict must declare its fields as __slots__ only"


def test_a_class_with_a_base_other_than_object_is_refused() -> None:
    class Base:
        __slots__ = ("x",)

    class Derived(Base):
        __slots__ = ("y",)

    with pytest.raises(TypeError) as caught:
        layout_twin(Derived)

    assert str(caught.value) == "Derived must derive from object only"


def test_a_class_with_private_slots_is_refused() -> None:
    class Hidden:
        __slots__ = ("__secret",)

    with pytest.raises(TypeError) as caught:
        layout_twin(Hidden)

    assert str(caught.value) == (
        "Hidden has private (name-mangled) slots, which a twin cannot share: __secret"
    )
