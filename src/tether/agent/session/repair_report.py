"""What loading a session had to repair, as data and as sentences for users.

Owns `RepairReport` (a torn tail cut, the interrupted turn closed, the events crash repair
appended, what was done to subagent sessions first) and `ChildRepair`. Does not own the repair
itself (`repair.py`, `store.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import events as ev
from .events import SessionEvent
from .files import TornTail
from .repair import TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN

__all__ = ["ChildRepair", "RepairReport"]


@dataclass(frozen=True, slots=True)
class ChildRepair:
    """What opening a session did first to one of its subagent sessions: its repair, or why it
    could not be opened (the parent is repaired regardless)."""

    session_id: str
    report: RepairReport | None = None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class RepairReport:
    """What loading a session had to repair (nothing, by default). `children`: what opening it
    did first to the subagent sessions it started (deepest first)."""

    torn_tail: TornTail | None = None
    closed_turn: int | None = None  # the interrupted turn crash repair closed
    synthesized: tuple[SessionEvent, ...] = ()  # the events crash repair appended
    children: tuple[ChildRepair, ...] = ()

    @property
    def repaired(self) -> bool:
        return (
            self.torn_tail is not None
            or bool(self.synthesized)
            or any(c.problem is not None or (c.report and c.report.repaired) for c in self.children)
        )

    def describe(self) -> list[str]:
        """One sentence per repair, for users (subagent sessions first)."""
        lines: list[str] = []
        for child in self.children:
            if child.problem is not None:
                lines.append(
                    f"could not repair subagent session {child.session_id}: {child.problem}"
                )
            for line in child.report.describe() if child.report is not None else ():
                lines.append(f"subagent session {child.session_id}: {line}")
        if self.torn_tail is not None:
            lines.append(f"cut a torn last line: {self.torn_tail.describe()}")
        results = [e for e in self.synthesized if e.type == ev.TOOL_RESULT]
        codes: dict[str, int] = {}
        kept = 0
        for event in results:
            error = event.data.get("error")
            code = error.get("code") if isinstance(error, dict) else None
            if code in (TOOL_OUTCOME_UNKNOWN, TOOL_NOT_STARTED):
                codes[str(code)] = codes.get(str(code), 0) + 1
            else:
                kept += 1
        detail = ", ".join(f"{n} {code}" for code, n in codes.items())
        with_results = (f" with synthetic tool results ({detail})" if detail else "") + (
            f"{' and' if detail else ' with'} {kept} held tool result{'s' if kept > 1 else ''}"
            if kept
            else ""
        )
        children = sum(1 for e in self.synthesized if e.type == ev.CODE_DISPATCH)
        if children:
            lines.append(
                f"gave {children} open Code Mode sub-call{'s' if children > 1 else ''} the"
                f" outcome {TOOL_OUTCOME_UNKNOWN}"
            )
        if self.closed_turn is not None:
            lines.append(f"closed interrupted turn {self.closed_turn}{with_results}")
        elif results:  # a turn closed without them (a writer that could not record them)
            turn = results[0].data.get("turn")
            parts = [*(f"{n} {code}" for code, n in codes.items())]
            parts += [f"{kept} held"] if kept else []
            lines.append(f"gave turn {turn} its missing tool results ({', '.join(parts)})")
        return lines
