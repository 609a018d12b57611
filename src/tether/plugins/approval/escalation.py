"""Asking a person to let one act of a tool leave the sandbox: the caller's side of
`Approval.escalate`.

Owns `ask_to_leave_sandbox(ctx, call, reason)`: the `sandbox-escalation` question for the call
`call` (the file tools ask it for a write the sandbox refuses). Only a person answers it: without
a calling agent, an `approval` service that offers `escalate`, or an attached prompter, the
answer is `unavailable` at once (headless runs, `tether tools call`, `--yolo` and permission
rules never take an act out of the sandbox). Does not own the question's wording in the terminal
(`tether.cli.approval`) or what the tool does with the answer.
"""

from __future__ import annotations

from typing import Protocol

from ...core.renamed import renamed_keywords
from ...kernel import Context
from ...tools.approval import ApprovalOutcome, ApprovalRequest
from ...tools.execution import ToolExecution

__all__ = ["ask_to_leave_sandbox"]


class _Escalation(Protocol):
    @property
    def interactive(self) -> bool: ...

    async def escalate(self, request: ApprovalRequest) -> ApprovalOutcome: ...


@renamed_keywords(exec="call")
async def ask_to_leave_sandbox(ctx: Context, call: ToolExecution, reason: str) -> ApprovalOutcome:
    """`allowed-once` when a person allowed it; else `rejected`, `cancelled` (the call's signal
    aborted) or `unavailable` (nobody can answer here)."""
    approval = ctx.get("approval")
    if call.signal.aborted:
        return "cancelled"
    if (
        call.agent is None
        or not callable(getattr(approval, "escalate", None))
        or not getattr(approval, "interactive", False)
    ):
        return "unavailable"
    escalation: _Escalation = approval  # type: ignore[assignment]
    request = ApprovalRequest(call.agent, call.name, call.call_id, reason, call.signal)
    return await escalation.escalate(request)
