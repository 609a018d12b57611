"""`tether worker` (a Temporal worker for this workspace) and `tether temporal dev` (the bundled
dev server until Ctrl-C). Does not own the worker itself (`tether.temporal.worker`).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated

import cyclopts

from ....core.ending import Ended, ProcessEnding
from ....kernel import tether_home
from ...sandbox_option import SandboxOpt
from ...temporal_cluster import ClusterFlags
from .shared import CLUSTER, PayloadStoreOpt, app, have_temporalio, on_stop_signals

__all__ = ["dev", "worker"]


async def worker(
    *,
    cluster: ClusterFlags = CLUSTER,
    task_queue: Annotated[str, cyclopts.Parameter(name="--task-queue")] = "tether",
    config: Annotated[Path | None, cyclopts.Parameter(name="--config")] = None,
    cwd: Annotated[Path | None, cyclopts.Parameter(name="--cwd")] = None,
    yolo: Annotated[bool, cyclopts.Parameter(name="--yolo", negative=())] = False,
    allow: Annotated[tuple[str, ...], cyclopts.Parameter(name="--allow", negative=())] = (),
    heartbeat_throttle_s: Annotated[float, cyclopts.Parameter(name="--heartbeat-throttle-s")] = 0.5,
    sticky_timeout_s: Annotated[float, cyclopts.Parameter(name="--sticky-timeout-s")] = 10.0,
    graceful_s: Annotated[float, cyclopts.Parameter(name="--graceful-s")] = 30.0,
    approvals: Annotated[bool, cyclopts.Parameter(name="--approvals", negative=())] = False,
    spill_bytes: Annotated[int, cyclopts.Parameter(name="--spill-bytes")] = 512 * 1024,
    payload_store: PayloadStoreOpt = None,
    inline_bytes: Annotated[
        int,
        cyclopts.Parameter(
            name="--inline-bytes",
            help="A tool result or request header bigger than this is stored in the payload "
            "store and its reference travels instead.",
        ),
    ] = 8 * 1024,
    hold_patches: Annotated[
        bool,
        cyclopts.Parameter(
            name="--hold-patches",
            negative=(),
            help="Run this version's code but start no behaviour change a session has not "
            "taken yet (the first phase of a rolling deploy; docs/temporal.md).",
        ),
    ] = False,
    sandbox: SandboxOpt = None,
    add_dir: Annotated[
        tuple[Path, ...],
        cyclopts.Parameter(
            name="--add-dir",
            negative=(),
            help="Grant this directory as the workspace is: the file tools reach it and "
            "commands may write there under the same sandbox (repeatable; "
            "permissions.additionalDirectories in settings files does the same).",
        ),
    ] = (),
) -> int:
    """Run a Temporal worker for this workspace: session workflows, model steps and tool calls
    on `--task-queue`. Ctrl-C, SIGTERM, SIGHUP or SIGQUIT stops it: running tool calls get
    `--graceful-s` to finish, then are aborted (and still report `ABORTED`); it exits 128 + N
    (143 for SIGTERM). A second signal exits at once.

    The policy is `tether run`'s: deny rules and hooks hold; a call that needs approval is
    refused unless `--allow` or `--yolo` permits it — or, with `--approvals`, waits until a
    human answers from any client (`tether temporal approve`). A tool result whose JSON is
    over `--spill-bytes` is stored under `$TETHER_HOME/spill` and the model gets a preview.
    """
    if not have_temporalio():
        return 2
    from ....kernel import ConfigError
    from ....temporal.worker import WorkerSettings, run_worker

    try:
        where = cluster.resolve()
    except ValueError as exc:
        sys.stderr.write(f"tether: {exc}\n")
        return 2
    settings = WorkerSettings(
        cluster=where,
        task_queue=task_queue,
        cwd=(cwd or Path.cwd()).resolve(),
        config=config,
        yolo=yolo,
        allow=allow,
        heartbeat_throttle_s=heartbeat_throttle_s,
        sticky_timeout_s=sticky_timeout_s,
        graceful_s=graceful_s,
        approvals=approvals,
        spill_bytes=spill_bytes,
        payload_store=payload_store,
        inline_bytes=inline_bytes,
        hold_patches=hold_patches,
        sandbox=sandbox,
        add_dirs=add_dir,
    )
    stop = asyncio.Event()

    def stopping(reason: Ended) -> None:
        sys.stderr.write(
            f"tether worker: {reason.name}: stopping; running tool calls get --graceful-s "
            f"({graceful_s:g} s), then are aborted (again: quit at once)\n"
        )
        sys.stderr.flush()
        stop.set()

    def ready(identity: str) -> None:
        sys.stderr.write(f"tether worker: {identity} polls {task_queue!r} at {where.describe()}\n")
        sys.stderr.flush()

    with ProcessEnding(on_end=stopping) as ending:
        try:
            await run_worker(settings, stop=stop, on_ready=ready)
        except (ConfigError, ValueError) as exc:
            sys.stderr.write(f"tether: {exc}\n")
            return 2
        except (RuntimeError, ImportError) as exc:
            sys.stderr.write(f"tether: {exc}\n")
            return 1
        return ending.exit_code(0)


@app.command(name="dev")
async def dev(
    *,
    db_filename: Annotated[Path | None, cyclopts.Parameter(name="--db-filename")] = None,
    port: Annotated[int, cyclopts.Parameter(name="--port")] = 7233,
    ui_port: Annotated[int, cyclopts.Parameter(name="--ui-port")] = 8233,
) -> int:
    """Run the bundled Temporal dev server on 127.0.0.1 until Ctrl-C (state in a SQLite file,
    default `$TETHER_HOME/temporal/dev.sqlite`)."""
    from ....temporal.devserver import DevServer

    db = db_filename or tether_home() / "temporal" / "dev.sqlite"
    try:
        server = DevServer.start(db, port=port, ui_port=ui_port)
    except RuntimeError as exc:
        sys.stderr.write(f"tether: {exc}\n")
        return 1
    stop = asyncio.Event()
    on_stop_signals(stop)
    sys.stderr.write(f"tether: Temporal dev server at {server.address} (state: {db})\n")
    sys.stderr.flush()
    try:
        await stop.wait()
    finally:
        server.stop()
    return 0
