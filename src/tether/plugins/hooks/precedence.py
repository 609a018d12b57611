"""Combining `tools/pre-execute` decisions so that the strictest wins: deny > ask > allow.

Owns `strictest(mine, downstream)`. A policy listener that wants its deny to hold whatever its
position in the waterfall returns a `Deny` at once (nothing ranks above it); otherwise it calls
`next()` and returns `strictest(its own decision, what next() returned)`. Every such listener is
then consulted, and the order they were registered in does not change the outcome.

Two asks keep both reasons (joined with a blank line). A decision that is not `Allow`, `Deny`
or `Ask` is returned as is, so the registry fails the call closed.
"""

from __future__ import annotations

from ...tools.decisions import Allow, Ask, Deny, PreToolDecision

__all__ = ["strictest"]


def _rank(decision: object) -> int:
    if isinstance(decision, Deny):
        return 3
    if isinstance(decision, Ask):
        return 2
    if isinstance(decision, Allow):
        return 1
    return 4  # malformed: let the registry refuse it


def strictest(mine: PreToolDecision, downstream: object) -> PreToolDecision:
    """The stricter of two decisions (`downstream` on a tie, except that asks merge reasons)."""
    ours, theirs = _rank(mine), _rank(downstream)
    if isinstance(mine, Ask) and isinstance(downstream, Ask):
        reasons = [r for r in (mine.reason, downstream.reason) if r]
        return Ask("\n\n".join(dict.fromkeys(reasons)) if reasons else None)
    if ours > theirs:
        return mine
    return downstream  # type: ignore[return-value]  # malformed values pass through
