"""How an approval `Ask` on a worker becomes a question the session workflow holds.

Owns the worker's prompter, `DeferredApprovals` (attached by `tether worker --approvals`), and
the scopes the tool activities open around one call's policy stage (`tools.prepare`):

    deferring(call_id)     `tool_call`: an ask is recorded and answered `allow-once`
                           provisionally, so the rest of the policy (guards, the abort check)
                           still decides; the activity then stops before dispatch and returns
                           the question — it never dispatches a call whose ask it deferred
    answering(call_id,     `tool_dispatch`: an ask gets the human's answer, for the same
      decision, fp)        arguments only (another fingerprint is rejected)
    no scope               an ask from elsewhere — a nested Code Mode call inside a body that
                           already runs — raises, which the approval service answers
                           `unavailable` (the call is denied: nobody can answer from inside a
                           running activity)

Not here: the waiting. The workflow holds the question between the two activities and takes
the answer as an Update, so a human answers from any client, and no worker is occupied — or
lost — while nobody has answered.

Scopes are per call id and cover the policy stage only; an activity whose call id is in a scope
(another session's call that happens to share the id) waits until that scope ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field

from ..plugins.approval import ApprovalAnswer, ApprovalQuestion, Rejection
from .payloads import ApprovalDecision

__all__ = ["DeferredApprovals", "PolicyScope", "answer_of"]


def answer_of(decision: ApprovalDecision) -> ApprovalAnswer:
    """The approval service's answer for a human's decision."""
    if decision.answer == "allow-once":
        return "allow-once"
    if decision.reason is not None and decision.reason.strip():
        return Rejection(decision.reason)
    return "reject"


@dataclass
class PolicyScope:
    """One call's policy stage. `answer` None defers an ask (recorded in `question`)."""

    answer: ApprovalAnswer | None
    fingerprint: str | None
    question: ApprovalQuestion | None = None
    ended: asyncio.Event = field(default_factory=asyncio.Event)


class DeferredApprovals:
    """The prompter of a worker whose asks wait in the session workflow (see the module note)."""

    def __init__(self) -> None:
        self._scopes: dict[str, PolicyScope] = {}

    def deferring(self, call_id: str) -> AbstractAsyncContextManager[PolicyScope]:
        """The `tool_call` scope: an ask is deferred (`scope.question`)."""
        return self._scope(call_id, PolicyScope(None, None))

    def answering(
        self, call_id: str, decision: ApprovalDecision, fingerprint: str
    ) -> AbstractAsyncContextManager[PolicyScope]:
        """The `tool_dispatch` scope: an ask about these arguments gets `decision`."""
        return self._scope(call_id, PolicyScope(answer_of(decision), fingerprint))

    @asynccontextmanager
    async def _scope(self, call_id: str, scope: PolicyScope) -> AsyncIterator[PolicyScope]:
        while (held := self._scopes.get(call_id)) is not None:
            await held.ended.wait()
        self._scopes[call_id] = scope
        try:
            yield scope
        finally:
            del self._scopes[call_id]
            scope.ended.set()

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        scope = self._scopes.get(question.call_id)
        if scope is None:  # the approval service answers `unavailable` (and logs this)
            raise RuntimeError(
                f'tool "{question.tool_name}" ({question.call_id}) asked for approval from '
                "inside a running activity (a nested call); only a model's own calls can wait "
                "for a human on a Temporal worker"
            )
        if scope.answer is None:
            scope.question = question
            return "allow-once"  # provisional: the deferring activity never dispatches it
        if question.fingerprint != scope.fingerprint:
            return "reject"
        return scope.answer
