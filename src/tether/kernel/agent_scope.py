"""Agent scopes: the tag a scoped context carries, and the live scopes of one root context.

`ctx.scope(agent)` (context.py) opens an `AgentScope` keyed by `agent` — any object, compared by
identity — whose parent is the scope of the context it was called on (none from an unscoped
context), so scopes form chains: a subagent's scope under its parent agent's. Registrations made
through the scoped context carry the scope as their tag; the tool registry keeps a layer per
scope and the event table filters tagged listeners by it (events.py).

Owns: the node (`key`, `parent`, `chain`, `lineage`, `closed`) and `AgentScopes`, the table of
live scopes of one root by the identity of their key. Does not own: what is registered in a scope
(the registries), disposal (the scoped context's disposer scope, scope.py), listener filtering
(events.py).

Invariants: a key has at most one live scope per root; a node's parent is fixed when it is
opened, so `chain` (farthest ancestor first, the node itself last) and `lineage` (the same, as a
set) never change; `closed` is set once, when disposal of the scope starts, and a closed node stays
in the table until its disposal has finished (so a lookup of its key never falls back to "no
scope" halfway through a teardown).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import PluginError

if TYPE_CHECKING:
    from .events import ScopedListeners

__all__ = ["AgentScope", "AgentScopes", "describe_agent"]


class AgentScope:
    """One agent's scope: its key (the agent), its parent scope, and its ancestry."""

    __slots__ = ("__weakref__", "chain", "closed", "key", "lineage", "listeners", "parent")

    def __init__(self, key: object, parent: AgentScope | None) -> None:
        self.key = key
        self.parent = parent
        self.chain: tuple[AgentScope, ...] = (self,) if parent is None else (*parent.chain, self)
        """Farthest ancestor first, this scope last."""
        self.lineage: frozenset[AgentScope] = frozenset(self.chain)
        """The scopes whose tagged listeners see this scope's calls (itself and its ancestors)."""
        self.closed = False
        """Set when disposal starts: from then on nothing resolves through this scope."""
        self.listeners: ScopedListeners | None = None
        """The event table's filtered view for this scope, made on first use (events.py)."""

    def __repr__(self) -> str:
        state = " closed" if self.closed else ""
        return f"<AgentScope of {describe_agent(self.key)} depth={len(self.chain)}{state}>"


class AgentScopes:
    """The live agent scopes of one root context, by the identity of their key.

    A node holds its key, so the `id()` it is filed under cannot be reused while it is filed.
    """

    __slots__ = ("by_id",)

    def __init__(self) -> None:
        self.by_id: dict[int, AgentScope] = {}

    def __len__(self) -> int:
        return len(self.by_id)

    def lookup(self, agent: object) -> AgentScope | None:
        """The scope keyed by `agent` (live or closing), or None."""
        by_id = self.by_id
        if not by_id:
            return None
        node = by_id.get(id(agent))
        return node if node is not None and node.key is agent else None

    def open(self, agent: object, parent: AgentScope | None) -> AgentScope:
        """File a new scope for `agent`. Raises PluginError when it already has one."""
        if agent is None:
            raise TypeError("ctx.scope(agent) needs the object the scope belongs to; got None")
        existing = self.lookup(agent)
        if existing is not None:
            state = "is being disposed" if existing.closed else "is live"
            raise PluginError(
                f"{describe_agent(agent)} already has an agent scope, which {state}; "
                "use that scoped context, or await its dispose() before scoping the agent again"
            )
        node = AgentScope(agent, parent)
        self.by_id[id(agent)] = node
        return node

    def close(self, node: AgentScope) -> None:
        """Forget `node` (its disposal has finished); idempotent."""
        node.closed = True
        node.listeners = None
        if self.by_id.get(id(node.key)) is node:
            del self.by_id[id(node.key)]


def describe_agent(agent: object) -> str:
    """`agent <repr>`, cut to 60 characters, for messages and labels."""
    try:
        shown = repr(agent)
    except Exception:
        shown = f"<{type(agent).__name__} object>"
    return "agent " + (shown if len(shown) <= 60 else shown[:59] + "…")
