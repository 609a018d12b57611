"""Recorded session-workflow histories replay through today's workflow code (Temporal's
`Replayer`): a change that would make a running session nondeterministic fails here. The
histories were recorded from the dev-server tests (TETHER_RECORD_HISTORIES=1): a completed turn
with parallel reads and a bash call, a turn aborted mid-`bash sleep` with a queued sibling, a
turn whose worker was killed mid-tool followed by a second turn, a call approved from another
client and one aborted while it waited for approval, and the first run of a session that
continued as new. No server is needed."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("temporalio")

from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from tether.temporal.worker import workflow_runner
from tether.temporal.workflow import SessionWorkflow

HISTORIES = Path(__file__).parent / "histories"
NAMES = (
    "aborted-turn",
    "approval-aborted",
    "approval-allowed",
    "completed-turn",
    "continued-as-new",
    "worker-killed",
)


@pytest.mark.parametrize("name", NAMES)
async def test_a_recorded_history_replays_without_nondeterminism(name: str) -> None:
    history = WorkflowHistory.from_json(name, (HISTORIES / f"{name}.json").read_text())
    replayer = Replayer(workflows=[SessionWorkflow], workflow_runner=workflow_runner())
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None
