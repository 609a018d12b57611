"""What a prompter is asked and what it may answer: the prompter's side of the `approval` service.

Owns `ApprovalQuestion` (what a prompter shows, with the arguments' `fingerprint`), its `kind`,
the `Prompter` protocol, its answers (`ApprovalAnswer`, `Rejection`) and `Unanswerable`. Does not
own who is asked or what an answer does (`tether.plugins.approval.service`). Import these names
from `tether.plugins.approval`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias

from ...core.json import JsonValue

__all__ = [
    "ApprovalAnswer",
    "ApprovalQuestion",
    "Prompter",
    "QuestionKind",
    "Rejection",
    "Unanswerable",
    "fingerprint",
]


@dataclass(frozen=True, slots=True)
class Rejection:
    """A rejection with the user's reason, which reaches the model in the denial text."""

    reason: str


ApprovalAnswer: TypeAlias = (
    Literal["allow-once", "allow-session", "allow-always", "reject"] | Rejection
)


def fingerprint(arguments: JsonValue | None) -> str:
    """`sha256:<hex>` of the canonical JSON of `arguments`."""
    canonical = json.dumps(
        arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


QuestionKind: TypeAlias = Literal["tool", "sandbox-escalation"]
"""`tool`: may this call run (an `Ask`); `sandbox-escalation`: a command failed in the sandbox,
may it run once more outside it (`Approval.escalate`)."""


@dataclass(frozen=True, slots=True)
class ApprovalQuestion:
    """What a prompter shows. `session_rule` is None when "allow for this session" is not
    offered; `lasting_rules` is empty when "don't ask again" is not, else the rules it saves to
    `saved_to`."""

    tool_name: str
    call_id: str
    arguments: JsonValue | None
    reason: str | None
    session_rule: str | None
    fingerprint: str
    lasting_rules: tuple[str, ...] = ()
    saved_to: str | None = None
    kind: QuestionKind = "tool"


class Prompter(Protocol):
    """An interactive channel. `ask` may be cancelled at any await (the call was aborted). A
    prompter that can show a form also has `async elicit(ElicitationQuestion) ->
    ElicitationReply` (`Approval.elicit` looks for it); one that raises `Unanswerable` has no way to
    ask this one: the configured `non_interactive` answer is given, as without a prompter."""

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer: ...


class Unanswerable(Exception):
    """Raised by a prompter that cannot put this question to anyone (answered by policy)."""
