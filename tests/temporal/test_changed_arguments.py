"""A call whose input an approver changed, run by the real `tool_call` activity (a real `bash`
process, the SDK's `ActivityEnvironment`): the `tool/result` record the workflow appends carries
`changed_arguments`, as the local loop's does; the command that ran is the changed one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio")

from temporalio.testing import ActivityEnvironment

from tether.agent.unattended import apply_flags
from tether.cli.boot import start
from tether.temporal.activities import TetherActivities
from tether.temporal.blobs import BlobStore
from tether.temporal.payloads import ToolCallInput
from tether.temporal.storage import FileStorageDriver
from tether.tools import Allow, ToolExecution


async def test_the_result_record_carries_the_arguments_an_approver_changed(tmp_path: Path) -> None:
    changed = {"command": "touch changed.txt", "description": "changed"}

    async def change(exec: ToolExecution, next: Any) -> object:
        await next()
        return Allow(arguments=changed)

    ctx = await start(cwd=tmp_path, agent=True)
    apply_flags(ctx, yolo=True, allow=())
    ctx.on("tools/pre-execute", change)
    try:
        activities = TetherActivities(
            ctx,
            cwd=tmp_path,
            blobs=BlobStore(FileStorageDriver(tmp_path / "payloads"), "default"),
            worker_name="w1",
        )
        arguments = json.dumps({"command": "touch asked.txt", "description": "asked"})
        output = await ActivityEnvironment().run(
            activities.tool_call, ToolCallInput("s1", 1, 1, "c1", "bash", arguments)
        )
    finally:
        await ctx.dispose()
    assert output.code is None
    assert output.record["changed_arguments"] == changed
    assert (tmp_path / "changed.txt").exists()
    assert not (tmp_path / "asked.txt").exists()
