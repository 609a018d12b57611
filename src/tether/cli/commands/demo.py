"""`tether demo`: a real agent run against a scripted model, with no network and no API key.

It is honest about what is scripted: the *model* is a local OpenAI-compatible server on
127.0.0.1 replaying a fixed script. Everything else is real — the CLI boot, the agent loop, the
step scheduler, the tool registry and pipeline, the timeout policy, the bash/fs tools with real
processes and files in a temporary workspace, and the durable session log. It shows:

1. two `read` calls running in parallel and committed in model order;
2. a `bash` call (a real process);
3. a tool with a declared `timeout_ms` that overruns it and ends as `TOOL_TIMEOUT`;
4. a turn cancelled mid-tool (what Ctrl-C does): the running `bash sleep` ends `ABORTED` with its
   process group gone; the call after it never started and is `ABORTED_BEFORE_DISPATCH`;
5. one Code Mode turn: the model writes a `run_code` program that gathers two reads, runs a
   bash call and returns only the numbers it needs; the inner calls go through the same pipeline
   (they are logged as children of the `run_code` call) and only the program's output reaches
   the model. The tools mode is `both`, so the model also gets the `tools:sdk` stubs;
6. the session log summary and `sessions check`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import cyclopts
from pydantic import BaseModel, Field
from rich.console import Console

from ...agent.events import AgentEvent, ToolCallFinished, ToolCallStarted
from ...agent.llm import LlmConfig
from ...agent.llm.plugin import build_llm
from ...agent.loop import AgentLoop, AgentSettings
from ...agent.session import SessionStore
from ...core.signals import AbortController
from ...kernel import Context, PluginEntry, TetherConfig, boot
from ...testing.scripted_model import ScriptedModelServer, text_reply, tool_calls_reply
from ...tools import ToolOutput, ToolRunContext, define_tool
from ..boot import builtin_entries
from ..render import TurnRenderer
from .sessions import check as check_sessions
from .sessions import show as show_session

__all__ = ["demo"]

_FILES = {
    "NOTES.md": (
        "# inventory service\n\nTracks stock levels. Release date: see the lookup service.\n"
    ),
    "inventory.py": (
        "def restock(levels, item, amount):\n"
        "    levels[item] = levels.get(item, 0) + amount\n"
        "    return levels\n"
    ),
    "levels.csv": "item,count\nbolts,120\nnuts,80\n",
}


class _LookupArgs(BaseModel):
    query: str = Field(description="What to look up.")


async def _slow_lookup(args: _LookupArgs, exec: ToolRunContext) -> str:
    # A cooperative tool: it forwards its signal, so the timeout policy can stop it.
    async with exec.signal.cancels():
        await asyncio.sleep(30)
    return f"no answer for {args.query}"


_LOOKUP = define_tool(
    name="release_lookup",
    description="Ask the (slow) release service a question.",
    parameters=_LookupArgs,
    output=ToolOutput(schema=str),
    execute=_slow_lookup,
    timeout_ms=400,
)


def _apply_demo_tools(ctx: Context) -> None:
    ctx.tools.register(_LOOKUP)


class _DemoTools:
    name = "demo-tools"
    inject = ("tools",)
    apply = staticmethod(_apply_demo_tools)


_DEMO_SKIPS = frozenset({"llm", "hooks-claude-code", "permissions", "approval"})
"""Not in the demo: its model is the scripted server, and a user's own Claude Code hooks or
permission rules must not run (or prompt) inside it."""


_PROGRAM = (
    "import asyncio\n"
    "notes, code = await asyncio.gather(\n"
    "    tools.read({'file_path': 'NOTES.md'}),\n"
    "    tools.read({'file_path': 'inventory.py'}),\n"
    ")\n"
    "levels = await tools.bash({'command': 'tail -n +2 levels.csv', 'description': 'stock rows'})\n"
    "rows = [line.split(',') for line in levels['stdout']['text'].split()]\n"
    "print(len(notes['lines']), 'lines of notes,', len(code['lines']), 'lines of code')\n"
    "return {item: int(count) for item, count in rows}\n"
)
_PROGRAM_ARGS = {"code": _PROGRAM, "description": "Count files and read stock levels"}


def _demo_entry(entry: PluginEntry) -> PluginEntry:
    """Tools in `both` mode (native schemas, `run_code` and the `tools:sdk` stubs). (The shell
    already runs commands in the workspace: `builtin_entries` gives it that `cwd`.)"""
    if entry.id == "tools":
        return replace(entry, config={"mode": "both"})
    return entry


def _code_mode_installed() -> bool:
    """Whether the `code-mode` extra (pydantic-monty) is installed: without it (a plain
    `pip install tether`) the demo skips its Code Mode turn and says how to get it."""
    from importlib.util import find_spec

    return find_spec("pydantic_monty") is not None


def _script(*, code_mode: bool) -> list[object]:
    turns: list[object] = [
        # turn 1
        tool_calls_reply(
            ("call_read_notes", "read", '{"file_path": "NOTES.md"}'),
            ("call_read_code", "read", '{"file_path": "inventory.py"}'),
            content="Let me read the notes and the code.",
        ),
        tool_calls_reply(
            (
                "call_bash_check",
                "bash",
                '{"command": "python3 -c \\"import inventory; '
                "print(inventory.restock({'bolts': 120}, 'bolts', 5))\\\"\", "
                '"description": "exercise restock"}',
            )
        ),
        tool_calls_reply(("call_lookup", "release_lookup", '{"query": "release date"}')),
        text_reply(
            "The inventory service tracks stock levels; `restock` works (bolts 120 → 125). "
            "The release lookup timed out, so the release date is still unknown."
        ),
        # turn 2 (cancelled while the first call runs)
        tool_calls_reply(
            (
                "call_long_job",
                "bash",
                '{"command": "sleep 30", "description": "a long-running job"}',
            ),
            ("call_after", "read", '{"file_path": "levels.csv"}'),
        ),
    ]
    if code_mode:  # turn 3: one program instead of three model round trips
        turns += [
            tool_calls_reply(("call_code", "run_code", json.dumps(_PROGRAM_ARGS))),
            text_reply("Stock levels: bolts 120, nuts 80 (from one run_code program)."),
        ]
    return turns


async def _run(console: Console, workspace: Path, home: Path) -> int:
    for name, content in _FILES.items():
        (workspace / name).write_text(content)
    code_mode = _code_mode_installed()
    async with AsyncExitStack() as stack:
        server = await stack.enter_async_context(
            ScriptedModelServer(*_script(code_mode=code_mode))  # type: ignore[arg-type]
        )
        ctx = Context()
        stack.push_async_callback(ctx.dispose)
        entries = [
            _demo_entry(e)
            for e in builtin_entries(workspace)
            if e.id not in _DEMO_SKIPS and "web" not in (e.id or "")
        ] + [PluginEntry(id="demo-tools", name="demo-tools", plugin=_DemoTools, origin="demo")]
        await boot(ctx, TetherConfig(), builtins=entries)
        llm = build_llm(
            LlmConfig(provider="openai", base_url=server.base_url, model="scripted-demo")
        )
        stack.push_async_callback(llm.aclose)
        store = SessionStore(home / "sessions")
        session = store.create(cwd=workspace)
        stack.callback(session.close)
        renderer = TurnRenderer(text_out=sys.stdout, tools=console)
        controller = AbortController()

        def on_event(event: AgentEvent) -> None:
            renderer(event)
            if isinstance(event, ToolCallStarted) and event.call_id == "call_long_job":
                asyncio.get_running_loop().call_later(0.7, _abort, console, controller)
            if isinstance(event, ToolCallFinished) and event.call_id == "call_code":
                seen = " ".join(str(b.get("text", "")) for b in event.result.content)
                console.print(f"[dim]  what the model sees of the program: {seen}[/dim]")

        agent = AgentLoop(
            tools=ctx.tools.runtime,
            llm=llm,
            session=session,
            settings=AgentSettings(cwd=workspace),
            on_event=on_event,
            ctx=ctx,
        )
        console.rule("[bold]turn 1[/bold] · parallel reads, bash, a tool that overruns its budget")
        console.print(
            "[dim]user › Summarize the project, try restock, and find the release date.[/dim]"
        )
        first = await agent.run_turn(
            "Summarize the project, try restock, and find the release date.",
            signal=AbortController().signal,
        )
        renderer.end_turn()
        console.print(f"[dim]turn 1 ended: {first.kind}[/dim]\n")

        console.rule("[bold]turn 2[/bold] · Ctrl-C while a tool runs")
        console.print("[dim]user › Run the long job, then read levels.csv.[/dim]")

        second = await agent.run_turn(
            "Run the long job, then read levels.csv.", signal=controller.signal
        )
        renderer.end_turn()
        console.print(f"[dim]turn 2 ended: {second.kind}[/dim]")
        survivors = _sleepers()
        console.print(
            "[dim]the aborted `sleep 30`: "
            + ("[red]still running[/red]" if survivors else "its process group is gone")
            + "[/dim]\n"
        )

        console.rule("[bold]turn 3[/bold] · Code Mode: one program, three tool calls")
        third_completed = True
        if code_mode:
            console.print("[dim]user › What are the stock levels? Use one program.[/dim]")
            third = await agent.run_turn(
                "What are the stock levels? Use one program.", signal=AbortController().signal
            )
            renderer.end_turn()
            third_completed = third.completed
            console.print(f"[dim]turn 3 ended: {third.kind}[/dim]\n")
        else:
            console.print(
                "[yellow]skipped: Code Mode needs the `code-mode` extra"
                " (pip install 'tether[code-mode]')[/yellow]\n"
            )
        session_id = session.id
        session.close()

        console.rule("[bold]the durable session log[/bold]")
        show_session(session_id, root=home / "sessions")
        console.print()
        console.rule("[bold]tether sessions check[/bold]")
        status = check_sessions(session_id, root=home / "sessions")
        console.print(
            "\n[dim]The model was a scripted local server; the tools, processes, files, policy "
            f"and log were real. Workspace: {workspace}  Sessions: {home / 'sessions'}[/dim]"
        )
        ok = first.completed and second.kind == "aborted" and third_completed and status == 0
        return 0 if ok else 1


def _sleepers() -> list[int]:
    import psutil

    # Only this process's descendants (tether is a child subreaper, so a process that escaped
    # its group is still one): a `sleep 30` someone else runs is not the demo's.
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            cmdline = proc.cmdline()
        except psutil.Error:  # it ended while we looked
            continue
        if cmdline[-2:] == ["sleep", "30"] or cmdline[-1:] == ["sleep 30"]:
            found.append(proc.pid)
    return found


def _abort(console: Console, controller: AbortController) -> None:
    console.print("[yellow]^C (the demo presses Ctrl-C: the turn's signal aborts)[/yellow]")
    controller.abort()


async def demo(
    *,
    keep: Annotated[
        Path | None, cyclopts.Parameter(name="--workspace", help="Use this folder (kept).")
    ] = None,
) -> int:
    """Run a real agent turn against a scripted local model (no network, no API key)."""
    console = Console(highlight=False)
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        return await _run(console, keep.resolve(), keep.resolve() / ".tether")
    with tempfile.TemporaryDirectory(prefix="tether-demo-") as tmp:
        root = Path(tmp)
        (root / "workspace").mkdir()
        return await _run(console, root / "workspace", root / "home")
