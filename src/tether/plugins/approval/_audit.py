"""The audit trail of the `approval` service: `approval/asked` and `approval/decided`.

Owns writing the two events of one question into the requesting agent's session (when it has
one; the fields are listed in `tether.plugins.approval.service`'s module note). Does not own
answering the question (`tether.plugins.approval.service`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ...core.errors import error_message
from ...tools.approval import ApprovalOutcome
from ..hooks.journal import session_of
from .questions import ApprovalQuestion

__all__ = ["_Added", "_Audit"]

_log = logging.getLogger("tether.plugins.approval")


@dataclass(frozen=True, slots=True)
class _Added:
    """What an answer added: a session rule, or rules saved to a settings file."""

    session: str | None = None
    saved: tuple[str, ...] = ()
    saved_to: str | None = None


class _Audit:
    """Writes the two audit events into the requesting agent's session, if it has one."""

    __slots__ = ("_question", "_session")

    def __init__(self, agent: object, question: ApprovalQuestion) -> None:
        self._session = session_of(agent)
        self._question = question

    def asked(self) -> None:
        q = self._question
        data: dict[str, object] = {"call_id": q.call_id, "tool_name": q.tool_name}
        if q.kind != "tool":
            data["kind"] = q.kind
        if q.reason is not None:
            data["reason"] = q.reason
        data["fingerprint"] = q.fingerprint
        if q.session_rule is not None:
            data["session_rule"] = q.session_rule
        if q.lasting_rules:
            data["lasting_rules"] = list(q.lasting_rules)
        self._append("approval/asked", data)

    def decided(
        self,
        outcome: ApprovalOutcome,
        answered_by: str,
        added: _Added | None,
        reason: str | None = None,
    ) -> None:
        q = self._question
        data: dict[str, object] = {
            "call_id": q.call_id,
            "tool_name": q.tool_name,
            "outcome": outcome,
            "answered_by": answered_by,
            "fingerprint": q.fingerprint,
        }
        if q.kind != "tool":
            data["kind"] = q.kind
        if added is not None and added.session is not None:
            data["session_rule"] = added.session
        if added is not None and added.saved:
            data["saved_rules"] = list(added.saved)
            data["saved_to"] = added.saved_to
        if reason is not None:
            data["reason"] = reason
        self._append("approval/decided", data)

    def _append(self, type: str, data: dict[str, object]) -> None:
        session = self._session
        if session is None:
            return
        turn = getattr(session, "open_turn", None)
        if isinstance(turn, int) and not isinstance(turn, bool):
            data = {"turn": turn, **data}
        try:
            session.append(type, data)
        except Exception as exc:
            _log.warning('approval: could not record "%s": %s', type, error_message(exc))
