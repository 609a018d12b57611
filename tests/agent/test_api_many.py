"""Many agents over one home: starting them stays linear.

Contract: the first agent of a process that opens a sessions root sweeps it (what writers killed
mid-creation left behind); the agents after it do not sweep it again — a sweep looks into every
live writer's directory, so one per agent would make a thousand agents' start quadratic.
"""

from __future__ import annotations

import pytest

from tether.agent.session import SessionStore

from ._rig import Rig, rig

__all__ = ["rig"]  # the fixture, imported for pytest


async def test_agents_over_one_home_sweep_it_once_per_process(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    swept: list[object] = []
    real = SessionStore.sweep

    def sweep(store: SessionStore) -> object:
        swept.append(store.root)
        return real(store)

    monkeypatch.setattr(SessionStore, "sweep", sweep)
    leftover = rig.store.path("dead").parent
    leftover.mkdir(parents=True)
    (leftover / "writer.lock").write_text("999999\n")  # a creation killed before it published

    for _ in range(3):
        await rig.agent(preset="coding", builtins=False).start()

    assert swept == [rig.home / "sessions"]
    assert not leftover.exists()
