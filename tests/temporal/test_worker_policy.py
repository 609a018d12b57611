"""The Temporal worker applies the local loop's session policy (issue 34's gaps): a tool a deny
rule names whole is not sent to the model by the `llm_step` activity (header and request), and
a directory the worker was given (`tether worker --add-dir`, a settings file's
`permissions.additionalDirectories`) is a writable root of the commands' sandbox, so a real
`bash` call of the `tool_call` activity writes there. Activities run in the SDK's
`ActivityEnvironment` over the worker's own boot (`worker_context`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

pytest.importorskip("temporalio")

from temporalio.testing import ActivityEnvironment

from tether.temporal.activities import TetherActivities
from tether.temporal.blobs import BlobStore
from tether.temporal.cluster import Cluster
from tether.temporal.payloads import LlmStepInput, LogEntry, ToolCallInput
from tether.temporal.storage import FileStorageDriver
from tether.temporal.worker import WorkerSettings, worker_context
from tether.testing.scripted_model import ScriptedModelServer, text_reply


@pytest.fixture
async def server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as scripted:
        monkeypatch.setenv("OPENAI_BASE_URL", scripted.base_url)
        monkeypatch.setenv("OPENAI_MODEL", "scripted")
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.setenv("TETHER_HOME", str(tmp_path / "tether-home"))
        (tmp_path / "home").mkdir()
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        yield scripted


def settings(workspace: Path, *add_dirs: Path, yolo: bool = False) -> WorkerSettings:
    """A worker's settings (the cluster is never dialled: the activities run in-process)."""
    cluster = Cluster(address="127.0.0.1:7233")
    return WorkerSettings(
        cluster=cluster, task_queue="q", cwd=workspace, add_dirs=add_dirs, yolo=yolo
    )


def activities_of(ctx: object, workspace: Path) -> TetherActivities:
    blobs = BlobStore(FileStorageDriver(workspace.parent / "payloads"), "default")
    return TetherActivities(ctx, cwd=workspace, blobs=blobs, worker_name="w1")  # type: ignore[arg-type]


def deny(workspace: Path, *rules: str) -> None:
    (workspace / ".claude").mkdir()
    permissions = {"permissions": {"deny": list(rules)}}
    (workspace / ".claude" / "settings.json").write_text(json.dumps(permissions))


async def test_a_tool_a_deny_rule_names_whole_is_not_sent_to_the_model(
    server: ScriptedModelServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    deny(workspace, "Bash")
    server.push(text_reply("ok"))
    ctx = await worker_context(settings(workspace))
    try:
        user = {"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}]}
        user["source"] = {"kind": "user"}
        step = LlmStepInput("s1", 1, 1, history=[LogEntry("user/message", user)])
        output = await ActivityEnvironment().run(activities_of(ctx, workspace).llm_step, step)
    finally:
        await ctx.dispose()
    assert output.header is not None
    sent = [tool["name"] for tool in output.header["tools"]]
    assert "bash" not in sent
    assert "read" in sent
    requested = [tool["function"]["name"] for tool in server.requests[0].body["tools"]]
    assert "bash" not in requested


async def test_a_command_writes_in_a_directory_the_worker_was_given(
    server: ScriptedModelServer, tmp_path: Path
) -> None:
    workspace, shared = tmp_path / "workspace", tmp_path / "shared"
    workspace.mkdir()
    shared.mkdir()
    ctx = await worker_context(settings(workspace, shared, yolo=True))
    try:
        arguments = json.dumps({"command": f"touch {shared}/made.txt", "description": "make"})
        output = await ActivityEnvironment().run(
            activities_of(ctx, workspace).tool_call,
            ToolCallInput("s1", 1, 1, "c1", "bash", arguments),
        )
    finally:
        await ctx.dispose()
    assert output.code is None, output.record
    assert (shared / "made.txt").exists()
