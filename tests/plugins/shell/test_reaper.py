"""tether as child subreaper (Linux): a subprocess service makes this process the subreaper of its
descendants; a platform without one is said once in the log; reaping takes exactly the zombies it
is given that are this process's children and the very instance recorded, so a child someone else
waits for keeps its exit status."""

from __future__ import annotations

import ctypes
import logging
import subprocess
import sys
from dataclasses import replace

import pytest

from tether.plugins.shell import SubprocessService, _reaper
from tether.plugins.shell._tree import entry

from ._support import until

pytestmark = pytest.mark.usefixtures("uncontained")  # the fallback (no namespaces)

_PR_GET_CHILD_SUBREAPER = 37


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_CHILD_SUBREAPER is Linux-only")
async def test_a_subprocess_service_makes_this_process_the_child_subreaper() -> None:
    service = SubprocessService()
    await service.aclose()
    flag = ctypes.c_int(0)
    libc = ctypes.CDLL(None, use_errno=True)

    assert libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0
    assert flag.value == 1
    assert _reaper.is_subreaper()


def test_a_platform_without_a_subreaper_is_logged_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_reaper, "_state", None)
    monkeypatch.setattr(sys, "platform", "darwin")

    with caplog.at_level(logging.INFO, logger="tether.shell"):
        first = _reaper.become_subreaper()
        second = _reaper.become_subreaper()

    assert (first, second) == (False, False)
    assert [r.getMessage() for r in caplog.records] == [
        "no child subreaper on darwin: a command's process that leaves its process group and "
        "outlives its parent cannot be found or stopped by tether"
    ]


async def test_reaping_never_takes_a_zombie_that_is_not_the_recorded_instance() -> None:
    child = subprocess.Popen(["sh", "-c", "exit 3"])
    seen = None

    def zombie() -> bool:
        nonlocal seen
        seen = entry(child.pid)
        return seen is not None and seen.dead

    await until(zombie)
    assert seen is not None

    assert _reaper.reap([replace(seen, start=seen.start + 1)]) == set()
    assert child.wait() == 3  # its owner still gets its status


async def test_reaping_never_takes_a_live_process() -> None:
    child = subprocess.Popen(["sleep", "30"])
    try:
        seen = entry(child.pid)
        assert seen is not None

        assert _reaper.reap([replace(seen, dead=True)]) == set()
        assert child.poll() is None
    finally:
        child.kill()
        child.wait()
