"""`tether worker`, `tether run|chat --temporal ADDRESS` and `tether temporal
dev|run|chat|approve`: tether sessions on Temporal.

`tether worker --address HOST:PORT --task-queue repo-a` runs a worker in the current workspace
(its `tether.yml` is the worker's configuration; tools touch this directory's files). `tether
temporal dev` runs the bundled Temporal dev server (SQLite under `$TETHER_HOME/temporal`) until
Ctrl-C.

`tether run --temporal ADDRESS "task"` starts (or, with `--resume ID`, attaches to) a session
workflow, runs one turn and prints the answer; Ctrl-C sends the `abort_turn` signal and waits
for the turn's balanced end; the session log is projected to `$TETHER_HOME/sessions`, so `tether
sessions show` works. `tether chat --temporal ADDRESS` does the same, one turn per line, and asks
on the terminal about calls that wait for approval. `tether app` routes `run`/`chat` here when
`--temporal` is given (`run_on_temporal`, `chat_on_temporal`); `tether temporal run ADDRESS
"task"` and `tether temporal chat ADDRESS` are the same commands.

`tether temporal approve ADDRESS SESSION [CALL_ID] [--reject [--reason TEXT]]` lists or answers
the tool calls waiting for a human on a `--approvals` worker, from any machine.

`temporalio` is imported only when one of these commands runs, so tether without the
`temporal` extra still imports; they then say how to install it.
"""

from __future__ import annotations

import asyncio
import signal as os_signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import cyclopts

from ...agent.loop import TurnOutcome
from ...agent.session import SessionError
from ...kernel import tether_home
from ..sandbox_option import SandboxOpt
from ..session import exit_code

if TYPE_CHECKING:
    from ...temporal.frontend import Attached, Target
    from ...temporal.payloads import ApprovalAsk, TurnResult

__all__ = ["SessionOptions", "app", "chat_on_temporal", "run_on_temporal", "worker"]

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
    sandbox: SandboxOpt = None,
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
        sandbox=sandbox,
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
    namespace: Annotated[str, cyclopts.Parameter(name="--namespace")] = "default"
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

    def target(self, address: str) -> Target:
        """The session these options name on `address` (needs temporalio)."""
        from ...temporal.frontend import Target

        return Target(
            address=address,
            task_queue=self.task_queue,
            tool_task_queue=self.tool_task_queue,
            session=self.resume,
            namespace=self.namespace,
            heartbeat_timeout_s=self.heartbeat_timeout_s,
            turns_per_run=self.turns_per_run,
        )


_OPTIONS = SessionOptions()
TemporalOpt = Annotated[
    str,
    cyclopts.Parameter(name="--temporal", help="The Temporal frontend, e.g. 127.0.0.1:7233."),
]
TaskArg = Annotated[str | None, cyclopts.Parameter(allow_leading_hyphen=True)]


async def run_on_temporal(
    task: TaskArg = None, /, *, temporal: TemporalOpt, options: SessionOptions = _OPTIONS
) -> int:
    """Run one turn of a durable session on Temporal and print the answer (0 iff the turn
    completed). Ctrl-C aborts the turn and waits for its balanced end; again stops waiting.
    The policy is the workers' (`tether worker --yolo/--allow/--approvals`).

    Parameters
    ----------
    task
        What to do; `-` reads it from stdin.
    """
    return await _run(options, temporal, task)


async def chat_on_temporal(*, temporal: TemporalOpt, options: SessionOptions = _OPTIONS) -> int:
    """Talk to a durable session on Temporal, one turn per line. Ctrl-C aborts the running
    turn; /exit or end of input quits (the session lives on: attach again with --resume).
    Calls that wait for approval are asked about here: y (allow once), n (reject), or
    d REASON (reject, and the model reads the reason)."""
    return await _chat(options, temporal)


@app.command(name="run")
async def run(address: str, task: TaskArg = None, /, *, options: SessionOptions = _OPTIONS) -> int:
    """Run one turn of a durable session on the Temporal cluster at ADDRESS; print the answer
    (the same as `tether run --temporal ADDRESS`).

    Parameters
    ----------
    address
        The Temporal frontend, e.g. 127.0.0.1:7233.
    task
        What to do; `-` reads it from stdin.
    """
    return await _run(options, address, task)


@app.command(name="chat")
async def chat(address: str, /, *, options: SessionOptions = _OPTIONS) -> int:
    """Talk to a durable session on the Temporal cluster at ADDRESS, one turn per line (the
    same as `tether chat --temporal ADDRESS`).

    Parameters
    ----------
    address
        The Temporal frontend, e.g. 127.0.0.1:7233.
    """
    return await _chat(options, address)


def _notice(text: str) -> None:
    sys.stderr.write(f"tether: {text}\n")
    sys.stderr.flush()


def _exit_code(result: TurnResult) -> int:
    return exit_code(TurnOutcome(result.turn, result.reason, result.text))


async def _run(options: SessionOptions, address: str, task: str | None) -> int:
    text = sys.stdin.read() if task == "-" else task
    if text is None or not text.strip():
        _notice('a task is required, e.g. tether run --temporal ADDRESS "run the tests"')
        return 2
    if not _have_temporalio():
        return 2
    from ...temporal.frontend import SessionUnavailable, attach

    target = options.target(address)

    async def tell(attached: Attached, ask: ApprovalAsk) -> None:
        _notice(
            f"{ask.tool_name} call {ask.call_id} waits for approval: tether temporal approve "
            f"{target.address} {attached.session_id} {ask.call_id} [--reject]"
        )

    try:
        async with attach(target, cwd=Path.cwd()) as session:
            _notice(f"session {session.session_id} · workflow {session.handle.id}")
            result = await session.turn(text, on_ask=tell, on_notice=_notice)
    except (SessionError, SessionUnavailable) as exc:
        _notice(str(exc))
        return 2
    if result is None:
        return 130
    if result.text:
        sys.stdout.write(result.text + "\n")
        sys.stdout.flush()
    return _exit_code(result)


async def _chat(options: SessionOptions, address: str) -> int:
    if not _have_temporalio():
        return 2
    from ...temporal.frontend import SessionUnavailable, attach

    target = options.target(address)

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
                result = await session.turn(text, on_ask=lines.answer, on_notice=_notice)
                if result is None:
                    return 130
                if result.text:
                    sys.stdout.write(result.text + "\n")
                if result.reason.get("kind") != "completed":
                    _exit_code(result)  # says how the turn ended; the chat goes on
    except (SessionError, SessionUnavailable) as exc:
        _notice(str(exc))
        return 2
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


@app.command(name="approve")
async def approve(
    address: str,
    session: str,
    call_id: str | None = None,
    /,
    *,
    reject: Annotated[bool, cyclopts.Parameter(name="--reject", negative=())] = False,
    reason: Annotated[str | None, cyclopts.Parameter(name="--reason")] = None,
    namespace: Annotated[str, cyclopts.Parameter(name="--namespace")] = "default",
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
    from ...temporal.worker import connect

    if reason is not None and not reject:
        sys.stderr.write("tether: --reason goes with --reject (the model reads why)\n")
        return 2
    client = await connect(address, namespace)
    handle = client.get_workflow_handle(sessions.workflow_id(session))
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
    return 0
