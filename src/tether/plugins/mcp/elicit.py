"""A server's `elicitation/create`, put to the user through the `approval` service.

Owns `elicitation_callback`: the SDK `ClientSession`'s elicitation callback for one server. A form
request becomes an `ElicitationQuestion` (from `mcp server "<name>"`, the message, the fields of
the requested schema) answered by `Approval.elicit` — the chat's prompter shows it as a form,
headless the configured answer (decline by default); on accept the schema defaults fill what the
user left out (SEP-1034). A URL-mode request is declined (tether opens no URL for a server),
with one log line. Without an `approval` service the answer is decline. Imports the `mcp` SDK's
types.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types

from ..approval.elicitation import ElicitationQuestion, ElicitationReply, form_of

__all__ = ["Ask", "elicitation_callback"]

_log = logging.getLogger("tether.mcp")

Ask = Callable[[ElicitationQuestion], Awaitable[ElicitationReply]]
"""Puts one question to the user (the `approval` service's `elicit`, with a signal bound)."""


def elicitation_callback(server: str, ask: Ask) -> Any:
    """The callback for `ClientSession(elicitation_callback=...)` of server `server`."""

    async def callback(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            _log.warning(
                'mcp server "%s" asked to open a URL (elicitation); declined: %s',
                server,
                params.url,
            )
            return types.ElicitResult(action="decline")
        question = ElicitationQuestion(
            source=f'mcp server "{server}"',
            message=params.message,
            fields=form_of(params.requested_schema),
        )
        reply = await ask(question)
        if reply.action != "accept":
            return types.ElicitResult(action=reply.action)
        return types.ElicitResult(action="accept", content=dict(reply.content or {}))  # type: ignore[arg-type]

    return callback
