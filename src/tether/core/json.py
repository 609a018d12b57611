"""Lossless JSON snapshots and the deep-frozen containers they are made of.

Owns: what counts as JSON in tether (spec Appendix A, §8 items 5-6), `snapshot` (validate and
detach a value in one pass), `FrozenDict` / `FrozenList` (the immutable containers that tool
arguments, values, content and meta travel in), `is_json_value` and `thaw`.
Does not own: JSON Schema validation (tether.tools) or encoding to text (`json.dumps` works on
frozen containers as on plain ones).

What counts as JSON, by exact type (subclasses are not JSON, so nothing is lost on the way):

- `None`, `bool`, `int` (any size: a JavaScript consumer would lose precision beyond 2**53 - 1;
  `IntEnum` and other `int` subclasses are rejected), `str` (lone surrogates allowed);
- `float` when finite and not negative zero;
- `list`, and `dict` whose keys are all `str` (insertion order is kept; JavaScript would move
  integer-like keys first);
- `FrozenDict` and `FrozenList`, which are deep-frozen JSON by construction and so are reused.

Everything else is rejected with `NotLosslessJson`: tuples, sets, bytes, `dict`/`list` subclasses
(`OrderedDict`, `defaultdict`, ...), dataclasses, models, `Decimal`, NaN, infinities, `-0.0`,
non-`str` keys, and cycles. Shared (DAG) references are fine: each visit is copied.

The walk is iterative (an explicit stack, so 10,000-deep nesting works) and tracks the containers
on the current path by `id` to tell a cycle from a shared reference. Each container is copied with
one C-level call and its entries are then read from the copy, so every value is read once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from json import dumps
from typing import Any, NoReturn, TypeAlias, cast, final

__all__ = [
    "FrozenDict",
    "FrozenList",
    "JsonValue",
    "NotLosslessJson",
    "frozen_array",
    "frozen_record",
    "is_json_value",
    "snapshot",
    "thaw",
]

JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None


class NotLosslessJson(TypeError):
    """A value is not JSON that survives a round trip unchanged.

    `str(err)` names where and what, e.g. `value at $.a.b[2] is a set, not JSON`; `path` is the
    location alone (`$` is the root, `.key` or `["odd key"]` an object member, `[i]` an index).
    """

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"value at {path} {problem}")
        self.path = path


def _refuse_object_mutation(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError("frozen JSON object is immutable")


def _refuse_array_mutation(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError("frozen JSON array is immutable")


@final
class FrozenDict(dict[str, JsonValue]):
    """A JSON object that cannot change; equal to a plain `dict` with the same items.

    `FrozenDict(mapping, **entries)` validates and deep-freezes its contents like `snapshot`
    (raising `NotLosslessJson`), so every `FrozenDict` holds deep-frozen JSON. Every mutator raises
    `TypeError`. `copy.copy`/`copy.deepcopy` return the object itself; pickling round-trips;
    `.copy()` and `|` give a plain shallow `dict`. Cannot be subclassed.
    """

    __slots__ = ()

    def __new__(
        cls,
        mapping: Mapping[str, object] | Iterable[tuple[str, object]] = (),
        /,
        **entries: object,
    ) -> FrozenDict:
        if type(mapping) is FrozenDict and not entries:
            return mapping
        return cast(FrozenDict, snapshot(dict(mapping, **entries)))

    def __init__(
        self,
        mapping: Mapping[str, object] | Iterable[tuple[str, object]] = (),
        /,
        **entries: object,
    ) -> None:
        """Do nothing: `__new__` built the contents (so a second `__init__` cannot refill them)."""

    def __init_subclass__(cls, **kwargs: object) -> NoReturn:
        raise TypeError("FrozenDict cannot be subclassed")

    __setitem__ = __delitem__ = __ior__ = _refuse_object_mutation
    clear = pop = popitem = setdefault = update = _refuse_object_mutation

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> FrozenDict:
        return self

    def __reduce__(self) -> tuple[type[FrozenDict], tuple[dict[str, JsonValue]]]:
        return (FrozenDict, (dict(self),))


@final
class FrozenList(list[JsonValue]):
    """A JSON array that cannot change; equal to a plain `list` with the same items.

    `FrozenList(iterable)` validates and deep-freezes its contents like `snapshot` (raising
    `NotLosslessJson`), so every `FrozenList` holds deep-frozen JSON. Every mutator raises
    `TypeError`. `copy.copy`/`copy.deepcopy` return the object itself; pickling round-trips;
    slices, `.copy()`, `+` and `*` give plain `list`s. Cannot be subclassed.
    """

    __slots__ = ()

    def __new__(cls, iterable: Iterable[object] = (), /) -> FrozenList:
        if type(iterable) is FrozenList:
            return iterable
        return cast(FrozenList, snapshot(list(iterable)))

    def __init__(self, iterable: Iterable[object] = (), /) -> None:
        """Do nothing: `__new__` built the contents (so a second `__init__` cannot refill them)."""

    def __init_subclass__(cls, **kwargs: object) -> NoReturn:
        raise TypeError("FrozenList cannot be subclassed")

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse_array_mutation
    append = clear = extend = insert = pop = remove = reverse = sort = _refuse_array_mutation

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> FrozenList:
        return self

    def __reduce__(self) -> tuple[type[FrozenList], tuple[list[JsonValue]]]:
        return (FrozenList, (list(self),))


def snapshot(value: object) -> JsonValue:
    """Return `value` as deep-frozen JSON, detached from the original.

    Scalars and already-frozen containers come back as they are; a `dict`/`list` comes back as a
    `FrozenDict`/`FrozenList` copy. Raises `NotLosslessJson` (naming the path) for anything that
    is not JSON; see the module docstring for the rules.
    """
    if type(value) is not dict:
        return _walk(value, _SNAPSHOT)
    # The hot path, inlined: tool arguments and most results are flat objects.
    copy = _new_dict(FrozenDict)
    _dict_update(copy, value)  # trusted construction: the loop below validates the copy
    for key, item in copy.items():
        kind = type(item)
        if type(key) is str and (
            kind in _FROZEN_LEAVES or (kind is float and _is_lossless_float(cast(float, item)))
        ):
            continue
        if not _complete_shallow(value, copy, _SNAPSHOT):
            _walk_tree(value, copy, _SNAPSHOT)
        break
    return copy


def is_json_value(value: object) -> bool:
    """Whether `snapshot(value)` would succeed (the same walk, without copying)."""
    try:
        _walk(value, _CHECK)
    except NotLosslessJson:
        return False
    return True


def thaw(value: JsonValue) -> JsonValue:
    """Return a mutable deep copy of `value` made of plain `dict`s and `list`s.

    Frozen and plain containers alike are copied; raises `NotLosslessJson` if `value` is not JSON.
    """
    return _walk(value, _THAW)


def _check_flat_item(where: str, item: object) -> None:
    kind = type(item)
    if kind in _FROZEN_LEAVES:
        return
    if kind is float:
        if _is_lossless_float(cast(float, item)):
            return
        raise NotLosslessJson(where, _float_problem(cast(float, item)))
    raise NotLosslessJson(where, _not_json(kind))


def frozen_record(**fields: JsonValue) -> FrozenDict:
    """A frozen object of scalar or already-frozen values, built without a walk (a hot-path
    shortcut for records like content blocks). Raises `NotLosslessJson` for anything else."""
    for key, item in fields.items():
        if type(item) not in _FROZEN_LEAVES:
            _check_flat_item(f"$.{key}", item)
    record = _new_dict(FrozenDict)
    _dict_update(record, fields)
    return record


def frozen_array(*items: JsonValue) -> FrozenList:
    """A frozen array of scalar or already-frozen items, built without a walk."""
    for index, item in enumerate(items):
        if type(item) not in _FROZEN_LEAVES:
            _check_flat_item(f"$[{index}]", item)
    array = _new_list(FrozenList)
    _list_extend(array, items)
    return array


# --- the walk ---------------------------------------------------------------------------------

_Container: TypeAlias = dict[Any, Any] | list[Any]
_SCALARS: frozenset[type] = frozenset({type(None), bool, int, str})  # float: _is_lossless_float
_FROZEN_LEAVES: frozenset[type] = _SCALARS | {FrozenDict, FrozenList}
_new_dict = dict.__new__
_new_list = list.__new__
_dict_update = dict.update
_list_extend = list.extend


def _frozen_dict_copy(source: dict[str, JsonValue]) -> FrozenDict:
    copy = _new_dict(FrozenDict)
    _dict_update(copy, source)  # trusted construction: the walk then validates the copy
    return copy


def _frozen_list_copy(source: list[JsonValue]) -> FrozenList:
    copy = _new_list(FrozenList)
    _list_extend(copy, source)  # trusted construction: the walk then validates the copy
    return copy


def _same(source: _Container) -> _Container:
    return source


@dataclass(frozen=True, slots=True)
class _Mode:
    """What one walk does: which types pass as they are, and how each container is copied."""

    leaves: frozenset[type]
    copies: Mapping[type, Callable[[Any], _Container]]


_SNAPSHOT = _Mode(_FROZEN_LEAVES, {dict: _frozen_dict_copy, list: _frozen_list_copy})
_CHECK = _Mode(_FROZEN_LEAVES, {dict: _same, list: _same})
_THAW = _Mode(_SCALARS, {dict: dict, list: list, FrozenDict: dict, FrozenList: list})

# A container being walked: (original, its output, the output's remaining entries, its key in
# the parent). Entries are read from the output: for a copy, each value is read once.
_Frame: TypeAlias = tuple[_Container, _Container, Iterator[tuple[Any, Any]], object]


def _walk(root: object, mode: _Mode) -> JsonValue:
    """Validate `root` and return what `mode` makes of it: a leaf as is, a container's output."""
    kind = type(root)
    if kind in mode.leaves:
        return root  # type: ignore[return-value]  # a JSON leaf (or a frozen container)
    if kind is float:
        if _is_lossless_float(cast(float, root)):
            return cast(float, root)
        raise NotLosslessJson("$", _float_problem(cast(float, root)))
    copy = mode.copies.get(kind)
    if copy is None:
        raise NotLosslessJson("$", _not_json(kind))
    out = copy(root)
    if not _complete_shallow(cast(_Container, root), out, mode):
        _walk_tree(cast(_Container, root), out, mode)
    return out


