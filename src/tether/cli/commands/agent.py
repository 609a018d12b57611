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
tools are cancelled and every outcome is recorded in the session log. In `run`, SIGINT, SIGTERM,
SIGHUP and SIGQUIT all do that (`tether.core.ending`): the turn ends aborted with the signal as
its cause and the exit status is 128 + N; a second signal exits at once.
"""

from __future__ import annotations

import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated, Literal

import cyclopts

from ...agent.api import Agent
from ...agent.events import AgentEvent
from ...agent.session import SessionStore
from ...agent.unattended import refuse_unattended
from ...core.ending import ProcessEnding
from ...plugins.permissions import Permissions
from ...tools.arrivals import settle_tools
from ..output import HeadlessReport, RunInfo
from ..render import TurnRenderer
from ..sandbox_option import SandboxOpt
from ..session import announce_ending, exit_code, latest_session, open_agent

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
        help="text (the answer), json (one result object) or stream-json (one record per "
        "line), in Claude Code's schema; see docs/output-format.md.",
    ),
]
PartialOpt = Annotated[
    bool,
    cyclopts.Parameter(
        name="--include-partial-messages",
        negative=(),
        help="With --output-format stream-json, also write the model's text as it streams "
        "(stream_event records).",
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


def _run_info(agent: Agent, cwd: Path) -> RunInfo:
    """What the headless `system`/`init` record says: the tools the model is sent, the
    permission mode, the MCP servers and their status."""
    ctx, loop = agent.context, agent.loop
    permissions = ctx.get("permissions")
    listing = getattr(ctx.get("mcp"), "servers", None)  # the mcp plugin, not imported here
    servers = listing() if callable(listing) else []
    return RunInfo(
        session_id=agent.session_id,
        model=agent.llm.model,
        cwd=str(cwd),
        tools=[str(schema["name"]) for schema in loop.tools.schemas(loop)],
        permission_mode=permissions.mode if isinstance(permissions, Permissions) else "default",
        mcp_servers=[(str(server.name), str(server.status)) for server in servers],
    )


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
    include_partial_messages: PartialOpt = False,
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
        resume = latest_session(SessionStore(), workdir)
        if resume is None:
            sys.stderr.write(
                f"tether: --continue: no session to continue in {workdir}; start one with "
                "tether run\n"
            )
            return 2
    tty = output_format == "text" and sys.stdout.isatty()
    renderer = TurnRenderer(text_out=sys.stdout if tty else None)
    reports: list[HeadlessReport] = []  # made once the session is open

    def on_event(event: AgentEvent) -> None:
        renderer(event)
        for report in reports:
            report(event)

    async with AsyncExitStack() as stack:
        ending = stack.enter_context(ProcessEnding(on_end=announce_ending))
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
        refuse_unattended(agent.context)
        sys.stderr.write(f"tether: session {agent.session_id} · model {agent.llm.model}\n")
        if output_format != "text":
            await settle_tools(agent.context, signal=ending.signal)  # init lists MCP tools
            report = HeadlessReport(
                output_format,
                _run_info(agent, workdir),
                sys.stdout,
                partial_messages=include_partial_messages,
            )
            report.start()
            reports.append(report)
        outcome = (await agent.run(text, signal=ending.signal)).outcome
        renderer.end_turn()
        if output_format == "text" and not tty and outcome.text:
            sys.stdout.write(outcome.text + "\n")
            sys.stdout.flush()
        code = exit_code(outcome, ending)
        for report in reports:
            report.finish(outcome, exit_code=code)
        return code


async def chat(
    *,
    config: ConfigOpt = None,
    model: ModelOpt = None,
    cwd: CwdOpt = None,
    continue_: ContinueOpt = False,
    resume: Annotated[
        str | bool | None,
        cyclopts.Parameter(
            name=["--resume", "-r"],
            negative=(),
            metavar="[ID]",
            help="Continue the session with this id; without an id, pick one from a list.",
        ),
    ] = None,
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
    """Talk to the agent. Esc or Ctrl-C aborts the running turn; Ctrl-C twice quits; /help
    lists commands; !command runs a command in the shell.

    Tool calls the permission rules ask about are shown with their arguments (a diff for edit
    and write) and wait for an answer: y (yes, once), a (yes, and don't ask again: the shown
    rule is saved to .claude/settings.local.json), s (yes, for this session), n (no) or d (no,
    with a reason the model reads).
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
            continue_=continue_,
            yolo=yolo,
            allow=allow,
            sandbox=sandbox,
            context_window=window,
            show_reasoning=show_reasoning,
        )
    )
