"""Contract of `tether.core.json` (spec Appendix A, §8 items 5-6).

`snapshot(value)` returns deep-frozen JSON detached from `value`, or raises `NotLosslessJson`
naming the path and the problem. JSON is, by exact type: `None`, `bool`, `int`, `str`, a finite
`float` that is not `-0.0`, `list`, `dict` with `str` keys, and the frozen containers (reused
as-is). Shared references are copied on each visit; a container on its own path is a cycle.
The walk is iterative, so 10,000-deep nesting works. `FrozenDict`/`FrozenList` refuse every
mutation with `TypeError`, equal plain containers, and validate what they are built from.
`is_json_value` agrees with `snapshot`; `thaw` gives back plain mutable containers.
"""

from __future__ import annotations

import copy
import enum
import json
import math
import pickle
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.core.json import (
    FrozenDict,
    FrozenList,
    JsonValue,
    NotLosslessJson,
    is_json_value,
    snapshot,
    thaw,
)


def _nested_lists(depth: int) -> list[Any]:
    root: list[Any] = []
    current = root
    for _ in range(depth):
        child: list[Any] = []
        current.append(child)
        current = child
    current.append("bottom")
    return root


def _nested_dicts(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    current = root
    for _ in range(depth):
        child: dict[str, Any] = {}
        current["k"] = child
        current = child
    current["k"] = "bottom"
    return root


def _descend(value: Any, key: int | str, depth: int) -> tuple[set[type], Any]:
    """Follow `key` `depth` times; return the container types met and what is at the bottom."""
    kinds: set[type] = set()
    for _ in range(depth):
        kinds.add(type(value))
        value = value[key]
    kinds.add(type(value))
    return kinds, value[key]


def _message(value: object) -> str:
    with pytest.raises(NotLosslessJson) as caught:
        snapshot(value)
    return str(caught.value)


# --- accepted values ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, True, False, 0, -7, 2**53 + 1, 10**100, "", "héllo", 1.5])
def test_a_scalar_comes_back_as_the_same_object(value: object) -> None:
    assert snapshot(value) is value


def test_a_string_with_a_lone_surrogate_is_accepted() -> None:
    assert snapshot("\ud800") == "\ud800"


def test_positive_zero_is_accepted() -> None:
    result = snapshot(0.0)
    assert result == 0.0
    assert math.copysign(1.0, result) == 1.0


def test_a_dict_becomes_an_equal_frozen_dict_copy() -> None:
    original = {"a": 1, "b": "x", "c": 2.5}
    result = snapshot(original)
    assert type(result) is FrozenDict
    assert result == original
    assert result is not original


def test_a_list_becomes_an_equal_frozen_list_copy() -> None:
    original = [1, "x", None]
    result = snapshot(original)
    assert type(result) is FrozenList
    assert result == original
    assert result is not original


def test_nested_containers_are_frozen_all_the_way_down() -> None:
    result = snapshot({"a": [{"b": [1]}, []], "c": {}})
    assert isinstance(result, FrozenDict)
    assert type(result["a"]) is FrozenList
    assert type(result["a"][0]) is FrozenDict
    assert type(result["a"][0]["b"]) is FrozenList
    assert type(result["a"][1]) is FrozenList
    assert type(result["c"]) is FrozenDict


def test_the_snapshot_does_not_see_later_changes_to_the_original() -> None:
    inner = [1]
    original: dict[str, Any] = {"a": inner}
    result = snapshot(original)
    inner.append(2)
    original["b"] = 3
    assert result == {"a": [1]}


def test_key_order_is_insertion_order() -> None:
    result = snapshot({"b": 1, "2": 2, "a": 3})
    assert isinstance(result, dict)
    assert list(result) == ["b", "2", "a"]


def test_an_already_frozen_dict_is_returned_as_is() -> None:
    frozen = snapshot({"a": [1, {"b": 2}]})
    assert snapshot(frozen) is frozen


def test_an_already_frozen_list_is_returned_as_is() -> None:
    frozen = snapshot([{"a": 1}, [2]])
    assert snapshot(frozen) is frozen


def test_frozen_children_are_reused_inside_a_new_snapshot() -> None:
    child = snapshot({"deep": [1, 2]})
    result = snapshot({"child": child, "list": [child]})
    assert isinstance(result, dict)
    assert result["child"] is child
    assert result["list"][0] is child  # type: ignore[index]


def test_a_shared_reference_is_copied_on_each_visit() -> None:
    shared = [1]
    result = snapshot([shared, shared, {"again": shared}])
    assert result == [[1], [1], {"again": [1]}]
    assert isinstance(result, list)
    assert result[0] is not result[1]
    assert result[0] is not shared


def test_a_shared_reference_nested_inside_itself_elsewhere_is_not_a_cycle() -> None:
    shared: dict[str, Any] = {"x": 1}
    holder = {"shared": shared}
    assert snapshot([shared, holder, [holder, shared]]) == [
        {"x": 1},
        {"shared": {"x": 1}},
        [{"shared": {"x": 1}}, {"x": 1}],
    ]


@pytest.mark.parametrize("depth", [5_000, 10_000])
def test_deeply_nested_lists_are_snapshotted_without_recursion(depth: int) -> None:
    kinds, bottom = _descend(snapshot(_nested_lists(depth)), 0, depth)
    assert kinds == {FrozenList}
    assert bottom == "bottom"


@pytest.mark.parametrize("depth", [5_000, 10_000])
def test_deeply_nested_dicts_are_snapshotted_without_recursion(depth: int) -> None:
    kinds, bottom = _descend(snapshot(_nested_dicts(depth)), "k", depth)
    assert kinds == {FrozenDict}
    assert bottom == "bottom"


def test_a_problem_10000_levels_deep_is_reported_with_its_full_path() -> None:
    value = _nested_lists(10_000)
    _descend(value, 0, 9_999)[1].append({1, 2})  # beside "bottom", at index 1
    assert _message(value) == f"value at ${'[0]' * 10_000}[1] is a set, not JSON"


# --- rejected values ---------------------------------------------------------------------------


class Color(enum.IntEnum):
    RED = 1


class Name(str):
    pass


class Ratio(float):
    pass


class MyDict(dict[str, int]):
    pass


class MyList(list[int]):
    pass


@dataclass
class Point:
    x: int


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ((1, 2), "a tuple"),
        ({1, 2}, "a set"),
        (frozenset({1}), "a frozenset"),
        (b"x", "a bytes"),
        (bytearray(b"x"), "a bytearray"),
        (1 + 2j, "a complex"),
        (Decimal("1.5"), "a Decimal"),
        (Color.RED, "a Color"),
        (Name("x"), "a Name"),
        (Ratio(1.5), "a Ratio"),
        (OrderedDict(a=1), "an OrderedDict"),
        (defaultdict(int), "a defaultdict"),
        (MyDict(a=1), "a MyDict"),
        (MyList([1]), "a MyList"),
        (Point(1), "a Point"),
        (object(), "an object"),
        (len, "a builtin_function_or_method"),
    ],
)
def test_a_value_that_is_not_json_is_rejected_naming_its_type(value: object, kind: str) -> None:
    assert _message(value) == f"value at $ is {kind}, not JSON"