def _complete_shallow(root: _Container, out: _Container, mode: _Mode) -> bool:
    """The fast path: complete `out` if it holds only leaves and flat containers.

    Returns False, leaving `out` valid for `_walk_tree` to finish, on anything else: a deeper
    container or a problem (which the walk then reports with its path).
    """
    leaves, copies = mode.leaves, mode.copies
    is_object = isinstance(out, dict)
    entries = out.items() if isinstance(out, dict) else enumerate(out)
    for key, item in entries:
        if is_object and type(key) is not str:
            return False
        kind = type(item)
        if kind in leaves or (kind is float and _is_lossless_float(item)):
            continue
        copy = copies.get(kind)
        if copy is None or item is root:  # a flat child can only cycle by being the root
            return False
        child = copy(item)
        if not _is_flat(child, leaves):
            return False
        if child is not item:
            _set_entry(out, key, child)
    return True


def _is_flat(container: _Container, leaves: frozenset[type]) -> bool:
    """Whether `container` has only `str` keys and leaf entries (so nothing to descend into)."""
    if isinstance(container, dict):
        for key, item in container.items():
            kind = type(item)
            if type(key) is not str or (
                kind not in leaves and not (kind is float and _is_lossless_float(item))
            ):
                return False
        return True
    for item in container:
        kind = type(item)
        if kind not in leaves and not (kind is float and _is_lossless_float(item)):
            return False
    return True


