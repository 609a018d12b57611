"""`/memory` and `/init`: the instruction files (`CLAUDE.md`, `AGENTS.md`) from the chat.

Owns `show_memory` (the files tether loads into the system prompt for this workspace, in order,
and where a new one would go), `edit_memory` (`/memory edit project|user|PATH` opens the file in
`$VISUAL` / `$EDITOR`, `vi` without either, and creates it first when missing; the files are read
when a session starts, so the change counts from `/clear` or the next chat) and `INIT_PROMPT`,
what `/init` sends the model. `/init` is the model's work, as in Claude Code: a deterministic
template could only restate file names, while the point of CLAUDE.md is what the model learns by
reading the code (the commands, the architecture, the conventions). Its `write` goes through the
permission rules like any other (the approval prompt asks before the file is written).
Which files are loaded is `tether.agent.instructions`'.
"""

from __future__ import annotations

import asyncio
import os
import shlex
from pathlib import Path
from typing import Final

from rich.console import Console

from ...agent.instructions import instruction_files
from ...kernel import tether_home
from ..visible import visible_markup

__all__ = ["INIT_PROMPT", "edit_memory", "memory_file", "show_memory"]

INIT_PROMPT: Final = (
    "Please analyze this codebase and create a CLAUDE.md file in the workspace root, which "
    "will be given to future instances of coding agents working in this repository.\n\n"
    "What to add:\n"
    "1. Commands that will be commonly used, such as how to build, lint, and run tests — "
    "including how to run a single test.\n"
    "2. High-level code architecture and structure, so that future instances can be productive "
    "more quickly: the big picture that needs reading several files to understand.\n\n"
    "Usage notes:\n"
    "- If there is already a CLAUDE.md (or AGENTS.md), suggest improvements to it rather than "
    "starting over.\n"
    "- Do not repeat yourself, do not list every component or file that can be easily "
    "discovered, and do not include generic development practices.\n"
    "- If there are Cursor rules (.cursor/rules/ or .cursorrules), Copilot rules "
    "(.github/copilot-instructions.md) or a README, include their important parts.\n"
    "- Do not make up information that is not in the files you read.\n"
    "- Begin the file with:\n\n"
    "```\n# CLAUDE.md\n\nThis file provides guidance to coding agents when working with code "
    "in this repository.\n```"
)


def memory_file(which: str, cwd: Path) -> Path:
    """The file `/memory edit WHICH` opens: `project` (`./CLAUDE.md`), `user`
    (`$TETHER_HOME/AGENTS.md`) or a path relative to the workspace."""
    if which in ("", "project"):
        return cwd / "CLAUDE.md"
    if which == "user":
        return tether_home() / "AGENTS.md"
    return (cwd / os.path.expanduser(which)).resolve()


def show_memory(console: Console, cwd: Path) -> None:
    """`/memory`: the instruction files read for this workspace, and the ones to create."""
    files = instruction_files(cwd, tether_home())
    if files:
        console.print("instruction files, in the order they join the system prompt:")
        for path in files:
            size = path.stat().st_size if path.exists() else 0
            console.print(
                f"  {visible_markup(str(path))} [dim]({size:,} bytes)[/dim]", highlight=False
            )
    else:
        console.print("[dim]no instruction files yet (/init writes a CLAUDE.md)[/dim]")
    for which in ("project", "user"):
        path = memory_file(which, cwd)
        if path not in files:
            console.print(
                f"  [dim]{which}: {visible_markup(str(path))} (not yet)[/dim]", highlight=False
            )
    console.print(
        "[dim]/memory edit project|user|PATH opens one in $EDITOR; it counts from /clear or the "
        "next chat[/dim]"
    )


async def edit_memory(console: Console, cwd: Path, which: str) -> None:
    """`/memory edit WHICH`: open the file in the user's editor and wait for it."""
    path = memory_file(which, cwd)
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
        process = await asyncio.create_subprocess_exec(*shlex.split(editor), str(path))
    except (OSError, ValueError) as exc:
        console.print(
            f"[yellow]/memory: cannot open {visible_markup(str(path))}: "
            f"{visible_markup(str(exc))}[/]"
        )
        return
    code = await process.wait()
    note = "" if code == 0 else f" [yellow](the editor exited with {code})[/yellow]"
    console.print(
        f"[dim]edited {visible_markup(str(path))}; it counts from /clear or the next "
        f"chat[/dim]{note}",
        highlight=False,
    )
