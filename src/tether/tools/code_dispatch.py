"""The `tools/code-dispatch-log` waterfall (tool-runtime §7.6): what the durable copy of one Code
Mode sub-call result holds.

Owns: `CodeDispatchLog` (the record a listener receives) and `logged_content()`, the one
dispatch; the event key `CODE_DISPATCH_LOG` and the listener type are `events.py`'s (re-exported
here). Does not own writing the event (the Code Mode bridge appends
`tool/code-dispatch` with what this returns) nor what a listener does (the spill policy bounds
big texts).

Contract. Listeners are `async (dispatch, next) -> content blocks`; the base is the settled
result's content, so with no listener the log holds exactly what the sub-call returned. The
dispatch is contained: a listener that raises, or a chain that yields something other than a
list of JSON content blocks, is logged as a WARNING on `tether.tools` naming the sub-call, and the
original content is logged instead. Only the durable copy changes: the program already has its
answer (the binding settles before the log is shaped) and the result published on `tools/result`
is the sub-call's own.

Routing: listeners are looked up like the registry's other tools waterfalls. Every listener is
global today; when listeners become agent-scoped, this dispatch is keyed by the outer agent
(`dispatch.agent`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..core.errors import error_message
from ..core.json import JsonValue
from ..kernel.events import Listener, waterfall
from .events import CODE_DISPATCH_LOG, CodeDispatchLogListener
from .results import ContentBlock, freeze_content

__all__ = [
    "CODE_DISPATCH_LOG",
    "CodeDispatchLog",
    "CodeDispatchLogListener",
    "ListenerSource",
    "logged_content",
]

_log = logging.getLogger("tether.tools")


@dataclass(frozen=True, slots=True)
class CodeDispatchLog:
    """One settled Code Mode sub-call, as its `tool/code-dispatch` event will record it.

    `sub_call_id` is `<parent_call_id>:code:<n>`; `agent` is the outer call's agent (the session
    owner); `content` is the settled result's content (frozen)."""

    root_call_id: str
    parent_call_id: str
    sub_call_id: str
    name: str
    arguments: JsonValue
    is_error: bool
    content: Sequence[ContentBlock]
    agent: object | None


class ListenerSource(Protocol):
    """Where the listeners come from (a kernel `Context`)."""

    def listeners(self, event: str) -> tuple[Listener, ...]: ...


async def logged_content(
    source: ListenerSource, dispatch: CodeDispatchLog
) -> Sequence[ContentBlock]:
    """The content to log for `dispatch`: the waterfall's answer, or the original content when a
    listener failed (see the module note). Never raises for a listener's failure."""
    listeners = source.listeners(CODE_DISPATCH_LOG.name)
    if not listeners:
        return dispatch.content

    async def base() -> Sequence[ContentBlock]:
        return dispatch.content

    try:
        shaped = await waterfall(listeners, (dispatch,), base)
        return freeze_content(shaped)
    except Exception as exc:  # NotLosslessJson and TypeError included
        _log.warning(
            'tool "%s" (%s): tools/code-dispatch-log listener failed; the original content is'
            " logged: %s",
            dispatch.name,
            dispatch.sub_call_id,
            error_message(exc),
        )
        return dispatch.content
