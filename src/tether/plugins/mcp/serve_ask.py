"""`tether mcp serve`: a served call's approval question asked of the MCP client (elicitation).

Owns `ClientPrompter`, the `approval` service's prompter while tether serves. A served call whose
policy says `Ask` (or a sandbox escalation) is put to the client that made the call, as a form
elicitation with no fields, related to that call's request: `accept` allows it once, `decline` and
`cancel` reject it. A client that did not advertise form elicitation (or a question about a call
that is not a served one) is not asked: the prompter raises `Unanswerable` and the `approval`
plugin's `non_interactive` answer applies, as before (default `unavailable`: the call is denied,
"no approval channel is available"). Nor is a client on 2026-07-28: that revision has no
server-to-client request in the middle of a call (SEP-2322 ends the call with an
`InputRequiredResult` and the client sends it again with the answer, while tether's served call
is one running pipeline waiting for its approval), so its Ask gets the `non_interactive` answer
too. Imports the `mcp` SDK's types.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..approval import ApprovalAnswer, ApprovalQuestion, Rejection, Unanswerable

__all__ = ["ClientPrompter", "elicits"]

_NO_FIELDS: dict[str, Any] = {"type": "object", "properties": {}}


def elicits(capabilities: types.ClientCapabilities | None) -> bool:
    """Whether a client takes form elicitations (an empty `elicitation` object means form)."""
    elicitation = None if capabilities is None else capabilities.elicitation
    if elicitation is None:
        return False
    return elicitation.form is not None or elicitation.url is None


class ClientPrompter:
    """Asks the client of the call in question (see the module note)."""

    def __init__(self) -> None:
        self.calls: dict[str, Any] = {}
        """call id -> the `ServerRequestContext` of the served call (kept by `ToolServer`)."""

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        request = self.calls.get(question.call_id)
        if request is None or request.protocol_version in MODERN_PROTOCOL_VERSIONS:
            raise Unanswerable()
        if not elicits(request.session.client_capabilities):
            raise Unanswerable()
        result: types.ElicitResult = await request.session.elicit_form(
            _message(question), _NO_FIELDS, request.request_id
        )
        if result.action == "accept":
            return "allow-once"
        if result.action == "cancel":
            return Rejection("the MCP client cancelled the approval")
        return "reject"


def _message(question: ApprovalQuestion) -> str:
    if question.kind == "sandbox-escalation":
        head = f'tether: "{question.tool_name}" failed in the sandbox; run it once outside it?'
    else:
        head = f'tether: allow the tool "{question.tool_name}" to run?'
    lines = [head]
    if question.reason:
        lines.append(f"why: {question.reason}")
    if question.arguments is not None:
        lines.append("arguments: " + json.dumps(question.arguments, ensure_ascii=False))
    return "\n".join(lines)
