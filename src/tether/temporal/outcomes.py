"""Outcome mapping: what a tool call that never returned a result of its own ends as.

Owns the decision table and the exact result records the workflow synthesizes (pure data, safe
inside the workflow sandbox; the texts equal tether's own builders, which the tests check):

    never scheduled (the turn was aborted first)        ABORTED_BEFORE_DISPATCH
    cancelled before the activity started               ABORTED_BEFORE_DISPATCH
      (`started_event_id == 0`)
    never started for another reason (no worker of its  TOOL_NOT_STARTED
      task queue took it within the schedule-to-start
      timeout)
    started, then its worker died (heartbeat timeout),  TOOL_OUTCOME_UNKNOWN
      the start_to_close backstop expired, or the
      activity failed without publishing a result

A call whose activity returned carries its own published result — `ABORTED` after dispatch,
`TOOL_TIMEOUT`, a success — and is never mapped here.
"""

from __future__ import annotations

from typing import Any, Final, Literal

__all__ = [
    "ABORTED_BEFORE_DISPATCH",
    "OUTCOME_UNKNOWN_TEXT",
    "TOOL_NOT_STARTED",
    "TOOL_NOT_STARTED_TEXT",
    "TOOL_OUTCOME_UNKNOWN",
    "FailureKind",
    "outcome_for",
    "synthesized_record",
]

ABORTED_BEFORE_DISPATCH: Final = "ABORTED_BEFORE_DISPATCH"
TOOL_OUTCOME_UNKNOWN: Final = "TOOL_OUTCOME_UNKNOWN"
TOOL_NOT_STARTED: Final = "TOOL_NOT_STARTED"

ABD_TEXT: Final = "Error: tool call aborted before dispatch"
OUTCOME_UNKNOWN_TEXT: Final = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded."
    " Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the"
    " operation is read-only or idempotent; if it may have side effects, first verify external"
    " state or ask the user. Do not retry blindly."
)
TOOL_NOT_STARTED_TEXT: Final = (
    "The tool call was interrupted before the Harness recorded it as started."
    " Retry it if it is still needed."
)

FailureKind = Literal[
    "cancelled", "heartbeat-timeout", "backstop-timeout", "not-started", "timeout", "failed"
]
"""How an activity ended without a value: Temporal cancelled it, a timeout fired (`heartbeat`,
`start_to_close` = the backstop, `schedule_to_start` = no worker took it, or another), or it
failed."""

_ERRORS: Final = {
    ABORTED_BEFORE_DISPATCH: ("AbortError", "tool call aborted before dispatch", ABD_TEXT),
    TOOL_OUTCOME_UNKNOWN: ("ToolOutcomeUnknownError", None, OUTCOME_UNKNOWN_TEXT),
    TOOL_NOT_STARTED: ("ToolNotStartedError", None, TOOL_NOT_STARTED_TEXT),
}


def outcome_for(kind: FailureKind, *, started: bool) -> str:
    """The code for an activity that ended with `kind`; `started` is `started_event_id != 0`."""
    if not started:
        return ABORTED_BEFORE_DISPATCH if kind == "cancelled" else TOOL_NOT_STARTED
    return TOOL_OUTCOME_UNKNOWN


def synthesized_record(
    code: str, *, turn: int, step: int, call_id: str, message_id: str, detail: str | None = None
) -> dict[str, Any]:
    """The `tool/result` event data for a synthesized `code` (see the table above); `detail`
    (why Temporal gave up, e.g. "heartbeat timeout") goes into `meta`."""
    name, _, text = _ERRORS[code]
    record: dict[str, Any] = {
        "turn": turn,
        "step": step,
        "message": {
            "id": message_id,
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "call_id": call_id,
                    "content": [{"type": "text", "text": text}],
                    "is_error": True,
                }
            ],
            "source": {"kind": "tool", "call_id": call_id},
        },
        "error": {"name": name, "code": code},
    }
    if detail is not None:
        record["meta"] = {"temporal": detail}
    return record
