"""`tether run|chat --temporal ADDRESS` and `tether temporal run|chat ADDRESS`: one turn, or a
chat, of a durable session on Temporal, printed as `tether run`/`tether chat` print. Does not
own the session workflow or the client side of a turn (`tether.temporal.frontend`).
"""

from __future__ import annotations

import asyncio
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import cyclopts

from ...temporal_cluster import ClusterFlags
from ...temporal_output import OutputFormat, TurnOutput
from .shared import (
    CLUSTER,
    EXIT_NO_WORKER,
    OutputFormatOpt,
    PayloadStoreOpt,
    app,
    failed,
    failure_code,
    failure_kind,
    have_temporalio,
    notice,
    problems,
)

if TYPE_CHECKING:
    from ....temporal.cluster import Cluster
    from ....temporal.frontend import Attached, Target
    from ....temporal.payloads import ApprovalAsk

__all__ = ["SessionOptions", "chat_on_temporal", "run_on_temporal"]


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
        from ....temporal.frontend import Target

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
    cluster: ClusterFlags = CLUSTER,
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
    cluster: ClusterFlags = CLUSTER,
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
    cluster: ClusterFlags = CLUSTER,
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
    address: str, /, *, options: SessionOptions = _OPTIONS, cluster: ClusterFlags = CLUSTER
) -> int:
    """Talk to a durable session on the Temporal cluster at ADDRESS, one turn per line (the
    same as `tether chat --temporal ADDRESS`).

    Parameters
    ----------
    address
        The Temporal frontend, e.g. 127.0.0.1:7233.
    """
    return await _chat(options, cluster, address)


async def _run(
    options: SessionOptions,
    cluster: ClusterFlags,
    address: str,
    task: str | None,
    output_format: OutputFormat,
) -> int:
    text = sys.stdin.read() if task == "-" else task
    if text is None or not text.strip():
        notice('a task is required, e.g. tether run --temporal ADDRESS "run the tests"')
        return 2
    if not have_temporalio():
        return 2
    from ....temporal.frontend import NoWorker, SessionUnavailable, attach

    output = TurnOutput(output_format)
    try:
        target = options.target(cluster.resolve(address=address))
    except ValueError as exc:
        return output.refuse(str(exc), code=2)

    async def tell(attached: Attached, ask: ApprovalAsk) -> None:
        notice(
            f"{ask.tool_name} call {ask.call_id} waits for approval: tether temporal approve "
            f"{target.address} {attached.session_id} {ask.call_id} [--reject]"
        )

    try:
        async with attach(target, cwd=Path.cwd()) as session:
            notice(f"session {session.session_id} · workflow {session.handle.id}")
            output.start(session.session_id, None, Path.cwd())
            result = await session.turn(
                text, on_ask=tell, on_notice=notice, on_entry=output.on_entry
            )
            if output.report is not None and not output.report.info.model:  # none recorded
                output.name_model((await session.status()).model)
            return output.finish(result, session_id=session.session_id, ended=session.ended)
    except NoWorker as exc:
        return output.refuse(str(exc), code=EXIT_NO_WORKER, error="NO_WORKER")
    except SessionUnavailable as exc:
        return output.refuse(str(exc), code=2, error="SESSION_UNAVAILABLE")
    except problems() as exc:
        return output.refuse(str(exc), code=failure_code(exc), error=failure_kind(exc))


async def _chat(options: SessionOptions, cluster: ClusterFlags, address: str) -> int:
    if not have_temporalio():
        return 2
    from ....temporal.frontend import SessionUnavailable, attach

    try:
        target = options.target(cluster.resolve(address=address))
    except ValueError as exc:
        notice(str(exc))
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
                    text, on_ask=lines.answer, on_notice=notice, on_entry=output.on_entry
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
        notice(str(exc))
        return 2
    except problems() as exc:
        return failed(exc)
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

        from ....temporal.client import answer_approval, refusal

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
            notice(f"not answered: {refusal(exc)}")