@pytest.mark.parametrize(
    ("value", "text"), [(math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf")]
)
def test_a_non_finite_float_is_rejected(value: float, text: str) -> None:
    assert _message(value) == f"value at $ is float {text}, not finite JSON"


def test_negative_zero_is_rejected() -> None:
    assert _message({"x": -0.0}) == "value at $.x is negative zero"


def test_a_nested_problem_names_its_path() -> None:
    assert _message({"a": {"b": [0, 1, {1, 2}]}}) == "value at $.a.b[2] is a set, not JSON"


def test_a_key_that_is_not_an_identifier_is_written_as_a_quoted_index() -> None:
    assert _message({"a b": {"1": [(1,)]}}) == 'value at $["a b"]["1"][0] is a tuple, not JSON'


@pytest.mark.parametrize(("key", "text"), [(1, "1"), (None, "None"), ((1, 2), "(1, 2)")])
def test_a_non_string_key_is_rejected_at_the_object_that_has_it(key: object, text: str) -> None:
    assert _message({"k": {"ok": 1, key: 2}}) == f"value at $.k has a non-string key {text}"


def test_a_non_string_key_on_the_root_object_is_rejected() -> None:
    assert _message({1: "x"}) == "value at $ has a non-string key 1"


def test_a_list_that_contains_itself_is_a_cycle() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    assert _message(loop) == "value at $[1] is a cycle back to an enclosing container"


def test_a_dict_that_contains_itself_is_a_cycle() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    assert _message({"a": loop}) == "value at $.a.self is a cycle back to an enclosing container"


def test_an_indirect_cycle_is_reported_where_it_closes() -> None:
    outer: dict[str, Any] = {"n": 1}
    inner: list[Any] = [outer]
    outer["inner"] = [inner]
    assert _message(outer) == "value at $.inner[0][0] is a cycle back to an enclosing container"


def test_the_error_is_a_type_error_and_carries_the_path() -> None:
    with pytest.raises(TypeError) as caught:
        snapshot([[None, math.nan]])
    assert isinstance(caught.value, NotLosslessJson)
    assert caught.value.path == "$[0][1]"


# --- frozen containers -------------------------------------------------------------------------


DICT_MUTATIONS: list[Callable[[Any], object]] = [
    lambda d: d.__setitem__("a", 2),
    lambda d: d.__setitem__("new", 2),
    lambda d: d.__delitem__("a"),
    lambda d: d.update(b=2),
    lambda d: d.pop("a"),
    lambda d: d.popitem(),
    lambda d: d.clear(),
    lambda d: d.setdefault("z", 1),
    lambda d: d.__ior__({"b": 2}),
]


@pytest.mark.parametrize("mutate", DICT_MUTATIONS)
def test_every_mutator_of_a_frozen_dict_raises_and_changes_nothing(
    mutate: Callable[[Any], object],
) -> None:
    frozen = FrozenDict({"a": 1})
    with pytest.raises(TypeError) as caught:
        mutate(frozen)
    assert str(caught.value) == "frozen JSON object is immutable"
    assert frozen == {"a": 1}


def test_augmented_union_on_a_frozen_dict_raises() -> None:
    frozen = FrozenDict({"a": 1})
    with pytest.raises(TypeError, match=r"^frozen JSON object is immutable$"):
        frozen |= {"b": 2}


LIST_MUTATIONS: list[Callable[[Any], object]] = [
    lambda items: items.append(3),
    lambda items: items.extend([3]),
    lambda items: items.insert(0, 3),
    lambda items: items.remove(1),
    lambda items: items.pop(),
    lambda items: items.sort(),
    lambda items: items.reverse(),
    lambda items: items.clear(),
    lambda items: items.__setitem__(0, 3),
    lambda items: items.__setitem__(slice(0, 1), [3]),
    lambda items: items.__delitem__(0),
    lambda items: items.__iadd__([3]),
    lambda items: items.__imul__(2),
]


@pytest.mark.parametrize("mutate", LIST_MUTATIONS)
def test_every_mutator_of_a_frozen_list_raises_and_changes_nothing(
    mutate: Callable[[Any], object],
) -> None:
    frozen = FrozenList([2, 1])
    with pytest.raises(TypeError) as caught:
        mutate(frozen)
    assert str(caught.value) == "frozen JSON array is immutable"
    assert frozen == [2, 1]


def test_augmented_assignment_on_a_frozen_list_raises() -> None:
    frozen = FrozenList([1])
    with pytest.raises(TypeError, match=r"^frozen JSON array is immutable$"):
        frozen += [2]
    with pytest.raises(TypeError, match=r"^frozen JSON array is immutable$"):
        frozen *= 2


def test_calling_init_again_does_not_refill_a_frozen_container() -> None:
    frozen_dict = FrozenDict({"a": 1})
    frozen_dict.__init__({"b": 2})
    frozen_list = FrozenList([1])
    frozen_list.__init__([2])
    assert (frozen_dict, frozen_list) == ({"a": 1}, [1])


def test_frozen_containers_cannot_be_subclassed() -> None:
    with pytest.raises(TypeError, match=r"^FrozenDict cannot be subclassed$"):
        type("Sub", (FrozenDict,), {})
    with pytest.raises(TypeError, match=r"^FrozenList cannot be subclassed$"):
        type("Sub", (FrozenList,), {})


def test_frozen_containers_equal_plain_containers_with_the_same_items() -> None:
    plain = {"a": [1, {"b": None}]}
    frozen = snapshot(plain)
    assert frozen == plain
    assert plain == frozen
    assert FrozenList([1, 2]) == [1, 2]
    a_tuple: object = (1, 2)
    assert FrozenList([1, 2]) != a_tuple
    assert FrozenDict({"a": 1}) != {"a": 2}


def test_frozen_containers_are_unhashable_like_dict_and_list() -> None:
    with pytest.raises(TypeError):
        hash(FrozenDict())
    with pytest.raises(TypeError):
        hash(FrozenList())


def test_the_constructors_validate_and_deep_freeze_their_contents() -> None:
    frozen_dict = FrozenDict({"a": [1]}, b={"c": 2})
    frozen_list = FrozenList(iter([[1], {"a": 2}]))
    assert frozen_dict == {"a": [1], "b": {"c": 2}}
    assert (type(frozen_dict["a"]), type(frozen_dict["b"])) == (FrozenList, FrozenDict)
    assert (type(frozen_list[0]), type(frozen_list[1])) == (FrozenList, FrozenDict)


def test_the_dict_constructor_accepts_key_value_pairs() -> None:
    assert FrozenDict([("a", 1), ("b", 2)]) == {"a": 1, "b": 2}


def test_the_constructors_reject_what_is_not_json() -> None:
    int_keys: Any = {1: 2}
    with pytest.raises(NotLosslessJson, match=r"^value at \$\.a\[0\] is a set, not JSON$"):
        FrozenDict({"a": [{1}]})
    with pytest.raises(NotLosslessJson, match=r"^value at \$\[0\] is float nan, not finite JSON$"):
        FrozenList([math.nan])
    with pytest.raises(NotLosslessJson, match=r"^value at \$ has a non-string key 1$"):
        FrozenDict(int_keys)


def test_constructing_from_a_frozen_container_returns_it() -> None:
    frozen_dict = FrozenDict({"a": 1})
    frozen_list = FrozenList([1])
    assert FrozenDict(frozen_dict) is frozen_dict
    assert FrozenList(frozen_list) is frozen_list


def test_empty_constructors_give_empty_frozen_containers() -> None:
    assert (type(FrozenDict()), FrozenDict()) == (FrozenDict, {})
    assert (type(FrozenList()), FrozenList()) == (FrozenList, [])


def test_copy_and_deepcopy_return_the_same_frozen_container() -> None:
    frozen_dict = FrozenDict({"a": [1]})
    frozen_list = FrozenList([{"a": 1}])
    assert copy.copy(frozen_dict) is frozen_dict
    assert copy.deepcopy(frozen_dict) is frozen_dict
    assert copy.copy(frozen_list) is frozen_list
    assert copy.deepcopy(frozen_list) is frozen_list
    assert copy.deepcopy({"x": frozen_dict})["x"] is frozen_dict


def test_pickling_round_trips_to_frozen_containers() -> None:
    restored = pickle.loads(pickle.dumps(snapshot([{"a": [1, {"b": 2.5}]}])))
    assert restored == [{"a": [1, {"b": 2.5}]}]
    assert type(restored) is FrozenList
    assert type(restored[0]) is FrozenDict
    assert type(restored[0]["a"]) is FrozenList
    assert type(restored[0]["a"][1]) is FrozenDict


def test_json_dumps_writes_frozen_containers_like_plain_ones() -> None:
    plain = {"a": [1, {"b": None, "c": "ü"}], "d": 1.5, "e": True}
    assert json.dumps(snapshot(plain)) == json.dumps(plain)


def test_copy_method_and_union_give_a_plain_dict() -> None:
    frozen = FrozenDict({"a": 1})
    assert type(frozen.copy()) is dict
    assert type(frozen | {"b": 2}) is dict


def test_copy_method_slices_and_concatenation_give_a_plain_list() -> None:
    frozen = FrozenList([1, 2, 3])
    assert type(frozen.copy()) is list
    assert type(frozen[:2]) is list
    assert type(frozen.__add__([4])) is list
    assert type(frozen * 2) is list


# --- is_json_value and thaw --------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, 1, "x", 1.5, [], {}, {"a": [1, {"b": None}]}])
def test_is_json_value_accepts_json(value: object) -> None:
    assert is_json_value(value) is True


@pytest.mark.parametrize(
    "value", [(1,), {1}, math.nan, -0.0, {1: "x"}, {"a": [b"x"]}, OrderedDict(), Color.RED]
)
def test_is_json_value_rejects_what_is_not_json(value: object) -> None:
    assert is_json_value(value) is False


def test_is_json_value_rejects_a_cycle() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert is_json_value(loop) is False


def test_is_json_value_accepts_10000_deep_nesting() -> None:
    assert is_json_value(_nested_dicts(10_000)) is True


def test_thaw_gives_plain_mutable_containers_all_the_way_down() -> None:
    thawed = thaw(snapshot({"a": [{"b": [1]}], "c": {}}))
    assert thawed == {"a": [{"b": [1]}], "c": {}}
    assert type(thawed) is dict
    assert type(thawed["a"]) is list
    assert type(thawed["c"]) is dict
    assert type(thawed["a"][0]) is dict
    assert type(thawed["a"][0]["b"]) is list
    thawed["a"].append(2)


def test_thaw_copies_plain_containers_too() -> None:
    plain = {"a": [1]}
    thawed = thaw(plain)  # type: ignore[arg-type]
    assert thawed == plain
    assert isinstance(thawed, dict)
    assert thawed is not plain
    assert thawed["a"] is not plain["a"]


def test_thaw_returns_scalars_as_they_are() -> None:
    assert thaw("x") == "x"
    assert thaw(None) is None


def test_thaw_handles_10000_deep_nesting() -> None:
    kinds, bottom = _descend(thaw(snapshot(_nested_lists(10_000))), 0, 10_000)
    assert kinds == {list}
    assert bottom == "bottom"


# --- properties --------------------------------------------------------------------------------


def _is_negative_zero(number: float) -> bool:
    return number == 0.0 and math.copysign(1.0, number) < 0.0


JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not _is_negative_zero(x))
    | st.text()
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=5), children, max_size=5)
    ),
    max_leaves=30,
)
NOT_JSON_LEAVES = st.sampled_from(
    [math.nan, math.inf, -0.0, (1,), {1}, b"x", Decimal(1), Color.RED, OrderedDict()]
)
MAYBE_JSON = st.recursive(
    JSON_SCALARS | NOT_JSON_LEAVES,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=3) | st.integers(), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(deadline=None)  # no timing assertions on a shared machine
