"""`tether worker` and `tether temporal dev|run|chat|approve`: tether sessions on Temporal.

`tether worker --address HOST:PORT --task-queue repo-a` runs a worker in the current workspace
(its `tether.yml` is the worker's configuration; tools touch this directory's files). `tether
temporal dev` runs the bundled Temporal dev server (SQLite under `$TETHER_HOME/temporal`) until
Ctrl-C. `tether temporal run ADDRESS "task"` starts (or, with `--session`, attaches to) a
session workflow, runs one turn and prints the answer; Ctrl-C sends the `abort_turn` signal and
waits for the turn's balanced end; the session log is projected to `$TETHER_HOME/sessions`, so
`tether sessions show` works. `tether temporal chat ADDRESS` does the same, one turn per line.
(`tether run --temporal` / `tether chat --temporal` are not offered: those commands' options
belong to the headless CLI work.)

`tether temporal approve ADDRESS SESSION [CALL_ID] [--reject]` lists or answers the tool calls
waiting for a human on a `--approvals` worker.

`temporalio` is imported only when one of these commands runs, so tether without the
`temporal` extra still imports; they then say how to install it.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal as os_signal
import sys
from pathlib import Path
from typing import Annotated, Any

import cyclopts

from ...agent.loop import TurnOutcome
from ...agent.session import SessionError, SessionStore, new_session_id
from ...kernel import tether_home
from .agent import exit_code

__all__ = ["app", "worker"]

app = cyclopts.App(name="temporal", help="Durable sessions on Temporal (the `temporal` extra).")

_MISSING = "the Temporal integration needs the extra: pip install 'tether[temporal]'"


def _have_temporalio() -> bool:
    try:
        import temporalio  # noqa: F401
    except ImportError:
        sys.stderr.write(f"tether: {_MISSING}\n")
        return False
    return True


def _on_stop_signals(event: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (os_signal.SIGINT, os_signal.SIGTERM):
        loop.add_signal_handler(sig, event.set)


async def worker(
    *,
    address: Annotated[str, cyclopts.Parameter(name="--address", help="Temporal frontend.")],
    task_queue: Annotated[str, cyclopts.Parameter(name="--task-queue")] = "tether",
    config: Annotated[Path | None, cyclopts.Parameter(name="--config")] = None,
    cwd: Annotated[Path | None, cyclopts.Parameter(name="--cwd")] = None,
    namespace: Annotated[str, cyclopts.Parameter(name="--namespace")] = "default",
    yolo: Annotated[bool, cyclopts.Parameter(name="--yolo", negative=())] = False,
    allow: Annotated[tuple[str, ...], cyclopts.Parameter(name="--allow", negative=())] = (),
    heartbeat_throttle_s: Annotated[float, cyclopts.Parameter(name="--heartbeat-throttle-s")] = 0.5,
    sticky_timeout_s: Annotated[float, cyclopts.Parameter(name="--sticky-timeout-s")] = 10.0,
    graceful_s: Annotated[float, cyclopts.Parameter(name="--graceful-s")] = 30.0,
    approvals: Annotated[bool, cyclopts.Parameter(name="--approvals", negative=())] = False,
    spill_bytes: Annotated[int, cyclopts.Parameter(name="--spill-bytes")] = 512 * 1024,
) -> int:
    """Run a Temporal worker for this workspace: session workflows, model steps and tool calls
    on `--task-queue`. Ctrl-C (or SIGTERM) stops it; running tool calls get `--graceful-s` to
    finish, then are aborted (and still report `ABORTED`).

    The policy is `tether run`'s: deny rules and hooks hold; a call that needs approval is
    refused unless `--allow` or `--yolo` permits it — or, with `--approvals`, waits until a
    human answers from any client (`tether temporal approve`). A tool result whose JSON is
    over `--spill-bytes` is stored under `$TETHER_HOME/spill` and travels as a preview.
    """
    if not _have_temporalio():
        return 2
    from ...kernel import ConfigError
    from ...temporal.worker import WorkerSettings, run_worker

    settings = WorkerSettings(
        address=address,
        task_queue=task_queue,
        cwd=(cwd or Path.cwd()).resolve(),
        config=config,
        namespace=namespace,
        yolo=yolo,
        allow=allow,
        heartbeat_throttle_s=heartbeat_throttle_s,
        sticky_timeout_s=sticky_timeout_s,
        graceful_s=graceful_s,
        approvals=approvals,
        spill_bytes=spill_bytes,
    )
    stop = asyncio.Event()
    _on_stop_signals(stop)

    def ready(identity: str) -> None:
        sys.stderr.write(f"tether worker: {identity} polls {task_queue!r} at {address}\n")
        sys.stderr.flush()

    try:
        await run_worker(settings, stop=stop, on_ready=ready)
    except (ConfigError, ValueError) as exc:
        sys.stderr.write(f"tether: {exc}\n")
        return 2
    return 0


@app.command(name="dev")
async def dev(
    *,
    db_filename: Annotated[Path | None, cyclopts.Parameter(name="--db-filename")] = None,
    port: Annotated[int, cyclopts.Parameter(name="--port")] = 7233,
    ui_port: Annotated[int, cyclopts.Parameter(name="--ui-port")] = 8233,
) -> int:
    """Run the bundled Temporal dev server on 127.0.0.1 until Ctrl-C (state in a SQLite file,
    default `$TETHER_HOME/temporal/dev.sqlite`)."""
    from ...temporal.devserver import DevServer

    db = db_filename or tether_home() / "temporal" / "dev.sqlite"
    try:
        server = DevServer.start(db, port=port, ui_port=ui_port)
    except RuntimeError as exc:
        sys.stderr.write(f"tether: {exc}\n")
        return 1
    stop = asyncio.Event()
    _on_stop_signals(stop)
    sys.stderr.write(f"tether: Temporal dev server at {server.address} (state: {db})\n")
    sys.stderr.flush()
    try:
        await stop.wait()
    finally:
        server.stop()
    return 0


@app.command(name="run")
async def run(
    address: str,
    task: str,
    /,
    *,
    task_queue: Annotated[str, cyclopts.Parameter(name="--task-queue")] = "tether",
    tool_task_queue: Annotated[str | None, cyclopts.Parameter(name="--tool-task-queue")] = None,
    session: Annotated[str | None, cyclopts.Parameter(name="--session")] = None,
    namespace: Annotated[str, cyclopts.Parameter(name="--namespace")] = "default",
    heartbeat_timeout_s: Annotated[float, cyclopts.Parameter(name="--heartbeat-timeout-s")] = 10.0,
) -> int:
    """Run one turn of a durable session on the Temporal cluster at ADDRESS; print the answer.

    Parameters
    ----------
    address
        The Temporal frontend, e.g. 127.0.0.1:7233.
    task
        What to do.
    """
    if not task.strip():
        sys.stderr.write('tether: a task is required, e.g. tether temporal run ADDR "run tests"\n')
        return 2
    if not _have_temporalio():
        return 2
    from ...temporal import client as sessions
    from ...temporal.payloads import SessionSpec
    from ...temporal.projector import project
    from ...temporal.worker import connect

    store = SessionStore()
    session_id = session or new_session_id()
    try:
        log = (
            store.open(session_id)
            if store.exists(session_id)
            else store.create(session_id=session_id, cwd=Path.cwd(), origin="temporal")
        )
    except SessionError as exc:
        sys.stderr.write(f"tether: {exc}\n")
        return 2
    with log:
        client = await connect(address, namespace)
        spec = SessionSpec(
            session_id=session_id,
            tool_task_queue=tool_task_queue,
            heartbeat_timeout_s=heartbeat_timeout_s,
        )
        handle = await sessions.start_session(client, spec, task_queue=task_queue)
        sys.stderr.write(f"tether: session {session_id} · workflow {handle.id}\n")
        result = await _turn(handle, task)
        await project(handle, log, through=result.log_size)
    if result.text:
        sys.stdout.write(result.text + "\n")
        sys.stdout.flush()
    return exit_code(TurnOutcome(result.turn, result.reason, result.text))


async def _turn(handle: Any, prompt: str) -> Any:
    """Run one turn; Ctrl-C sends `abort_turn` and the turn's balanced end is still awaited."""
    from ...temporal import client as sessions

    aborting = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(os_signal.SIGINT, aborting.set)
    try:
        turn = asyncio.create_task(sessions.run_turn(handle, prompt))
        waiter = asyncio.create_task(aborting.wait())
        await asyncio.wait({turn, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if not turn.done():
            sys.stderr.write("\ntether: aborting the turn (waiting for its balanced end)\n")
            await sessions.abort_turn(handle, "user")
        waiter.cancel()
        return await turn
    finally:
        with contextlib.suppress(RuntimeError):
            loop.remove_signal_handler(os_signal.SIGINT)


@app.command(name="chat")
async def chat(
    address: str,
    /,
    *,
    task_queue: Annotated[str, cyclopts.Parameter(name="--task-queue")] = "tether",
    tool_task_queue: Annotated[str | None, cyclopts.Parameter(name="--tool-task-queue")] = None,
    session: Annotated[str | None, cyclopts.Parameter(name="--session")] = None,
    namespace: Annotated[str, cyclopts.Parameter(name="--namespace")] = "default",
    heartbeat_timeout_s: Annotated[float, cyclopts.Parameter(name="--heartbeat-timeout-s")] = 10.0,
) -> int:
    """Talk to a durable session on the Temporal cluster at ADDRESS, one turn per line. Ctrl-C
    aborts the running turn; /exit or end of input quits (the session lives on: attach again
    with --session).

    Parameters
    ----------
    address
        The Temporal frontend, e.g. 127.0.0.1:7233.
    """
    if not _have_temporalio():
        return 2
    from ...temporal import client as sessions
    from ...temporal.payloads import SessionSpec
    from ...temporal.projector import project
    from ...temporal.worker import connect

    store = SessionStore()
    session_id = session or new_session_id()
    try:
        log = (
            store.open(session_id)
            if store.exists(session_id)
            else store.create(session_id=session_id, cwd=Path.cwd(), origin="temporal")
        )
    except SessionError as exc:
        sys.stderr.write(f"tether: {exc}\n")
        return 2
    with log:
        client = await connect(address, namespace)
        spec = SessionSpec(
            session_id=session_id,
            tool_task_queue=tool_task_queue,
            heartbeat_timeout_s=heartbeat_timeout_s,
        )
        handle = await sessions.start_session(client, spec, task_queue=task_queue)
        sys.stderr.write(
            f"tether chat · session {session_id} · workflow {handle.id}\n"
            "Ctrl-C aborts a turn; /exit quits.\n"
        )
        while True:
            sys.stdout.write("› ")
            sys.stdout.flush()
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                break
            text = line.strip()
            if not text:
                continue
            if text in ("/exit", "/quit"):
                break
            result = await _turn(handle, text)
            await project(handle, log, through=result.log_size)
            if result.text:
                sys.stdout.write(result.text + "\n")
            outcome = TurnOutcome(result.turn, result.reason, result.text)
            if not outcome.completed:
                exit_code(outcome)
    return 0


@app.command(name="approve")
async def approve(
    address: str,
    session: str,
    call_id: str | None = None,
    /,
    *,
    reject: Annotated[bool, cyclopts.Parameter(name="--reject", negative=())] = False,
    namespace: Annotated[str, cyclopts.Parameter(name="--namespace")] = "default",
) -> int:
    """List the tool calls of SESSION waiting for approval, or answer CALL_ID (allow once, or
    `--reject`).

    Parameters
    ----------
    address
        The Temporal frontend, e.g. 127.0.0.1:7233.
    session
        The session id.
    call_id
        The waiting call to answer; without it, the waiting calls are listed.
    """
    if not _have_temporalio():
        return 2
    from ...temporal import client as sessions
    from ...temporal.worker import connect

    client = await connect(address, namespace)
    handle = client.get_workflow_handle(sessions.workflow_id(session))
    if call_id is None:
        for ask in await sessions.pending_approvals(handle):
            reason = f" ({ask.reason})" if ask.reason else ""
            sys.stdout.write(f"{ask.call_id}  {ask.tool_name} {ask.arguments}{reason}\n")
        return 0
    await sessions.answer_approval(handle, call_id, "reject" if reject else "allow-once")
    return 0
