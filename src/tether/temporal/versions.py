"""Versioning of `SessionWorkflow`: every behaviour change has a patch id, listed in `PATCHES`.

Policy (docs/temporal.md, "Versioning"):

* A change to what the workflow *does* — which commands it issues (activities, timers, markers,
  continue-as-new), in which order, with which options, which log entries it emits, or the shape
  of a payload it sends that an older worker cannot read — takes the new path only where
  `workflow.patched(id)` says so. The old path stays until every run that could take it has
  closed and its history aged out; then the patch is deprecated (`workflow.deprecate_patch`),
  never just deleted.
* A run decides all of its patches once, when it starts (`Behaviour.of_this_run`, from the
  workflow's `__init__`): a run recorded before a patch replays without its marker and keeps the
  old behaviour for the rest of its life, also on a worker that runs newer code; its next run
  (continue-as-new) takes every active patch. So one run never mixes two behaviours, and the
  log entries of one turn are always produced by one behaviour.
* Every patch has at least one recorded history in `tests/temporal/histories` taken with it
  active, and every recorded history replays with today's code, deriving exactly the turn
  results it recorded (`tests/temporal/test_replay.py` enforces both).
* Rolling deploys: `tether worker --hold-patches` runs today's code but activates no patch a
  run has not already taken (Temporal's patch-activation callback). Deploy every worker with
  it, then restart them without it: no older worker ever sees a marker it does not know.

No I/O, no tether runtime: imported inside the workflow sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from temporalio import workflow

__all__ = [
    "HISTORY_SIZE_CONTINUE",
    "PATCHES",
    "PAYLOADS_BY_REFERENCE",
    "START_TIMEOUTS",
    "SUMMARIES",
    "Behaviour",
    "Patch",
]


@dataclass(frozen=True)
class Patch:
    """One behaviour change: its `workflow.patched` id and what it changed."""

    id: str
    change: str


START_TIMEOUTS: Final = "tether-2026-12-start-timeouts"
SUMMARIES: Final = "tether-2026-12-activity-summaries"
HISTORY_SIZE_CONTINUE: Final = "tether-2026-12-history-size-continue"
PAYLOADS_BY_REFERENCE: Final = "tether-2026-12-payloads-by-reference"

PATCHES: Final[tuple[Patch, ...]] = (
    Patch(
        START_TIMEOUTS,
        "tool activities get `tool_schedule_to_start_s` (TOOL_NOT_STARTED when no worker takes "
        "the call) and model steps `llm_schedule_to_start_s` (the turn ends "
        "LLM_STEP_NOT_STARTED); a model step whose payload is over the server's limit is not "
        "retried",
    ),
    Patch(SUMMARIES, "activities carry a summary (the tool and its arguments, the model step)"),
    Patch(
        HISTORY_SIZE_CONTINUE,
        "between turns the run also continues as new once its history holds "
        "`history_bytes_per_run` bytes or `history_events_per_run` events",
    ),
    Patch(
        PAYLOADS_BY_REFERENCE,
        "model steps get the conversation as sealed segments plus an inline tail "
        "(`LlmStepInput.conversation`) and the header's digest, instead of every entry inline; "
        "tool results and the request header over the worker's inline size come back as "
        "references (`ToolCallInput.by_reference`); continue-as-new carries the conversation "
        "by reference",
    ),
)


@dataclass(frozen=True)
class Behaviour:
    """The patches a run takes (see the module note)."""

    active: frozenset[str]

    @classmethod
    def of_this_run(cls) -> Behaviour:
        """Decide every patch of `PATCHES` for the calling workflow run (call it once, first)."""
        return cls(frozenset(p.id for p in PATCHES if workflow.patched(p.id)))

    def __contains__(self, patch_id: object) -> bool:
        return patch_id in self.active
