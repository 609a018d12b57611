"""The orphan ledger on a full disk (issue 18): the bookkeeping failing never makes a command
that runs report an error. The group runs, is owned and stopped as usual, the result says it
ran, and the lost crash protection is one warning line (no traceback). The disk is a real tmpfs
where the test may mount one; otherwise the ledger's file write is made to raise `ENOSPC`
(`tests/agent/_disk.py`)."""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tether import AbortController, Context, ToolExecutionInput
from tether.plugins.jobs import plugin as jobs_plugin
from tether.plugins.shell import bash as bash_plugin
from tether.plugins.shell import plugin as shell_plugin
from tether.tools import ToolRuntime

from ...agent._disk import SmallDisk

pytestmark = pytest.mark.usefixtures("uncontained")  # the fallback (no namespaces)


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SmallDisk]:
    small = SmallDisk.open(tmp_path / "small")
    try:
        (small.path / "run").mkdir()
        small.fill(0)
        if small.mode == "seam":

            def full(self: Path, *args: object, **kwargs: object) -> int:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))

            monkeypatch.setattr(Path, "write_text", full)
        yield small
    finally:
        small.close()


@pytest.fixture
async def ctx(disk: SmallDisk) -> AsyncIterator[Context]:
    root = Context()
    await root.plugin(ToolRuntime)
    await root.plugin(
        shell_plugin,
        {
            "grace_ms": 200,
            "orphan_ledger_dir": str(disk.path / "run"),
            "sandbox": "danger-full-access",
        },
    )
    await root.plugin(jobs_plugin)
    await root.plugin(bash_plugin)
    yield root
    await root.dispose()


async def test_a_command_whose_ledger_entry_cannot_be_written_runs_and_reports_that_it_ran(
    ctx: Context, disk: SmallDisk, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="tether.shell")

    result = await ctx.tools.execute(
        ToolExecutionInput(
            call_id="b1",
            name="bash",
            arguments={"command": "echo ran", "description": "say it"},
            signal=AbortController().signal,
        )
    )

    assert not result.is_error, result.to_json()
    assert "ran" in str(result.to_json()["content"])
    warnings = [r for r in caplog.records if r.name == "tether.shell"]
    assert warnings, "the lost crash protection is said"
    assert all(r.exc_info is None for r in warnings)
    assert all(
        r.getMessage().startswith("cannot update the orphan ledger ")
        and r.getMessage().endswith("; a tether killed now leaves its commands running")
        for r in warnings
    )
    assert list((disk.path / "run").glob("*.tmp")) == []
