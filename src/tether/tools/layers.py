"""The registry's layers: the global one and one per agent scope; guard tables; restrictions.

Owns: `Layer` (one scope's tools, guards and restrictions, and the mask they make), `GuardTable`
(monotonic guards, live-iterated within a generation, spec §8 item 18) and `Restriction` with
`parse_restriction`, which checks what `tools.restrict()` was given and raises the texts below.
Does not own: resolution (the registry's `_find`, which walks these layers), ownership and
disposal (the scoped context), dispatch.

A restriction masks the names a scope *inherits* (from the global layer and its ancestors' layers):
with `allow`, only the listed inherited names stay visible; with `deny`, the listed ones are
hidden; with both, the allowed ones minus the denied ones. Several restrictions of one scope
intersect, and so do the masks along a chain. A scope's own registrations are never masked by
its own restrictions, and `run_code` is never masked.

`tools.restrict()` texts (exact; `<…>` filled in):

- through an unscoped context: ``tools.restrict() requires a scoped context (agent.ctx): this
  context belongs to no agent; create one with ctx.scope(agent) and restrict through it``
- neither list given, or only an empty `deny`: ``tools.restrict({}) is a no-op: pass
  {"allow": [...]} to keep only the listed inherited tools, or {"deny": [...]} to hide the listed
  ones``
- a name the scope does not inherit: ``tools.restrict() names unknown global tool(s) "<a>",
  "<b>"; known global tools: "<x>", "<y>"`` (both lists sorted; `none` when nothing is known;
  in a nested scope the known tools are the global ones plus those its ancestors registered)
- `run_code` in `deny`: ``tools.restrict() cannot deny "run_code": the Code Mode transport is
  never restrictable; remove it from "deny"`` (in `allow` it is accepted and changes nothing)
- a malformed argument: ``tools.restrict() takes {"allow": [...], "deny": [...]}; got <what>``
  (TypeError), for a non-mapping, an unknown key, a list given as a string, or a non-string name.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from .definition import ToolDefinition

if TYPE_CHECKING:
    from .execution import ToolExecution

__all__ = [
    "RESTRICT_EMPTY",
    "RESTRICT_UNSCOPED",
    "RUN_CODE",
    "GuardTable",
    "Layer",
    "Restriction",
    "ToolGuard",
    "parse_restriction",
]

RUN_CODE: Final = "run_code"
"""The Code Mode transport tool: reserved, never shadowed, never restricted, never a binding."""

RESTRICT_UNSCOPED: Final = (
    "tools.restrict() requires a scoped context (agent.ctx): this context belongs to no agent; "
    "create one with ctx.scope(agent) and restrict through it"
)
RESTRICT_EMPTY: Final = (
    'tools.restrict({}) is a no-op: pass {"allow": [...]} to keep only the listed inherited '
    'tools, or {"deny": [...]} to hide the listed ones'
)

ToolGuard = Callable[["ToolExecution"], "str | None"]


@dataclass(frozen=True, slots=True)
class Restriction:
    """One `restrict()` call: `allow` None means "no allow list" (everything not denied)."""

    allow: frozenset[str] | None
    deny: frozenset[str]


def _names(key: str, value: object) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise TypeError(
            f'tools.restrict() takes {{"allow": [...], "deny": [...]}}; got "{key}": {value!r} '
            "(a list of tool names is expected)"
        )
    names = list(value)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(
                f'tools.restrict() takes {{"allow": [...], "deny": [...]}}; got {name!r} in '
                f'"{key}" (tool names are strings)'
            )
    return names


def _quoted(names: Iterable[str]) -> str:
    shown = ", ".join(f'"{name}"' for name in sorted(names))
    return shown or "none"


def parse_restriction(spec: object, inherited: Collection[str]) -> Restriction:
    """Check `restrict()`'s argument against the names the scope inherits (module texts)."""
    if not isinstance(spec, Mapping):
        raise TypeError(
            f'tools.restrict() takes {{"allow": [...], "deny": [...]}}; got {type(spec).__name__}'
        )
    extra = [key for key in spec if key not in ("allow", "deny")]
    if extra:
        raise TypeError(
            'tools.restrict() takes {"allow": [...], "deny": [...]}; got unknown key(s) '
            + ", ".join(repr(key) for key in extra)
        )
    raw_allow = spec.get("allow")
    raw_deny = spec.get("deny")
    allow = None if raw_allow is None else _names("allow", raw_allow)
    deny = [] if raw_deny is None else _names("deny", raw_deny)
    if allow is None and not deny:
        raise ValueError(RESTRICT_EMPTY)
    if RUN_CODE in deny:
        raise ValueError(
            f'tools.restrict() cannot deny "{RUN_CODE}": the Code Mode transport is never '
            'restrictable; remove it from "deny"'
        )
    named = [*(allow or ()), *deny]
    unknown = {name for name in named if name not in inherited and name != RUN_CODE}
    if unknown:
        raise ValueError(
            f"tools.restrict() names unknown global tool(s) {_quoted(unknown)}; "
            f"known global tools: {_quoted(inherited)}"
        )
    return Restriction(None if allow is None else frozenset(allow), frozenset(deny))


