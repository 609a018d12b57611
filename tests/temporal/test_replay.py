"""The replay corpus (`tests/temporal/corpus.py`): every recorded session-workflow history
replays through today's workflow code without nondeterminism and derives exactly the turn
results it recorded — a change that would make a running session nondeterministic, or re-derive
an old turn's log entries differently, fails here. The corpus grows with every behaviour change:
each patch of `tether.temporal.versions` has a history recorded with it active. No server is
needed: external payloads come from the corpus's own file store."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("temporalio")

from temporalio.client import WorkflowHistory

from tether.temporal.versions import PATCHES

from .corpus import CURRENT, HISTORIES, histories, patch_markers, replay

NAMES = [str(path.relative_to(HISTORIES).with_suffix("")) for path in histories()]


def load(name: str) -> WorkflowHistory:
    return WorkflowHistory.from_json(name, (HISTORIES / f"{name}.json").read_text())


@pytest.mark.parametrize("name", NAMES)
async def test_a_recorded_history_replays_and_derives_the_turns_it_recorded(name: str) -> None:
    await replay(load(name))


def test_the_corpus_holds_the_histories_of_every_released_behaviour() -> None:
    assert {Path(n).parent.name for n in NAMES} == {"v1", "v2"}
    assert len([n for n in NAMES if n.startswith("v1/")]) == 6


def test_every_patch_has_a_recorded_history_taken_with_it_active() -> None:
    taken = set().union(*(patch_markers(load(n)) for n in NAMES if n.startswith(CURRENT.name)))
    assert {patch.id for patch in PATCHES} <= taken
