"""Merging the outputs of every hook that matched one point into one outcome (spec §5.2).

Owns `MergedHookOutcome` and `merge_hook_outputs`. Ranks: `deny`/`block` 3, `ask` 2,
`allow`/`approve` 1, none 0; the merged decision is the highest rank, spelled
`deny` | `ask` | `allow` | `none`. `reason` joins (with a blank line) the reasons of the hooks at
the winning rank, and only ranks 3 and 2 contribute one. `stop` is sticky on the first
`continue: false` (with its `stopReason`); `additional_context` and `system_messages` are
accumulated in hook order, empty ones skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from .output import HookDecision, HookOutput

__all__ = ["MergedDecision", "MergedHookOutcome", "decision_rank", "merge_hook_outputs"]

MergedDecision: TypeAlias = Literal["deny", "ask", "allow", "none"]

_RANK: Final[dict[HookDecision | None, int]] = {
    "deny": 3,
    "block": 3,
    "ask": 2,
    "allow": 1,
    "approve": 1,
    None: 0,
}
_SPELLING: Final[tuple[MergedDecision, ...]] = ("none", "allow", "ask", "deny")


def decision_rank(decision: HookDecision | None) -> int:
    """3 for deny/block, 2 for ask, 1 for allow/approve, 0 for none."""
    return _RANK.get(decision, 0)


@dataclass(frozen=True, slots=True)
class MergedHookOutcome:
    """What all the hooks of one point decided together."""

    decision: MergedDecision = "none"
    reason: str | None = None
    stop: bool = False
    stop_reason: str | None = None
    additional_context: tuple[str, ...] = ()
    system_messages: tuple[str, ...] = ()


def merge_hook_outputs(outputs: Iterable[HookOutput]) -> MergedHookOutcome:
    """Merge in hook order. An empty input is `MergedHookOutcome()` (decision `none`)."""
    best = 0
    reasons: list[str] = []
    stop = False
    stop_reason: str | None = None
    contexts: list[str] = []
    messages: list[str] = []
    for output in outputs:
        rank = decision_rank(output.decision)
        if rank > best:
            best, reasons = rank, []
        if rank == best and rank >= 2 and output.reason:
            reasons.append(output.reason)
        if output.continue_ is False and not stop:
            stop, stop_reason = True, output.stop_reason
        if output.additional_context:
            contexts.append(output.additional_context)
        if output.system_message:
            messages.append(output.system_message)
    return MergedHookOutcome(
        decision=_SPELLING[best],
        reason="\n\n".join(reasons) if reasons else None,
        stop=stop,
        stop_reason=stop_reason,
        additional_context=tuple(contexts),
        system_messages=tuple(messages),
    )