def _walk_tree(root: _Container, root_out: _Container, mode: _Mode) -> None:
    """Validate `root` depth-first, completing the copy `root_out` (if it is one) on the way."""
    leaves, copies = mode.leaves, mode.copies
    ancestors = {id(root)}  # ids of the originals on the current path
    stack: list[_Frame] = []
    _push(stack, root, root_out, "$")
    while stack:
        original, out, entries, _ = stack[-1]
        for key, item in entries:
            kind = type(item)
            if kind in leaves:
                continue
            if kind is float:
                if _is_lossless_float(item):
                    continue
                raise _error(stack, key, _float_problem(item))
            copy = copies.get(kind)
            if copy is None:
                raise _error(stack, key, _not_json(kind))
            if id(item) in ancestors:
                raise _error(stack, key, "is a cycle back to an enclosing container")
            child = copy(item)
            if child is not item:
                _set_entry(out, key, child)
            if not _is_flat(child, leaves):  # a flat child is complete: no frame needed
                _push(stack, item, child, key)
                ancestors.add(id(item))
                break
        else:
            stack.pop()
            ancestors.discard(id(original))


def _set_entry(out: _Container, key: Any, child: _Container) -> None:
    if isinstance(out, dict):
        dict.__setitem__(out, key, child)
    else:
        list.__setitem__(out, key, child)


def _push(stack: list[_Frame], original: _Container, out: _Container, key: object) -> None:
    if isinstance(out, dict):
        stack.append((original, out, iter(out.items()), key))
        for member in out:
            if type(member) is not str:
                raise _error(stack, None, f"has a non-string key {member!r}")
    else:
        stack.append((original, out, enumerate(out), key))


def _is_lossless_float(number: float) -> bool:
    # finite (inf - inf and nan - nan are nan), and not -0.0
    return number - number == 0.0 and (number != 0.0 or math.copysign(1.0, number) > 0.0)


def _float_problem(number: float) -> str:
    if number == 0.0:
        return "is negative zero"
    return f"is float {number!r}, not finite JSON"


def _not_json(kind: type) -> str:
    name = kind.__name__
    article = "an" if name[:1].lower() in ("a", "e", "i", "o", "u") else "a"
    return f"is {article} {name}, not JSON"


def _error(stack: list[_Frame], key: object, problem: str) -> NotLosslessJson:
    """The error for the entry `key` of the innermost container (`None`: the container itself)."""
    keys = [frame[3] for frame in stack[1:]]
    if key is not None:
        keys.append(key)
    return NotLosslessJson("$" + "".join(map(_path_segment, keys)), problem)


def _path_segment(key: object) -> str:
    if type(key) is not str:
        return f"[{key}]"
    if key.isidentifier():
        return f".{key}"
    return f"[{dumps(key, ensure_ascii=False)}]"
