"""The workflow's synthesized results are exactly tether's own (no server needed)."""

from __future__ import annotations

from tether.agent.messages import message_to_json, tool_result_message
from tether.agent.session import OUTCOME_UNKNOWN_TEXT, TOOL_NOT_STARTED_TEXT
from tether.temporal import outcomes
from tether.tools.results import aborted_before_dispatch_result


def test_the_synthesized_aborted_before_dispatch_record_is_the_registrys_result() -> None:
    result = aborted_before_dispatch_result()
    message = message_to_json(tool_result_message("c1", result, id="m1"))
    record = outcomes.synthesized_record(
        "ABORTED_BEFORE_DISPATCH", turn=1, step=2, call_id="c1", message_id="m1"
    )
    assert record == {
        "turn": 1,
        "step": 2,
        "message": message,
        "error": {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"},
    }


def test_the_outcome_texts_are_crash_repairs() -> None:
    assert (outcomes.OUTCOME_UNKNOWN_TEXT, outcomes.TOOL_NOT_STARTED_TEXT) == (
        OUTCOME_UNKNOWN_TEXT,
        TOOL_NOT_STARTED_TEXT,
    )


def test_a_call_cancelled_before_it_started_is_aborted_before_dispatch() -> None:
    assert outcomes.outcome_for("cancelled", started=False) == "ABORTED_BEFORE_DISPATCH"


def test_a_call_whose_worker_died_is_outcome_unknown() -> None:
    assert outcomes.outcome_for("heartbeat-timeout", started=True) == "TOOL_OUTCOME_UNKNOWN"


def test_a_call_no_worker_took_is_not_started() -> None:
    assert outcomes.outcome_for("timeout", started=False) == "TOOL_NOT_STARTED"
