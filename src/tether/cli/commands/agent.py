"""`tether run "<task>"` (one shot) and `tether chat` (interactive): the agent in a terminal.

`run` prints the final answer once — streamed when stdout is a terminal; when it is piped, stdout
gets only the answer (or, with `--output-format json|stream-json`, JSON: `tether.cli.output`) and
progress goes to stderr — and exits 0 iff the turn completed; otherwise stderr says
`tether: <code>: <message>`. The task comes from the argument or stdin (`-`); `--continue` and
`--resume ID` add the turn to an earlier session. Both mount the same policy
(`tether.agent.unattended`): deny rules always hold and hooks run; a call that needs approval is
asked about in `chat` and refused in `run`, unless `--allow` or `--yolo` permits it.

Both are clients of the public `tether.agent.Agent`: it boots, picks the model, opens (or
resumes) the session and runs the turns; `chat` is `tether.cli.chat` (line editing, slash
commands, live status, diffs, compaction), which this module only parses the options for.
In both, the first Ctrl-C aborts the running turn through its signal;
tools are cancelled and every outcome is recorded in the session log.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated, Literal

import cyclopts

from ...agent.events import AgentEvent
from ...agent.loop import TurnOutcome
from ...agent.session import SessionLog, SessionStore
from ...agent.session.events import ASSISTANT_MESSAGE
from ...agent.unattended import refuse_unattended
from ...core.signals import AbortController
from ..output import RunReport
from ..render import TurnRenderer
from ..sandbox_option import SandboxOpt
from ..session import exit_code, install_interrupts, notice, open_agent

__all__ = ["chat", "run"]

ConfigOpt = Annotated[Path | None, cyclopts.Parameter(name="--config", help="A tether.yml to use.")]
ModelOpt = Annotated[str | None, cyclopts.Parameter(name="--model", help="The model to ask.")]
CwdOpt = Annotated[Path | None, cyclopts.Parameter(name="--cwd", help="The workspace.")]
YoloOpt = Annotated[
    bool,
    cyclopts.Parameter(
        name="--yolo",
        negative=(),
        help="Run every tool call that no deny rule forbids, without asking "
        "(permission mode bypassPermissions).",
    ),
]
AllowOpt = Annotated[
    tuple[str, ...],
    cyclopts.Parameter(
        name="--allow",
        negative=(),
        help="Allow tool calls matching this rule without asking, in Claude Code syntax, "
        "e.g. --allow 'Bash(npm test:*)'. Repeatable; deny rules still hold.",
    ),
]


ContinueOpt = Annotated[
    bool,
    cyclopts.Parameter(
        name=["--continue", "-c"],
        negative=(),
        help="Continue the latest session of this directory.",
    ),
]
ResumeOpt = Annotated[
    str | None,
    cyclopts.Parameter(name=["--resume", "-r"], help="Continue the session with this id."),
]
OutputFormatOpt = Annotated[
    Literal["text", "json", "stream-json"],
    cyclopts.Parameter(
        name="--output-format",
        help="text (the answer), json (one result object) or stream-json (one event per "
        "line); see docs/output-format.md.",
    ),
]


def _read_task(task: str | None) -> str | None:
    """The task: the argument, or stdin for `-` or no argument when stdin is not a terminal."""
    if task is not None and task != "-":
        return task
    if task is None and sys.stdin.isatty():
        return None
    try:
        return sys.stdin.read()
    except (OSError, ValueError):
        return None


def _latest_session(store: SessionStore, cwd: Path) -> str | None:
    """The most recently written session whose workspace is `cwd`."""
    mine = [s for s in store.list_sessions() if s.cwd == str(cwd)]
    return max(mine, key=lambda s: (s.modified_at, s.id)).id if mine else None


def _turn_usage(session: SessionLog, turn: int) -> dict[str, int]:
    totals = {"input_tokens": 0, "output_tokens": 0}
    for event in session.events:
        usage = event.data.get("usage")
        if event.type != ASSISTANT_MESSAGE or event.data.get("turn") != turn:
            continue
        if isinstance(usage, Mapping):
            for key in totals:
                value = usage.get(key)
                totals[key] += value if isinstance(value, int) else 0
    return totals


TaskArg = Annotated[str | None, cyclopts.Parameter(allow_leading_hyphen=True)]


async def run(
    task: TaskArg = None,
    /,
    *,
    config: ConfigOpt = None,
    model: ModelOpt = None,
    cwd: CwdOpt = None,
    yolo: YoloOpt = False,
    allow: AllowOpt = (),
    sandbox: SandboxOpt = None,
    continue_: ContinueOpt = False,
    resume: ResumeOpt = None,
    output_format: OutputFormatOpt = "text",
) -> int:
    """Answer one task, print the final answer, and exit (0 iff the turn completed).

    Nobody is asked: a call the permission rules would ask about is refused (the model is told
    why and may try something else) unless --allow or --yolo permits it. On a terminal the
    answer streams; piped, stdout gets only the answer and progress goes to stderr.

    Parameters
    ----------
    task
        What to do, e.g. "run the tests and fix what fails"; `-` or nothing reads it from stdin.
    """
    text = _read_task(task)
    if text is None or not text.strip():
        sys.stderr.write(
            'tether: a task is required, for example: tether run "run the tests" '
            "(or pipe it: echo task | tether run)\n"
        )
        return 2
    if continue_ and resume is not None:
        sys.stderr.write("tether: --continue and --resume cannot be combined; pick one\n")
        return 2
    workdir = (cwd or Path.cwd()).resolve()
    if continue_:
        resume = _latest_session(SessionStore(), workdir)
        if resume is None:
            sys.stderr.write(
                f"tether: --continue: no session to continue in {workdir}; start one with "
                "tether run\n"
            )
            return 2
    tty = output_format == "text" and sys.stdout.isatty()
    renderer = TurnRenderer(text_out=sys.stdout if tty else None)
    report = RunReport(stream=sys.stdout if output_format == "stream-json" else None)

    def on_event(event: AgentEvent) -> None:
        renderer(event)
        report(event)

    async with AsyncExitStack() as stack:
        agent = await open_agent(
            stack,
            cwd=workdir,
            config=config,
            model=model,
            resume=resume,
            on_event=on_event,
            yolo=yolo,
            allow=allow,
            sandbox=sandbox,
        )
        if agent is None:
            return 2
        interrupts = install_interrupts(stack)
        refuse_unattended(agent.context)
        controller = AbortController()
        interrupts.arm(controller)
        session_id, model_name = agent.session_id, agent.llm.model
        sys.stderr.write(f"tether: session {session_id} · model {model_name}\n")
        report.emit(
            {"type": "start", "session_id": session_id, "model": model_name, "cwd": str(workdir)}
        )
        outcome: TurnOutcome | None = None
        try:
            outcome = (await agent.run(text, signal=controller.signal)).outcome
        except asyncio.CancelledError:
            notice("quit; the session log is closed and balanced")
            code = 130
        else:
            renderer.end_turn()
            if output_format == "text" and not tty and outcome.text:
                sys.stdout.write(outcome.text + "\n")
                sys.stdout.flush()
            code = exit_code(outcome)
        if output_format != "text":
            turn = outcome.turn if outcome is not None else agent.session.last_turn
            record = report.result(
                outcome,
                session_id=session_id,
                model=model_name,
                exit_code=code,
                usage=_turn_usage(agent.session, turn),
            )
            report.print_result(record)
        return code


async def chat(
    *,
    config: ConfigOpt = None,
    model: ModelOpt = None,
    cwd: CwdOpt = None,
    resume: Annotated[str | None, cyclopts.Parameter(name="--resume")] = None,
    yolo: YoloOpt = False,
    allow: AllowOpt = (),
    sandbox: SandboxOpt = None,
    context_window: Annotated[
        int | None,
        cyclopts.Parameter(
            name="--context-window",
            help="The model's context window in tokens (default $TETHER_CONTEXT_WINDOW or "
            "128000); a request that would not fit (minus a reserve) is compacted first.",
        ),
    ] = None,
    show_reasoning: Annotated[
        bool,
        cyclopts.Parameter(
            name="--show-reasoning", negative=(), help="Print the model's reasoning, dimmed."
        ),
    ] = False,
) -> int:
    """Talk to the agent. Ctrl-C aborts the running turn; twice quits; /help lists commands.

    Tool calls the permission rules ask about are shown with their arguments (a diff for edit
    and write) and wait for an answer: y (allow once), a (allow the shown rule for this
    session), n (deny) or d (deny with a reason the model reads).
    """
    from ..chat.app import ChatOptions, context_window_from_env, run_chat

    workdir = (cwd or Path.cwd()).resolve()
    try:
        window = context_window_from_env(context_window)
    except ValueError as exc:
        sys.stderr.write(f"tether: {exc}\n")
        return 2
    return await run_chat(
        ChatOptions(
            cwd=workdir,
            config=config,
            model=model,
            resume=resume,
            yolo=yolo,
            allow=allow,
            sandbox=sandbox,
            context_window=window,
            show_reasoning=show_reasoning,
        )
    )
