"""The approval seam: what the registry asks an optional `approval` service when a policy says
`Ask`, and the four answers it understands.

Owns: `ApprovalRequest`, `ApprovalOutcome`, and the `ApprovalService` protocol. The service
itself (a terminal prompt, a rule store) is a plugin; the registry looks it up with
`ctx.get("approval")` on every `Ask` and degrades to a denial without one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias

from ..core.signals import AbortSignal

__all__ = ["ApprovalOutcome", "ApprovalRequest", "ApprovalService"]

ApprovalOutcome: TypeAlias = Literal["allowed-once", "rejected", "cancelled", "unavailable"]


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """One question to the user. `signal` is the caller's: a pending prompt must observe it and
    answer `cancelled` when it aborts."""

    agent: object
    tool_name: str
    call_id: str
    reason: str | None
    signal: AbortSignal


class ApprovalService(Protocol):
    """Provided as `approval`."""

    async def request(self, request: ApprovalRequest) -> ApprovalOutcome: ...
