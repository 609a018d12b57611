"""Slash commands of `tether chat`.

Owns: the command table (names and one-line help, also used for Tab completion) and what each
command does to the chat (`Chat`: what the session driver offers them — the `Agent`, the
console, the renderer). A line starting with `/` that names no command is refused with a hint,
not sent to the model; `//text` sends `/text`.

    /help               the commands and keys
    /clear              a new session with the same settings
    /compact [focus]    summarise the conversation into a new session that starts from it
    /model [name]       show or switch the model
    /sessions           the recent sessions of this workspace
    /resume ID          continue another session (its conversation is shown)
    /cost               tokens in/out and cached, per turn and in total
    /permissions        the permission mode, rules and session grants; add/remove rules
    /show N             the full text of a tool output or reasoning block
    /init               the model analyses the repository and writes CLAUDE.md
    /memory             the instruction files (CLAUDE.md, AGENTS.md); /memory edit opens one
    /todos              the model's todo list
    /mcp                MCP servers, their status and tools
    /hooks              the configured hooks, by event
    /agents             the subagent types
    /status             version, model, session, cwd, mode, sandbox, API key
    /config             the effective configuration and where it came from
    /add-dir PATH       let the model read files under PATH
    /export [FILE]      the conversation as Markdown
    /exit, /quit        quit

The informational commands are `tether.cli.chat.info`, the editing ones `tether.cli.chat.rules`,
`/memory` and `/init` `tether.cli.chat.memory`, `/export` `tether.cli.chat.export`, the
checklist `tether.cli.chat.todos`.

Custom commands (`.claude/commands/*.md`, `~/.claude/commands/*.md`: `tether.cli.chat.custom`)
are listed by `/help` after these, and run by the session driver.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from pathlib import Path
from typing import Final, Protocol

from rich.console import Console
from rich.table import Table

from ...agent.api import Agent
from ...agent.messages import usage_from_json
from ...agent.session import SessionError
from ...agent.session.events import ASSISTANT_MESSAGE
from ..session import notice
from ..visible import visible, visible_markup
from .custom import Loaded
from .export import export
from .info import show_agents, show_config, show_hooks, show_mcp, show_status
from .memory import INIT_PROMPT, edit_memory, show_memory
from .rules import add_dir, permissions
from .status import ChatRenderer, clip
from .todos import checklist, latest_todos

__all__ = ["COMMANDS", "Chat", "run_command"]

COMMANDS: Final[tuple[tuple[str, str], ...]] = (
    ("/help", "the commands and keys"),
    ("/clear", "start a new session with the same settings"),
    ("/compact", "summarise the conversation into a new session [focus]"),
    ("/model", "show or switch the model [name]"),
    ("/sessions", "the recent sessions of this workspace"),
    ("/resume", "continue another session: /resume ID"),
    ("/cost", "tokens in/out and cached, per turn and in total"),
    ("/permissions", "the rules; /permissions add|remove allow|ask|deny RULE edits them"),
    ("/show", "the full text of a tool output or reasoning block: /show N"),
    ("/init", "the model analyses the repository and writes CLAUDE.md"),
    ("/memory", "the instruction files; /memory edit project|user|PATH opens one"),
    ("/todos", "the model's todo list"),
    ("/mcp", "MCP servers, their status and tools"),
    ("/hooks", "the configured hooks, by event"),
    ("/agents", "the subagent types a task can use"),
    ("/status", "version, model, session, cwd, mode, sandbox, API key"),
    ("/config", "the effective configuration and where it came from"),
    ("/add-dir", "let the model read files under a directory: /add-dir PATH"),
    ("/export", "the conversation as Markdown: /export [FILE]"),
    ("/exit", "quit (also /quit, Ctrl-D)"),
)

_KEYS: Final = (
    "Enter sends · Alt-Enter or Ctrl-J: new line · ↑/↓ history · Ctrl-R search history · "
    "Tab completes /commands and @paths · @path attaches a file · !command runs it in the "
    "shell · Esc aborts a running turn · Ctrl-C clears the line, aborts a running turn, "
    "twice quits"
)


class Chat(Protocol):
    """What a slash command works with."""

    @property
    def agent(self) -> Agent: ...
    @property
    def console(self) -> Console: ...
    @property
    def renderer(self) -> ChatRenderer: ...
    @property
    def cwd(self) -> Path: ...

    async def compact(self, focus: str | None) -> None:
        """Summarise the conversation into a new session (`/compact`)."""

    def command_table(self) -> Sequence[tuple[str, str]]:
        """Every `/command` and its help: the built-ins, then the custom ones."""
        ...

    def custom_commands(self) -> Loaded:
        """The custom commands, and the files that could not be used."""
        ...

    def show_history(self) -> None:
        """Print the current session's earlier conversation."""

    @property
    def config(self) -> Path | None:
        """The config file `--config` named (None: the default files)."""
        ...

    async def send(self, prompt: str, *, typed: str) -> None:
        """Run a turn with `prompt`, recorded as typed `typed` (`/init`)."""