class GuardTable:
    """One layer's guards in registration order. Removal leaves a hole (so a running evaluation
    keeps its place); a table drained to empty starts a new generation (a fresh list), so guards
    added after that are seen from the next evaluation on (spec §1.6, SC16/SC17)."""

    __slots__ = ("fns", "live")

    def __init__(self) -> None:
        self.fns: list[ToolGuard | None] = []
        self.live = 0

    def add(self, fn: ToolGuard) -> Callable[[], bool]:
        """Append `fn`; returns its remover, which says whether it removed anything."""
        fns = self.fns
        fns.append(fn)
        index = len(fns) - 1
        self.live += 1

        def remove() -> bool:
            if index < len(fns) and fns is self.fns and fns[index] is fn:
                fns[index] = None
                self.live -= 1
                if self.live == 0:
                    self.fns = []
                return True
            return False

        return remove

    def deny(self, exec: ToolExecution) -> str | None:
        """The first denial reason, live-iterating this generation; None when all abstain."""
        fns = self.fns
        i = 0
        while i < len(fns):
            fn = fns[i]
            i += 1
            if fn is None:
                continue
            verdict = fn(exec)
            if verdict is not None:
                if not isinstance(verdict, str):
                    raise TypeError(
                        f"a guard returns a denial reason (str) or None; got {verdict!r}"
                    )
                return verdict
        return None


class Layer:
    """One agent scope's own tools, guards and restrictions; dropped by the registry when empty.

    `allow`/`deny` are the scope's mask: the intersection of its restrictions' allow lists
    (None: no allow list) and the union of their deny lists."""

    __slots__ = ("allow", "deny", "guards", "restrictions", "tools")

    def __init__(self) -> None:
        self.tools: dict[str, ToolDefinition] = {}
        self.guards = GuardTable()
        self.restrictions: list[Restriction] = []
        self.allow: frozenset[str] | None = None
        self.deny: frozenset[str] = frozenset()

    @property
    def empty(self) -> bool:
        return not self.tools and not self.guards.live and not self.restrictions

    def admits(self, name: str) -> bool:
        """Whether this scope's mask lets an inherited `name` through."""
        allow = self.allow
        return (allow is None or name in allow) and name not in self.deny

    def restrict(self, restriction: Restriction) -> Callable[[], bool]:
        """Add a restriction; returns its remover (True when it removed it)."""
        self.restrictions.append(restriction)
        self._remask()

        def remove() -> bool:
            for index, each in enumerate(self.restrictions):
                if each is restriction:
                    del self.restrictions[index]
                    self._remask()
                    return True
            return False

        return remove

    def _remask(self) -> None:
        allow: frozenset[str] | None = None
        deny: frozenset[str] = frozenset()
        for each in self.restrictions:
            if each.allow is not None:
                allow = each.allow if allow is None else allow & each.allow
            deny |= each.deny
        self.allow = allow
        self.deny = deny
