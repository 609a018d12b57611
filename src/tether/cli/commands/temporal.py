"""`tether worker`, `tether run|chat --temporal ADDRESS` and `tether temporal
dev|run|chat|sessions|attach|abort|approve`: tether sessions on Temporal.

`tether worker --address HOST:PORT --task-queue repo-a` runs a worker in the current workspace
(its `tether.yml` is the worker's configuration; tools touch this directory's files). `tether
temporal dev` runs the bundled Temporal dev server (SQLite under `$TETHER_HOME/temporal`) until
Ctrl-C; the server dies with it, also when it is killed.

`tether run --temporal ADDRESS "task"` starts (or, with `--resume ID`, attaches to) a session
workflow, runs one turn and prints the answer (`--output-format json|stream-json` as without
`--temporal`); Ctrl-C sends the `abort_turn` signal and waits for the turn's balanced end; the
session log is written to `$TETHER_HOME/sessions` from the first turn on, so `tether sessions
show` works. `tether chat --temporal ADDRESS` does the same, one turn per line, and asks on the
terminal about calls that wait for approval. `tether app` routes `run`/`chat` here when
`--temporal` is given (`run_on_temporal`, `chat_on_temporal`); `tether temporal run ADDRESS
"task"` and `tether temporal chat ADDRESS` are the same commands.

`tether temporal sessions` lists the running sessions of a cluster (turn, state, last activity,
calls waiting for approval); `tether temporal attach ID` follows a running turn — also one
whose client is gone — to its end, `tether temporal abort ID` aborts it and waits for its
balanced end; both bring the local log up to date. `tether temporal approve ADDRESS SESSION
[CALL_ID] [--reject [--reason TEXT]]` lists or answers the tool calls waiting for a human on a
`--approvals` worker, from any machine.

The cluster of `sessions`, `attach` and `abort` is `--address`, else `$TEMPORAL_ADDRESS`, else
the one the session's local log records, else 127.0.0.1:7233. Every client and worker of a
namespace uses one payload store (`--payload-store`, else `$TETHER_TEMPORAL_PAYLOAD_STORE`, else
`$TETHER_HOME/temporal/payloads`).

`temporalio` is imported only when one of these commands runs, so tether without the
`temporal` extra still imports; they then say how to install it.
"""

from __future__ import annotations

import asyncio
import json
import signal as os_signal
import sys
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

import cyclopts

from ...agent.session import SessionError, SessionStore
from ...core.ending import Ended, ProcessEnding
from ...kernel import tether_home
from ..sandbox_option import SandboxOpt
from ..temporal_cluster import ClusterFlags
from ..temporal_output import OutputFormat, TurnOutput

if TYPE_CHECKING:
    from temporalio.client import WorkflowHandle

    from ...temporal.client import SessionStatus
    from ...temporal.cluster import Cluster
    from ...temporal.frontend import Attached, Target
    from ...temporal.payloads import ApprovalAsk

OutputFormatOpt = Annotated[
    Literal["text", "json", "stream-json"],
    cyclopts.Parameter(
        name="--output-format",
        help="text (the answer), json (one result object) or stream-json (one record per "
        "line), in Claude Code's schema; see docs/output-format.md.",
    ),
]

__all__ = ["SessionOptions", "app", "chat_on_temporal", "run_on_temporal", "worker"]

_CLUSTER = ClusterFlags()

EXIT_NO_WORKER: Final = 75
"""`run --temporal` whose turn no worker took within `--worker-wait-s` (EX_TEMPFAIL: the session
is still there; start a worker and attach)."""

app = cyclopts.App(name="temporal", help="Durable sessions on Temporal (the `temporal` extra).")

_MISSING = "the Temporal integration needs the extra: pip install 'tether[temporal]'"


def _have_temporalio() -> bool:
    try:
        import temporalio  # noqa: F401
    except ImportError:
        sys.stderr.write(f"tether: {_MISSING}\n")
        return False
    return True


