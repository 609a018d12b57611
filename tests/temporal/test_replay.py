"""The replay corpus (`tests/temporal/corpus.py`): every recorded session-workflow history
replays through today's workflow code without nondeterminism, derives exactly the turn results
it recorded, and starts every activity with the options the history recorded — a change that
would make a running session nondeterministic, re-derive an old turn's log entries differently,
or change an activity's options without a patch fails here. The corpus grows with every
behaviour change: each patch of `tether.temporal.versions` has a history recorded with it
active. No server is needed: external payloads come from the corpus's own file store."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio")

from temporalio import workflow
from temporalio.client import WorkflowHistory

from tether.temporal import options
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


class _ChangedStarts:
    """`temporalio.workflow` as `tether.temporal.options` sees it, with every activity started
    with `change(kwargs)` applied: an unpatched change of activity options."""

    def __init__(self, change: Callable[[dict[str, Any]], None]) -> None:
        self._change = change

    def __getattr__(self, name: str) -> Any:
        return getattr(workflow, name)

    def start_activity(self, *args: Any, **kwargs: Any) -> Any:
        self._change(kwargs)
        return workflow.start_activity(*args, **kwargs)


def _double_heartbeat(kwargs: dict[str, Any]) -> None:
    kwargs["heartbeat_timeout"] = kwargs["heartbeat_timeout"] * 2


def _add_schedule_to_start(kwargs: dict[str, Any]) -> None:
    kwargs["schedule_to_start_timeout"] = timedelta(seconds=45)


@pytest.mark.parametrize(
    ("change", "option"),
    [(_double_heartbeat, "heartbeat"), (_add_schedule_to_start, "schedule_to_start")],
)
async def test_an_unpatched_change_of_activity_options_fails_the_replay(
    monkeypatch: pytest.MonkeyPatch, change: Callable[[dict[str, Any]], None], option: str
) -> None:
    monkeypatch.setattr(options, "workflow", _ChangedStarts(change))
    first_v1 = next(n for n in NAMES if n.startswith("v1/"))  # recorded without start timeouts
    with pytest.raises(AssertionError, match=rf"unpatched change .*{option}: recorded"):
        await replay(load(first_v1))