@given(JSON_VALUES)
def test_thaw_of_snapshot_gives_back_an_equal_value(value: JsonValue) -> None:
    thawed = thaw(snapshot(value))
    assert thawed == value
    assert json.dumps(thawed) == json.dumps(value)  # same types: 1 vs 1.0, True vs 1


@settings(deadline=None)
@given(JSON_VALUES)
def test_snapshot_is_idempotent(value: JsonValue) -> None:
    frozen = snapshot(value)
    assert snapshot(frozen) is frozen
    assert frozen == value


@settings(deadline=None)
@given(MAYBE_JSON)
def test_is_json_value_agrees_with_snapshot(value: object) -> None:
    try:
        snapshot(value)
    except NotLosslessJson:
        assert is_json_value(value) is False
    else:
        assert is_json_value(value) is True


def test_frozen_record_and_array_build_frozen_containers_of_flat_items() -> None:
    from tether.core.json import frozen_array, frozen_record

    block = frozen_record(type="text", text="hi")
    blocks = frozen_array(block, 1, None)
    assert blocks == [{"type": "text", "text": "hi"}, 1, None]
    assert isinstance(block, FrozenDict)
    assert isinstance(blocks, FrozenList)
    assert snapshot(blocks) is blocks


def test_frozen_record_refuses_a_nested_plain_container_with_its_path() -> None:
    from tether.core.json import frozen_record

    with pytest.raises(NotLosslessJson, match=r"\$\.items"):
        frozen_record(items=[1, 2])  # a plain list is not frozen: use snapshot()


def test_frozen_array_refuses_a_non_finite_float_with_its_index() -> None:
    from tether.core.json import frozen_array

    with pytest.raises(NotLosslessJson, match=r"\$\[1\]"):
        frozen_array(1.0, float("nan"))
