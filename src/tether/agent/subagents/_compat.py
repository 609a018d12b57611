"""TEMPORARY: the two interfaces this plugin codes against, until they land on main.

* h-agent: `tether.agent.loop.AgentLoop(..., depth=, parent=)` (today the class is `Agent`).
* h-scopes: `ctx.scope(agent) -> Context` with `scoped.tools.restrict({"allow", "deny"})` and
  `await scoped.dispose()`, the registry resolving visibility by `input.agent`.

Until then `open_scope` builds a stand-in that masks tools per agent (the agent and its
parents' masks intersect) by wrapping the registry's `_visible` and the child's schema list.
Delete this module once both have merged.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...kernel import Context
from ...tools.definition import ToolDefinition
from ...tools.registry import ToolRuntime
from .. import loop as _loop

__all__ = ["AgentLoop", "bind_scope", "new_loop", "open_scope"]

AgentLoop: Any = getattr(_loop, "AgentLoop", None) or _loop.Agent


def new_loop(*, depth: int, parent: object, **kwargs: Any) -> Any:
    """An `AgentLoop` with `depth` and `parent`."""
    try:
        return AgentLoop(depth=depth, parent=parent, **kwargs)
    except TypeError:
        loop = AgentLoop(**kwargs)
        loop.depth = depth
        loop.parent = parent
        return loop


def bind_scope(loop: Any, scoped: Any) -> None:
    """Give the loop the scoped context it dispatches its agent events on."""
    if isinstance(scoped, _FakeScope):
        loop._ctx = scoped.ctx
        loop.tools = _MaskedTools(scoped.runtime, loop)
    else:
        loop._ctx = scoped


def open_scope(parent_ctx: Any, agent: object) -> Any:
    """`parent_ctx.scope(agent)`, or the stand-in while `Context.scope` does not exist."""
    if hasattr(Context, "scope"):
        return parent_ctx.scope(agent)
    ctx = parent_ctx.ctx if isinstance(parent_ctx, _FakeScope) else parent_ctx
    return _FakeScope(ctx, agent)


_masks: weakref.WeakKeyDictionary[object, list[tuple[frozenset[str] | None, frozenset[str]]]] = (
    weakref.WeakKeyDictionary()
)
_patched: weakref.WeakSet[ToolRuntime] = weakref.WeakSet()


def _allowed(name: str, agent: object | None) -> bool:
    while agent is not None:
        for allow, deny in _masks.get(agent, ()):
            if name == "run_code":
                continue
            if (allow is not None and name not in allow) or name in deny:
                return False
        agent = getattr(agent, "parent", None)
    return True


def _patch(runtime: ToolRuntime) -> None:
    if runtime in _patched:
        return
    _patched.add(runtime)
    visible: Callable[[str, object | None], ToolDefinition | None] = runtime._visible

    def masked(name: str, agent: object | None) -> ToolDefinition | None:
        return visible(name, agent) if _allowed(name, agent) else None

    runtime._visible = masked  # type: ignore[method-assign]


class _MaskedTools:
    """The child's `tools`: the runtime, with `schemas()` filtered for the child."""

    def __init__(self, runtime: ToolRuntime, agent: object) -> None:
        self._runtime = runtime
        self._agent = agent

    def schemas(self, agent: object | None = None) -> list[dict[str, Any]]:
        return [
            s for s in self._runtime.schemas() if _allowed(str(s["name"]), agent or self._agent)
        ]

    def names(self, agent: object | None = None) -> list[str]:
        return [n for n in self._runtime.names() if _allowed(n, agent or self._agent)]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)


class _FakeTools:
    def __init__(self, scope: _FakeScope) -> None:
        self._scope = scope

    def restrict(self, spec: Mapping[str, Sequence[str]]) -> Callable[[], None]:
        allow = spec.get("allow")
        entry = (None if allow is None else frozenset(allow), frozenset(spec.get("deny", ())))
        _masks.setdefault(self._scope.agent, []).append(entry)

        def remove() -> None:
            entries = _masks.get(self._scope.agent, [])
            if entry in entries:
                entries.remove(entry)

        self._scope.removers.append(remove)
        return remove

    def __getattr__(self, name: str) -> Any:
        return getattr(self._scope.ctx.tools, name)


class _FakeScope:
    def __init__(self, ctx: Context, agent: object) -> None:
        self.ctx = ctx
        self.agent = agent
        self.runtime: ToolRuntime = ctx.tools.runtime
        self.removers: list[Callable[[], None]] = []
        self.tools = _FakeTools(self)
        _patch(self.runtime)

    def scope(self, agent: object) -> _FakeScope:
        return _FakeScope(self.ctx, agent)

    def get(self, name: str) -> object | None:
        return self.ctx.get(name)

    async def dispose(self) -> None:
        while self.removers:
            self.removers.pop()()