async def run_command(app: Chat, line: str) -> bool:
    """Run the slash command `line`; False when the chat should end."""
    name, _, rest = line.strip().partition(" ")
    argument = rest.strip()
    console = app.console
    if name in ("/exit", "/quit"):
        return False
    if name == "/help":
        for command, help in app.command_table():
            console.print(f"  [bold]{command:<13}[/bold] {visible_markup(help)}", highlight=False)
        for path, problem in app.custom_commands().problems:
            console.print(
                f"  [yellow]{visible_markup(str(path))}: {visible_markup(problem)}[/yellow]",
                highlight=False,
            )
        console.print(f"  [dim]{visible_markup(_KEYS)}[/dim]", highlight=False)
    elif name == "/clear":
        session = await app.agent.new_session()
        console.print(f"[dim]new session {session.id} (the old one is kept)[/dim]")
    elif name == "/compact":
        await app.compact(argument or None)
    elif name == "/model":
        if argument:
            await app.agent.set_model(argument)
            console.print(f"[dim]model: {visible_markup(argument)} (from the next request)[/dim]")
        else:
            console.print(f"model: {visible_markup(app.agent.llm.model)}", highlight=False)
    elif name == "/sessions":
        _sessions(app)
    elif name == "/resume":
        if not argument:
            console.print("[yellow]/resume needs a session id; /sessions lists them[/yellow]")
        else:
            try:
                session = await app.agent.resume(argument)
            except SessionError as exc:
                console.print(f"[yellow]{visible_markup(str(exc))}[/yellow]", highlight=False)
            else:
                for repaired in session.repair.describe() if session.repair else ():
                    notice(f"repaired the session log: {repaired}")
                app.show_history()
                console.print(
                    f"[dim]resumed session {visible_markup(argument)}[/dim]", highlight=False
                )
    elif name == "/cost":
        _cost(app)
    elif name == "/permissions":
        permissions(console, app.agent, argument)
    elif name == "/show":
        _show(app, argument)
    elif name == "/init":
        await app.send(INIT_PROMPT, typed=line.strip())
    elif name == "/memory":
        if argument == "edit" or argument.startswith("edit "):
            await edit_memory(console, app.cwd, argument[4:].strip())
        else:
            show_memory(console, app.cwd)
    elif name == "/todos":
        todos = latest_todos(app.agent.session.events)
        if todos:
            console.print(checklist(todos))
        else:
            console.print("[dim]no todo list in this session yet[/dim]")
    elif name == "/mcp":
        show_mcp(console, app.agent)
    elif name == "/hooks":
        show_hooks(console, app.agent)
    elif name == "/agents":
        show_agents(console, app.agent)
    elif name == "/status":
        show_status(console, app.agent)
    elif name == "/config":
        show_config(console, app.agent, app.config)
    elif name == "/add-dir":
        add_dir(console, app.agent, argument)
    elif name == "/export":
        export(console, app.agent.session_id, app.agent.session.events, argument, app.cwd)
    else:
        console.print(
            f"[yellow]unknown command {visible_markup(name)}; /help lists them (//text sends /text)"
            "[/yellow]",
            highlight=False,
        )
    return True


def _sessions(app: Chat) -> None:
    cwd = str(app.cwd)
    rows = [s for s in app.agent.store.list_sessions() if s.cwd in (None, cwd)][:15]
    if not rows:
        app.console.print("[dim]no sessions yet[/dim]")
        return
    current = app.agent.session_id
    for summary in rows:
        when = datetime.datetime.fromtimestamp(summary.modified_at / 1000).strftime(
            "%Y-%m-%d %H:%M"
        )
        mark = "*" if summary.id == current else " "
        title = visible_markup(clip(summary.title or "", 60))
        app.console.print(f" {mark} {summary.id}  [dim]{when}[/dim]  {title}", highlight=False)
    app.console.print("[dim]/resume ID continues one[/dim]")


def _cost(app: Chat) -> None:
    per_turn: dict[int, list[int]] = {}
    for event in app.agent.session.events:
        if event.type != ASSISTANT_MESSAGE or "usage" not in event.data:
            continue
        try:
            usage = usage_from_json(event.data["usage"])
        except ValueError:
            continue
        turn = event.data.get("turn")
        key = turn if isinstance(turn, int) else 0
        row = per_turn.setdefault(key, [0, 0, 0, 0])
        row[0] += 1
        row[1] += usage.input_tokens
        row[2] += usage.cache_read_tokens or 0
        row[3] += usage.output_tokens
    if not per_turn:
        app.console.print("[dim]no token usage reported in this session yet[/dim]")
        return
    table = Table(box=None, show_edge=False, pad_edge=False)
    for column in ("turn", "requests", "input", "cached input", "output"):
        table.add_column(column, justify="right")
    totals = [0, 0, 0, 0]
    for turn, row in sorted(per_turn.items()):
        table.add_row(str(turn), *(f"{n:,}" for n in row))
        totals = [a + b for a, b in zip(totals, row, strict=True)]
    table.add_row("total", *(f"{n:,}" for n in totals), style="bold")
    app.console.print(table)


def _show(app: Chat, argument: str) -> None:
    try:
        number = int(argument)
    except ValueError:
        number = 0
    entry = app.renderer.show(number)
    if entry is None:
        count = len(app.renderer.shown)
        app.console.print(f"[yellow]/show takes a number from 1 to {count}[/yellow]")
        return
    app.console.print(f"[bold]{visible_markup(entry.title)}[/bold]", highlight=False)
    app.console.print(visible(entry.text, strict=False), markup=False, highlight=False)
