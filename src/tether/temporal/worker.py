"""`run_worker`: one Temporal worker for one task queue, over a tether `Context` booted from the
workspace's configuration.

Owns the worker's wiring: boot (`worker_context`: the CLI's built-ins plus `tether.yml`, with the
policy of `tether run`: deny rules and hooks hold, a tool a deny rule names whole is not sent to
the model, added directories are reachable and writable roots of the sandbox, an ask is refused
unless `--yolo`/`--allow` permits it — or, with `approvals`, is deferred to the session
workflow, which waits for a human's answer), the
client connection and its payload store (`tether.temporal.connection`), the `SessionWorkflow` and
the three activities on the queue, heartbeat throttling (a cancel reaches an activity on its
next heartbeat, so the throttle bounds the abort latency), patch activation (`hold_patches`: run
today's code, take no new patch — the first phase of a rolling deploy, see
`tether.temporal.versions`), and an orderly stop: on stop, running activities get `graceful_s`
to finish before they are cancelled (a cancelled tool still returns its `ABORTED` result), then
the context is disposed.

A worker per workspace: start one with `--task-queue repo-a` in the directory whose files and
processes the tools should touch, and start sessions with `tool_task_queue="repo-a"`.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from temporalio.worker import PatchActivationInput, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from ..agent.boot import start
from ..agent.claude_options import ClaudeOptions, added_directories, builtin_overrides
from ..agent.unattended import apply_flags, refuse_unattended
from ..core.signals import AbortSignal
from ..kernel import Context, tether_home
from ..plugins.approval import Approval
from ..tools.arrivals import settle_tools
from .activities import DEFAULT_SPILL_BYTES, TetherActivities
from .blobs import DEFAULT_INLINE_BYTES
from .cluster import Cluster
from .connection import connected
from .storage import DEFAULT_THRESHOLD, PayloadStore
from .workflow import SessionWorkflow

__all__ = ["WorkerSettings", "hold_patches", "run_worker", "worker_context", "workflow_runner"]


def workflow_runner() -> SandboxedWorkflowRunner:
    """The sandbox with `tether` passed through: the workflow imports only tether's payload
    records and outcome tables, and re-importing the package per run would cost, not protect."""
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules("tether")
    )


@dataclass(frozen=True)
class WorkerSettings:
    cluster: Cluster
    task_queue: str
    cwd: Path
    config: Path | None = None
    yolo: bool = False
    allow: Sequence[str] = ()
    heartbeat_throttle_s: float = 0.5
    sticky_timeout_s: float = 10.0
    graceful_s: float = 30.0
    identity: str | None = None
    spill_bytes: int = DEFAULT_SPILL_BYTES
    approvals: bool = False
    payload_store: str | None = None
    payload_threshold: int = DEFAULT_THRESHOLD
    inline_bytes: int = DEFAULT_INLINE_BYTES
    hold_patches: bool = False
    sandbox: str | None = None
    """`--sandbox`: the commands' sandbox over the configured one (every command is contained:
    a SIGKILLed worker leaves none of its commands' processes running)."""
    add_dirs: Sequence[Path] = ()
    """`--add-dir`: directories granted as the workspace is (relative ones to `cwd`)."""


def hold_patches(input: PatchActivationInput) -> bool:
    """The patch-activation callback of a `--hold-patches` worker: no patch a run has not
    already taken becomes active (the run keeps the behaviour of the code before it)."""
    return False


async def worker_context(settings: WorkerSettings) -> Context:
    """The worker's booted `Context`, with the local loop's session policy: the deny rules and
    the settings files of the workspace (so a tool a deny rule names whole is not sent to the
    model: `TetherActivities.llm_step`), the added directories (`--add-dir` and the settings
    files' `permissions.additionalDirectories`: the file tools reach them and they are writable
    roots of the commands' sandbox), the MCP servers' tools settled, nobody to ask (refused, with
    what to do) and `--yolo` / `--allow`. The caller disposes of it.

    Raises ConfigError for a bad configuration file or an `--add-dir` that is not a directory."""
    options = ClaudeOptions(add_dirs=tuple(settings.add_dirs))
    directories = added_directories(options, settings.cwd, None)
    ctx = await start(
        cwd=settings.cwd,
        config_paths=None if settings.config is None else [settings.config],
        agent=True,
        without=frozenset({"subagents"}),  # a `task` child needs an in-process AgentLoop
        sandbox=settings.sandbox,
        added_dirs=directories,
        overrides=builtin_overrides(options, None, [], directories),
    )
    try:
        await settle_tools(ctx, signal=AbortSignal.never())  # MCP servers' tools, before polling
        refuse_unattended(ctx)
        apply_flags(ctx, yolo=settings.yolo, allow=settings.allow)
    except BaseException:
        await ctx.dispose()
        raise
    return ctx


async def run_worker(
    settings: WorkerSettings,
    *,
    stop: asyncio.Event,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Run until `stop` is set; `on_ready(identity)` once the worker polls its queue.

    Raises ValueError for a bad setting (the payload store's URL), RuntimeError when the store
    or the cluster cannot be reached, ConfigError for a bad configuration file."""
    store = PayloadStore.parse(settings.payload_store, threshold=settings.payload_threshold)
    ctx = await worker_context(settings)
    try:
        identity = settings.identity or (
            f"tether@{socket.gethostname()}:{os.getpid()}/{settings.task_queue}"
        )
        async with connected(settings.cluster, None, store) as connection:
            activities = TetherActivities(
                ctx,
                cwd=settings.cwd,
                blobs=connection.blobs,
                worker_name=identity,
                spill_dir=tether_home() / "spill",
                spill_bytes=settings.spill_bytes,
                inline_bytes=settings.inline_bytes,
                heartbeat_every_s=settings.heartbeat_throttle_s / 2,
            )
            approval = ctx.get("approval")
            if settings.approvals and isinstance(approval, Approval):
                approval.attach(activities.approvals)
            throttle = timedelta(seconds=settings.heartbeat_throttle_s)
            worker = Worker(
                connection.client,
                task_queue=settings.task_queue,
                workflows=[SessionWorkflow],
                workflow_runner=workflow_runner(),
                activities=[activities.llm_step, activities.tool_call, activities.tool_dispatch],
                identity=identity,
                max_heartbeat_throttle_interval=throttle,
                default_heartbeat_throttle_interval=throttle,
                sticky_queue_schedule_to_start_timeout=timedelta(seconds=settings.sticky_timeout_s),
                graceful_shutdown_timeout=timedelta(seconds=settings.graceful_s),
                patch_activation_callback=hold_patches if settings.hold_patches else None,
            )
            async with worker:
                if on_ready is not None:
                    on_ready(identity)
                await stop.wait()
    finally:
        await ctx.dispose()