PayloadStoreOpt = Annotated[
    str | None,
    cyclopts.Parameter(
        name="--payload-store",
        help="Where payloads too big for a Temporal history go: file:///DIR (one host) or "
        "s3://BUCKET (a cluster; AWS environment for credentials, region, endpoint). Default "
        "$TETHER_TEMPORAL_PAYLOAD_STORE, else $TETHER_HOME/temporal/payloads. Every worker "
        "and client of a namespace must use the same one.",
    ),
]


def _on_stop_signals(event: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (os_signal.SIGINT, os_signal.SIGTERM):
        loop.add_signal_handler(sig, event.set)


async def worker(
    *,
    cluster: ClusterFlags = _CLUSTER,
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
    if not _have_temporalio():
        return 2
    from ...kernel import ConfigError
    from ...temporal.worker import WorkerSettings, run_worker

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


@cyclopts.Parameter(name="*")
@dataclass(frozen=True)
class SessionOptions:
    """The options `run` and `chat` on Temporal share."""

    resume: Annotated[
        str | None,
        cyclopts.Parameter(
            name=["--resume", "--session"],
            help="Attach to this session (its workflow must still run).",
        ),
    ] = None
    task_queue: Annotated[
        str,
        cyclopts.Parameter(
            name="--task-queue", help="The task queue of the session's workflow and model steps."
        ),
    ] = "tether"
    tool_task_queue: Annotated[
        str | None,
        cyclopts.Parameter(
            name="--tool-task-queue",
            help="The task queue of the workspace's workers (default: --task-queue).",
        ),
    ] = None
    heartbeat_timeout_s: Annotated[
        float,
        cyclopts.Parameter(
            name="--heartbeat-timeout-s",
            help="How long a dead worker goes unnoticed (a new session's setting).",
        ),
    ] = 10.0
    turns_per_run: Annotated[
        int,
        cyclopts.Parameter(
            name="--turns-per-run",
            help="Continue the workflow as new after this many turns (a new session's setting).",
        ),
    ] = 50
    tool_start_timeout_s: Annotated[
        float,
        cyclopts.Parameter(
            name="--tool-start-timeout-s",
            help="A tool call no worker of the tool queue takes within this many seconds ends "
            "TOOL_NOT_STARTED (a new session's setting).",
        ),
    ] = 60.0
    model_step_timeout_s: Annotated[
        float,
        cyclopts.Parameter(
            name="--model-step-timeout-s",
            help="A model step's start-to-close timeout (a new session's setting).",
        ),
    ] = 900.0
    worker_wait_s: Annotated[
        float,
        cyclopts.Parameter(
            name="--worker-wait-s",
            help="How long a turn waits for a worker of --task-queue to take it before the "
            f"run ends with exit code {EXIT_NO_WORKER} (a queue nobody polls is named at once).",
        ),
    ] = 300.0
    terminate_if_no_worker: Annotated[
        bool,
        cyclopts.Parameter(
            name="--terminate-if-no-worker",
            negative=(),
            help="At --worker-wait-s, terminate the new session's workflow instead of leaving it "
            "for a worker started later.",
        ),
    ] = False
    payload_store: PayloadStoreOpt = None

    def target(self, cluster: Cluster) -> Target:
        """The session these options name on `cluster` (needs temporalio)."""
        from ...temporal.frontend import Target

        return Target(
            cluster=cluster,
            task_queue=self.task_queue,
            tool_task_queue=self.tool_task_queue,
            session=self.resume,
            heartbeat_timeout_s=self.heartbeat_timeout_s,
            turns_per_run=self.turns_per_run,
            tool_start_timeout_s=self.tool_start_timeout_s,
            model_step_timeout_s=self.model_step_timeout_s,
            payload_store=self.payload_store,
            worker_wait_s=self.worker_wait_s,
            terminate_without_worker=self.terminate_if_no_worker,
        )


_OPTIONS = SessionOptions()
TemporalOpt = Annotated[
    str,
    cyclopts.Parameter(name="--temporal", help="The Temporal frontend, e.g. 127.0.0.1:7233."),
]
TaskArg = Annotated[str | None, cyclopts.Parameter(allow_leading_hyphen=True)]


async def run_on_temporal(
    task: TaskArg = None,
    /,
    *,
    temporal: TemporalOpt,
    options: SessionOptions = _OPTIONS,
    cluster: ClusterFlags = _CLUSTER,
    output_format: OutputFormatOpt = "text",
) -> int:
    """Run one turn of a durable session on Temporal and print the answer (0 iff the turn
    completed). Ctrl-C aborts the turn and waits for its balanced end; again stops waiting.
    The policy is the workers' (`tether worker --yolo/--allow/--approvals`).

    Parameters
    ----------
    task
        What to do; `-` reads it from stdin.
    """
    return await _run(options, cluster, temporal, task, output_format)


async def chat_on_temporal(
    *,
    temporal: TemporalOpt,
    options: SessionOptions = _OPTIONS,
    cluster: ClusterFlags = _CLUSTER,
) -> int:
    """Talk to a durable session on Temporal, one turn per line. Ctrl-C aborts the running
    turn; /exit or end of input quits (the session lives on: attach again with --resume).
    Calls that wait for approval are asked about here: y (allow once), n (reject), or
    d REASON (reject, and the model reads the reason)."""
    return await _chat(options, cluster, temporal)


@app.command(name="run")
async def run(
    address: str,
    task: TaskArg = None,
    /,
    *,
    options: SessionOptions = _OPTIONS,
    cluster: ClusterFlags = _CLUSTER,
    output_format: OutputFormatOpt = "text",
) -> int:
    """Run one turn of a durable session on the Temporal cluster at ADDRESS; print the answer
    (the same as `tether run --temporal ADDRESS`).

    Parameters
    ----------
    address
        The Temporal frontend, e.g. 127.0.0.1:7233.
    task
        What to do; `-` reads it from stdin.
    """
    return await _run(options, cluster, address, task, output_format)


@app.command(name="chat")
async def chat(
    address: str, /, *, options: SessionOptions = _OPTIONS, cluster: ClusterFlags = _CLUSTER
) -> int:
    """Talk to a durable session on the Temporal cluster at ADDRESS, one turn per line (the
    same as `tether chat --temporal ADDRESS`).

    Parameters
    ----------
    address
        The Temporal frontend, e.g. 127.0.0.1:7233.
    """
    return await _chat(options, cluster, address)


def _notice(text: str) -> None:
    sys.stderr.write(f"tether: {text}\n")
    sys.stderr.flush()


def _problems() -> tuple[type[Exception], ...]:
    """What a Temporal command reports in one line instead of a traceback: a session that
    cannot be used, a bad setting, a store or a cluster that cannot be reached or refuses."""
    from temporalio.service import RPCError

    return (SessionError, ValueError, RuntimeError, ImportError, RPCError)


def _failed(exc: BaseException) -> int:
    """The one line for a session that cannot be used, a store or a cluster that cannot be
    reached; the exit code."""
    _notice(str(exc))
    return _failure_code(exc)


def _failure_code(exc: BaseException) -> int:
    return 2 if isinstance(exc, SessionError | ValueError) else 1


def _failure_kind(exc: BaseException) -> str:
    """The code of a json `result` record for a run that could not start or follow its turn."""
    from ...temporal.connection import ClusterUnreachable

    if isinstance(exc, ClusterUnreachable):
        return "TEMPORAL_UNREACHABLE"
    if isinstance(exc, SessionError):
        return "SESSION_UNAVAILABLE"
    if isinstance(exc, ValueError):
        return "INVALID_CONFIG"
    return "TEMPORAL_ERROR"


async def _run(
    options: SessionOptions,
    cluster: ClusterFlags,
    address: str,
    task: str | None,
    output_format: OutputFormat,
) -> int:
    text = sys.stdin.read() if task == "-" else task
    if text is None or not text.strip():
        _notice('a task is required, e.g. tether run --temporal ADDRESS "run the tests"')
        return 2
    if not _have_temporalio():
        return 2
    from ...temporal.frontend import NoWorker, SessionUnavailable, attach

    output = TurnOutput(output_format)
    try:
        target = options.target(cluster.resolve(address=address))
    except ValueError as exc:
        return output.refuse(str(exc), code=2)

    async def tell(attached: Attached, ask: ApprovalAsk) -> None:
        _notice(
            f"{ask.tool_name} call {ask.call_id} waits for approval: tether temporal approve "
            f"{target.address} {attached.session_id} {ask.call_id} [--reject]"
        )

    try:
        async with attach(target, cwd=Path.cwd()) as session:
            _notice(f"session {session.session_id} · workflow {session.handle.id}")
            output.start(session.session_id, None, Path.cwd())
            result = await session.turn(
                text, on_ask=tell, on_notice=_notice, on_entry=output.on_entry
            )
            if output.report is not None and not output.report.info.model:  # none recorded
                output.name_model((await session.status()).model)
            return output.finish(result, session_id=session.session_id, ended=session.ended)
    except NoWorker as exc:
        return output.refuse(str(exc), code=EXIT_NO_WORKER, error="NO_WORKER")
    except SessionUnavailable as exc:
        return output.refuse(str(exc), code=2, error="SESSION_UNAVAILABLE")
    except _problems() as exc:
        return output.refuse(str(exc), code=_failure_code(exc), error=_failure_kind(exc))


async def _chat(options: SessionOptions, cluster: ClusterFlags, address: str) -> int:
    if not _have_temporalio():
        return 2
    from ...temporal.frontend import SessionUnavailable, attach

    try:
        target = options.target(cluster.resolve(address=address))
    except ValueError as exc:
        _notice(str(exc))
        return 2

    lines = _Lines()
    try:
        async with attach(target, cwd=Path.cwd()) as session:
            sys.stderr.write(
                f"tether chat · session {session.session_id} · workflow {session.handle.id}\n"
                "Ctrl-C aborts a turn; /exit quits.\n"
            )
            while True:
                sys.stdout.write("› ")
                sys.stdout.flush()
                line = await lines.next()
                if line is None:
                    break
                text = line.strip()
                if not text:
                    continue
                if text in ("/exit", "/quit"):
                    break
                output = TurnOutput("text")
                result = await session.turn(
                    text, on_ask=lines.answer, on_notice=_notice, on_entry=output.on_entry
                )
                if session.ended is not None:  # a signal aborted the turn: chat ends too
                    output.finish(result, session_id=session.session_id, ended=session.ended)
                    return session.ended.exit_code
                if result.text and not output.tty:
                    sys.stdout.write(result.text + "\n")
                elif output.tty:
                    output.renderer.end_turn()
                if result.reason.get("kind") != "completed":
                    output.finish(result, session_id=session.session_id)  # says how it ended
    except SessionUnavailable as exc:
        _notice(str(exc))
        return 2
    except _problems() as exc:
        return _failed(exc)
    return 0


class _Lines:
    """Standard input as lines, read by one daemon thread for the whole chat, so the prompt and
    the approval questions share one reader (an abandoned read never swallows a later line)."""

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()

        def read() -> None:
            for line in sys.stdin:
                loop.call_soon_threadsafe(self._queue.put_nowait, line)
            loop.call_soon_threadsafe(self._queue.put_nowait, None)

        threading.Thread(target=read, name="tether-stdin", daemon=True).start()
        self._ended = False

    async def next(self) -> str | None:
        """The next line, or None at the end of input."""
        if self._ended:
            return None
        line = await self._queue.get()
        self._ended = line is None
        return line

    async def answer(self, session: Attached, ask: ApprovalAsk) -> None:
        """Ask on the terminal about a call that waits for approval, and answer it."""
        from temporalio.client import WorkflowUpdateFailedError

        from ...temporal.client import answer_approval, refusal

        reason = f" ({ask.reason})" if ask.reason else ""
        while True:
            sys.stderr.write(
                f"tether: {ask.tool_name} {ask.arguments}{reason}\n"
                "  allow once? y = yes, n = no, d REASON = no, and tell the model why: "
            )
            sys.stderr.flush()
            line = await self.next()
            reply = "n" if line is None else line.strip()
            word, _, rest = reply.partition(" ")
            if word in ("y", "n", "d"):
                break
        answer, why = ("allow-once", None) if word == "y" else ("reject", rest.strip() or None)
        try:
            await answer_approval(session.handle, ask.call_id, answer, why)
        except WorkflowUpdateFailedError as exc:
            _notice(f"not answered: {refusal(exc)}")


# -- finding and stopping running sessions ---------------------------------------------------------


def _cluster(
    session: str | None, cluster: ClusterFlags, payload_store: str | None
) -> tuple[Cluster, str | None]:
    """The cluster (flags, then temporalio's environment configuration, then what the session's
    log records) and the payload store (the flag, else the recorded one)."""
    recorded: dict[str, str] = {}
    if session is not None:
        from ...temporal.frontend import recorded_cluster

        recorded = recorded_cluster(SessionStore(), session)
    return cluster.resolve(recorded=recorded), payload_store or recorded.get("payload_store")


def _ago(when: datetime | None, now: datetime) -> str:
    if when is None:
        return "?"
    seconds = max(0, int((now - when).total_seconds()))
    if seconds < 120:
        return f"{seconds} s ago"
    if seconds < 7200:
        return f"{seconds // 60} min ago"
    return f"{seconds // 3600} h ago"


@app.command(name="sessions")
async def sessions_(
    *,
    cluster: ClusterFlags = _CLUSTER,
    payload_store: PayloadStoreOpt = None,
    as_json: Annotated[bool, cyclopts.Parameter(name="--json", negative=())] = False,
) -> int:
    """List the running sessions of the cluster: id, turn, what the turn is doing (idle, model,
    tools, approval, aborting), its last activity, the calls waiting for approval and the
    running turn's prompt. A session no worker answers for shows `unknown`."""
    if not _have_temporalio():
        return 2
    from ...temporal import client as sessions
    from ...temporal.connection import connected
    from ...temporal.storage import PayloadStore

    try:
        where, store = _cluster(None, cluster, payload_store)
        async with connected(where, None, PayloadStore.parse(store)) as connection:
            handles = [h async for h in sessions.running_sessions(connection.client)]
            statuses = await asyncio.gather(*(_status_or_none(h) for h in handles))
            found = [
                (sessions.session_of(h.id), status)
                for h, status in zip(handles, statuses, strict=True)
            ]
    except _problems() as exc:
        return _failed(exc)
    now = datetime.now(UTC)
    if as_json:
        rows = [_status_json(session, status) for session, status in found]
        sys.stdout.write(json.dumps(rows, ensure_ascii=False) + "\n")
        return 0
    if not found:
        _notice(f"no running sessions on {where.describe()}")
        return 0
    sys.stdout.write(
        f"{'SESSION':<28} {'TURN':>4}  {'STATE':<9} {'LAST ACTIVITY':<14} ASK  PROMPT\n"
    )
    for session, status in found:
        if status is None:
            sys.stdout.write(f"{session:<28} {'?':>4}  {'unknown':<9} {'?':<14} {'?':>3}  \n")
            continue
        prompt = " ".join(status.prompt.split())[:48] if status.busy else ""
        sys.stdout.write(
            f"{session:<28} {status.turn:>4}  {status.state:<9} "
            f"{_ago(status.last_activity, now):<14} {status.approvals:>3}  {prompt}\n"
        )
    return 0


async def _status_or_none(handle: WorkflowHandle[Any, Any]) -> SessionStatus | None:
    """The session's status, or None when no worker answers for it."""
    from temporalio.client import WorkflowQueryFailedError
    from temporalio.service import RPCError

    from ...temporal.client import status

    try:
        return await status(handle, timeout_s=5.0)
    except (RPCError, WorkflowQueryFailedError):
        return None


def _status_json(session: str, status: SessionStatus | None) -> dict[str, object]:
    if status is None:
        return {"session_id": session, "state": "unknown"}
    return {
        "session_id": session,
        "turn": status.turn,
        "state": status.state,
        "busy": status.busy,
        "last_activity": None if status.last_activity is None else status.last_activity.isoformat(),
        "approvals": status.approvals,
        "prompt": status.prompt,
    }


@app.command(name="attach")
async def attach_(
    session: str,
    /,
    *,
    cluster: ClusterFlags = _CLUSTER,
    payload_store: PayloadStoreOpt = None,
    output_format: OutputFormatOpt = "text",
) -> int:
    """Follow SESSION's running turn to its end — also one whose client is gone — and print its
    answer as `tether run` would (exit 0 iff it completed); the local log is brought up to
    date first. Ctrl-C aborts the turn and waits for its balanced end; again stops waiting.
    Without a running turn, only the log is brought up to date.

    Parameters
    ----------
    session
        The session id (`tether temporal sessions` lists the running ones).
    """
    return await _take_over(session, cluster, payload_store, output_format, abort=False)


@app.command(name="abort")
async def abort(
    session: str,
    /,
    *,
    cluster: ClusterFlags = _CLUSTER,
    payload_store: PayloadStoreOpt = None,
) -> int:
    """Abort SESSION's running turn — also one whose client is gone — and wait for its balanced
    end (running tools stopped and their results recorded); the local log is brought up to
    date. Exit 0 once the turn has ended (or when none was running).

    Parameters
    ----------
    session
        The session id (`tether temporal sessions` lists the running ones).
    """
    return await _take_over(session, cluster, payload_store, "text", abort=True)


async def _take_over(
    session: str,
    cluster: ClusterFlags,
    payload_store: str | None,
    output_format: OutputFormat,
    *,
    abort: bool,
) -> int:
    if not _have_temporalio():
        return 2
    from ...temporal.client import abort_turn
    from ...temporal.frontend import SessionUnavailable, Target, attach

    output = TurnOutput(output_format)
    try:
        where, store = _cluster(session, cluster, payload_store)
        target = Target(cluster=where, session=session, payload_store=store)
        instead = "`tether temporal sessions` lists the running sessions"
        async with attach(target, cwd=Path.cwd(), instead=instead) as attached:
            running = await attached.running_turn()
            if running is None:
                _notice(
                    f"no turn is running in session {session}; its log is up to date "
                    f"(tether sessions show {session})"
                )
                return 0
            update, start = running
            if abort:
                await abort_turn(attached.handle, "user")
                _notice(f"aborting the running turn of session {session}; waiting for its end")
                result = await attached.follow(update, start, on_notice=_notice)
                _notice(
                    f"turn {result.turn} ended {result.reason.get('kind')}; tool outcomes are "
                    f"recorded (tether sessions show {session})"
                )
                return 0
            _notice(f"following the running turn of session {session} (Ctrl-C aborts it)")
            output.start(session, (await attached.status()).model, Path.cwd())
            result = await attached.follow(
                update, start, on_notice=_notice, on_entry=output.on_entry
            )
            return output.finish(result, session_id=session, ended=attached.ended)
    except SessionUnavailable as exc:
        _notice(str(exc))
        return 2
    except _problems() as exc:
        return _failed(exc)


@app.command(name="approve")
async def approve(
    address: str,
    session: str,
    call_id: str | None = None,
    /,
    *,
    reject: Annotated[bool, cyclopts.Parameter(name="--reject", negative=())] = False,
    reason: Annotated[str | None, cyclopts.Parameter(name="--reason")] = None,
    cluster: ClusterFlags = _CLUSTER,
    payload_store: PayloadStoreOpt = None,
) -> int:
    """List the tool calls of SESSION waiting for approval, or answer CALL_ID: allow it once,
    or `--reject` it (`--reason` is what the model reads about why).

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
    from temporalio.client import WorkflowUpdateFailedError

    from ...temporal import client as sessions
    from ...temporal.connection import connected
    from ...temporal.storage import PayloadStore

    if reason is not None and not reject:
        sys.stderr.write("tether: --reason goes with --reject (the model reads why)\n")
        return 2
    try:
        where = cluster.resolve(address=address)
        async with connected(where, None, PayloadStore.parse(payload_store)) as connection:
            handle = connection.client.get_workflow_handle(sessions.workflow_id(session))
            if call_id is None:
                for ask in await sessions.pending_approvals(handle):
                    shown = f" ({ask.reason})" if ask.reason else ""
                    sys.stdout.write(f"{ask.call_id}  {ask.tool_name} {ask.arguments}{shown}\n")
                return 0
            try:
                await sessions.answer_approval(
                    handle, call_id, "reject" if reject else "allow-once", reason
                )
            except WorkflowUpdateFailedError as exc:
                sys.stderr.write(f"tether: {sessions.refusal(exc)}\n")
                return 1
    except _problems() as exc:
        return _failed(exc)
    return 0
