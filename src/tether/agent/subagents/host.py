"""What one mounted `subagents` plugin shares between its `task` calls, and the events a
child's turn announces.

Owns `Host` (the plugin's context, the agent types, the depth limit, the read-only tools, the
children's scopes and the background children it must stop) and the declarations of
`subagent/start` and `subagent/end`. Mounting needs both; a child itself (child.py) is imported
by the first `task` call (issue 36). Does not own a child's lifecycle (child.py).
"""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING, Final

from ...kernel import declare_event

if TYPE_CHECKING:
    from ...core.signals import AbortController
    from ...kernel import Context
    from ...plugins.jobs.model import JobOutcome
    from ..loop import AgentLoop
    from .agent_types import AgentCatalog

__all__ = ["END_EVENT", "START_EVENT", "Host"]

START_EVENT: Final = declare_event("subagent/start")
"""serial `(parent, child, agent_type, signal) -> None`, before the child's turn (SubagentStart):
a listener may park context for the child's first request with `child.inject(message)`."""
END_EVENT: Final = declare_event("subagent/end")
"""serial `(parent, child, agent_type, outcome, signal) -> None`, after a child's turn that was
not aborted (SubagentStop); observe only."""


class Host:
    """What one mounted `subagents` plugin shares between its calls. (A plain class: one is
    made at every mount, and a dataclass's generated methods cost more to make: issue 36.)"""

    def __init__(
        self, ctx: Context, catalog: AgentCatalog, max_depth: int, read_only: frozenset[str]
    ) -> None:
        self.ctx = ctx
        self.catalog = catalog
        self.max_depth = max_depth
        self.read_only = read_only
        self.scopes: weakref.WeakKeyDictionary[AgentLoop, Context] = weakref.WeakKeyDictionary()
        self.warned: set[tuple[str, tuple[str, ...]]] = set()
        self.background: dict[asyncio.Future[JobOutcome], AbortController] = {}

    def scope_of(self, loop: AgentLoop) -> Context:
        """The scoped context of a child this plugin spawned, else the plugin's context."""
        return self.scopes.get(loop, self.ctx)

    def track(self, done: asyncio.Future[JobOutcome], controller: AbortController) -> None:
        """Keep a background child's run until it settles (`aclose` stops it)."""
        self.background[done] = controller
        done.add_done_callback(lambda future: self.background.pop(future, None))

    async def aclose(self) -> None:
        """Abort every background child and wait until each is disposed."""
        while self.background:
            running = list(self.background.items())
            for _, controller in running:
                controller.abort("subagents plugin disposed")
            await asyncio.wait([done for done, _ in running])
