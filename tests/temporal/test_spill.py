"""A tool result too big for a Temporal payload is spilled on the worker: the activity's output
carries a preview and the locator, and the file holds the full `tool/result` record. Runs the
real `tool_call` activity (a real `bash` process) in the SDK's `ActivityEnvironment`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("temporalio")

from temporalio.testing import ActivityEnvironment

from tether.agent.unattended import apply_flags
from tether.cli.boot import start
from tether.temporal.activities import TetherActivities
from tether.temporal.blobs import BlobStore
from tether.temporal.payloads import ToolCallInput
from tether.temporal.storage import FileStorageDriver


async def test_a_result_over_the_spill_threshold_keeps_a_preview_and_the_full_text_on_the_worker(
    tmp_path: Path,
) -> None:
    ctx = await start(cwd=tmp_path, agent=True)
    apply_flags(ctx, yolo=True, allow=())
    try:
        activities = TetherActivities(
            ctx,
            cwd=tmp_path,
            blobs=BlobStore(FileStorageDriver(tmp_path / "payloads"), "default"),
            worker_name="w1",
            spill_dir=tmp_path / "spill",
            spill_bytes=20_000,
        )
        command = "python3 -c \"print('x' * 30000)\""
        arguments = json.dumps({"command": command, "description": "big"})
        output = await ActivityEnvironment().run(
            activities.tool_call, ToolCallInput("s1", 1, 1, "big", "bash", arguments)
        )
    finally:
        await ctx.dispose()
    spilled = tmp_path / "spill" / "s1" / "big.json"
    assert output.spilled == f"w1:{spilled}"
    (block,) = output.record["message"]["content"][0]["content"]
    assert block["text"].startswith("x" * 4000 + "\n[... the full result (")
    assert block["text"].endswith(f"stored on worker w1:{spilled}]")
    full = json.loads(spilled.read_text())
    assert "x" * 30000 in full["message"]["content"][0]["content"][0]["text"]
