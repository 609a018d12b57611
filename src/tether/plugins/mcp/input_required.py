"""A `tools/call` the server answers with `InputRequiredResult` (2026-07-28, SEP-2322).

Owns `call_until_answered`. On the 2026-07-28 revision a server no longer sends the client an
`elicitation/create` request in the middle of a call: it answers the call with an
`InputRequiredResult` — the questions (`input_requests`, keyed) and an opaque `request_state` —
and the client asks them, then sends the call again with the answers (`input_responses`) and the
state echoed byte for byte. Each question goes through the session's own callbacks
(`ClientSession.dispatch_input_request`), so an elicitation reaches the user through the same
`approval` channel as a 2025 server's `elicitation/create` (`elicit.py`); sampling and roots get
the SDK's default answers, as they do before 2026. Questions are asked one after the other (a
person answers one form at a time). A result carrying only a state is sent again after a short
backoff (50 ms doubling to 250 ms, the SDK's). Each round is a request of its own, under an id
of its own (`Outbound.next_round`); between rounds nothing of the call is on the wire
(`Outbound.answered`), so an abort there sends no cancel. An answer that refuses a question
(an error) is `MCP_ERROR`; so is a server that still asks after `MAX_ROUNDS` rounds. Once
`stop` aborted no new round starts: the call ends aborted. Imports the `mcp` SDK: load it lazily.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Final

import mcp_types as types
from mcp.client.session import ClientRequestContext, ClientSession

from ...core.signals import AbortSignal
from ...tools.errors import ToolCallAborted
from .errors import MCP_ERROR, McpError
from .wire import Outbound

__all__ = ["MAX_ROUNDS", "call_until_answered"]

MAX_ROUNDS: Final = 10
"""How many `InputRequiredResult`s one call may get before it fails (the SDK's default)."""
_STATE_ONLY_FIRST_S: Final = 0.05
_STATE_ONLY_MAX_S: Final = 0.25


async def call_until_answered(
    session: ClientSession,
    server: str,
    tool: str,
    arguments: Mapping[str, Any],
    outbound: Outbound,
    stop: AbortSignal,
) -> types.CallToolResult:
    """Call `tool`, answering every `InputRequiredResult` and sending the call again, until
    the server gives the call's result."""
    result = await session.call_tool(
        tool, dict(arguments), progress_callback=outbound.progressed, allow_input_required=True
    )
    delay = _STATE_ONLY_FIRST_S
    while isinstance(result, types.InputRequiredResult):
        outbound.answered()
        if stop.aborted:
            raise ToolCallAborted()
        if outbound.rounds >= MAX_ROUNDS:
            raise McpError(
                f'MCP server "{server}" still asked for input after {MAX_ROUNDS} rounds', MCP_ERROR
            )
        responses: types.InputResponses | None = None
        if result.input_requests:
            delay = _STATE_ONLY_FIRST_S
            responses = await _answers(session, server, outbound, result.input_requests)
        else:
            await asyncio.sleep(delay)
            delay = min(delay * 2, _STATE_ONLY_MAX_S)
        if stop.aborted:
            raise ToolCallAborted()
        outbound.next_round()
        result = await session.call_tool(
            tool,
            dict(arguments),
            progress_callback=outbound.progressed,
            input_responses=responses,
            request_state=result.request_state,
            allow_input_required=True,
        )
    if not isinstance(result, types.CallToolResult):
        raise McpError(
            f'MCP server "{server}" answered with a result tether does not know', MCP_ERROR
        )
    return result


async def _answers(
    session: ClientSession,
    server: str,
    outbound: Outbound,
    requests: Mapping[str, types.InputRequest],
) -> types.InputResponses:
    responses: types.InputResponses = {}
    for key, request in requests.items():
        context = ClientRequestContext(session=session, request_id=outbound.request_id)
        answer = await session.dispatch_input_request(context, request)
        if isinstance(answer, types.ErrorData):
            raise McpError(
                f'MCP server "{server}" asked for input tether did not give: {answer.message}',
                MCP_ERROR,
            )
        responses[key] = answer
    return responses
