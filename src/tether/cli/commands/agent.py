"""`tether run "<task>"` (one shot), `tether chat ["<prompt>"]` (interactive) and Claude Code's
`tether ["<prompt>"]` / `tether -p "<task>"`: the agent in a terminal.

`run` prints the final answer once — streamed when stdout is a terminal; when it is piped, stdout
gets only the answer (or, with `--output-format json|stream-json`, JSON: `tether.cli.output`) and
progress goes to stderr — and exits 0 iff the turn completed; otherwise stderr says
`tether: <code>: <message>`. The task comes from the argument or stdin (`-`); `--continue` and
`--resume ID` add the turn to an earlier session. Both mount the same policy
(`tether.agent.unattended`): deny rules always hold and hooks run; a call that needs approval is
asked about in `chat` and refused in `run`, unless `--allow` or `--yolo` permits it. In plan mode
`run` runs read-only tools only, and the plan the model presents (`exit_plan_mode`) is the result.

The command line is `tether.cli.agent_flags` (argparse; Claude Code's flags); this module turns
the flags into the public `tether.agent.Agent`: it boots, picks the model, opens (or resumes)
the session and runs the turns; `chat` is `tether.cli.chat` (line editing, slash commands, live
status, diffs, compaction), which this module only hands the options to.
In both, the first Ctrl-C aborts the running turn through its signal;
tools are cancelled and every outcome is recorded in the session log. In `run`, SIGINT, SIGTERM,
SIGHUP and SIGQUIT all do that (`tether.core.ending`): the turn ends aborted with the signal as
its cause and the exit status is 128 + N; a second signal exits at once.
"""

from __future__ import annotations

import asyncio
import os
import sys
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ...agent.events import AgentEvent
from ...agent.session import SessionStore
from ...agent.unattended import refuse_unattended
from ...core.ending import ProcessEnding
from ...plugins.permissions import Permissions
from ...tools.arrivals import settle_tools
from ..agent_flags import AgentFlags
from ..agent_setup import claude_options, instructions_of, open_flags_agent, run_info
from ..render import TurnRenderer
from ..session import announce_ending, exit_code, latest_session

if TYPE_CHECKING:
    from ..output import HeadlessReport  # imported where used: only a JSON output format needs it

__all__ = ["chat", "run", "run_flags"]


def run_flags(command: Literal["run", "chat", "root"], flags: AgentFlags) -> int:
    """Run what `tether.cli.agent_flags` parsed: `--input-format stream-json` a session served
    over stdin (`tether.cli.stream_input`), `run` (or `-p`) headless, else `chat`."""
    if flags.debug:
        os.environ["TETHER_DEBUG"] = "1"
    if flags.input_format == "stream-json":
        from ..stream_input import serve

        return asyncio.run(serve(flags))
    if command == "run" or flags.print_:
        return asyncio.run(run(flags))
    return asyncio.run(chat(flags))


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


async def run(flags: AgentFlags) -> int:
    """Answer one task, print the final answer, and exit (0 iff the turn completed); see the
    module note."""
    text = _read_task(flags.task)
    if text is None or not text.strip():
        sys.stderr.write(
            'tether: a task is required, for example: tether run "run the tests" '
            "(or pipe it: echo task | tether run)\n"
        )
        return 2
    resume = flags.resume if isinstance(flags.resume, str) else None
    if flags.continue_ and resume is not None:
        sys.stderr.write("tether: --continue and --resume cannot be combined; pick one\n")
        return 2
    workdir = (flags.cwd or Path.cwd()).resolve()
    if flags.continue_:
        resume = latest_session(SessionStore(), workdir)
        if resume is None:
            sys.stderr.write(
                f"tether: --continue: no session to continue in {workdir}; start one with "
                "tether run\n"
            )
            return 2
    output_format = flags.output_format
    tty = output_format == "text" and sys.stdout.isatty()
    renderer = TurnRenderer(text_out=sys.stdout if tty else None)
    reports: list[HeadlessReport] = []  # made once the session is open
    plans: list[str] = []

    def on_event(event: AgentEvent) -> None:
        renderer(event)
        for report in reports:
            report(event)

    async with AsyncExitStack() as stack:
        ending = stack.enter_context(ProcessEnding(on_end=announce_ending))
        agent = await open_flags_agent(
            stack, flags, workdir=workdir, resume=resume, on_event=on_event
        )
        if agent is None:
            return 2
        refuse_unattended(agent.context)
        permissions = agent.context.get("permissions")
        if isinstance(permissions, Permissions):
            permissions.on_plan = plans.append  # plan mode: the plan is the result
        sys.stderr.write(f"tether: session {agent.session_id} · model {agent.llm.model}\n")
        if output_format != "text":
            from ..output import HeadlessReport

            await settle_tools(agent.context, signal=ending.signal)  # init lists MCP tools
            report = HeadlessReport(
                output_format,
                run_info(agent, workdir, flags),
                sys.stdout,
                partial_messages=flags.include_partial_messages,
            )
            report.start()
            reports.append(report)
        outcome = (await agent.run(text, signal=ending.signal)).outcome
        if plans and outcome.completed:
            outcome = replace(outcome, text=plans[-1])
        renderer.end_turn()
        if output_format == "text" and (not tty or plans) and outcome.text:
            sys.stdout.write(outcome.text + "\n")
            sys.stdout.flush()
        code = exit_code(outcome, ending)
        for report in reports:
            report.finish(outcome, exit_code=code)
        return code


async def chat(flags: AgentFlags) -> int:
    """Talk to the agent, starting with `flags.task` when given; see `tether chat --help`."""
    from ..chat.app import ChatOptions, context_window_from_env, run_chat
    from ..chat.idle import idle_delay

    workdir = (flags.cwd or Path.cwd()).resolve()
    try:
        window = context_window_from_env(flags.context_window)
        idle_delay()  # checked here: one line, before the chat starts
    except ValueError as exc:
        sys.stderr.write(f"tether: {exc}\n")
        return 2
    return await run_chat(
        ChatOptions(
            cwd=workdir,
            config=flags.config,
            model=flags.model,
            resume=flags.resume,
            continue_=flags.continue_,
            yolo=flags.yolo,
            allow=flags.allow,
            sandbox=flags.sandbox,
            context_window=window,
            show_reasoning=flags.show_reasoning,
            prompt=flags.task,
            instructions=instructions_of(flags, workdir),
            max_steps=flags.max_turns,
            permission_mode=flags.permission_mode,
            claude_options=claude_options(flags),
        )
    )
