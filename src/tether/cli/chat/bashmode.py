"""Bash mode: a chat line starting with `!` runs in the shell, not through the model.

Owns `run_shell_line`. `!ls -la` runs `ls -la` with the agent's shell (`ctx.shell`: the same
executor, environment and process-group handling as the `bash` tool, in the workspace, with its
default timeout), prints its output, and parks it for the model's next request as Claude Code
does:

    <bash-input>ls -la</bash-input>
    <bash-stdout>…</bash-stdout>
    <bash-stderr>…</bash-stderr>

It is the user's own command, so it is not put to the permission rules or the approval prompt
(as in Claude Code); Esc or Ctrl-C stops it (its process group is killed). What the model gets
is cut to its last `CONTEXT_CHARS` characters, saying so; the screen shows what bash kept (the
last 64,000 bytes of each stream, with where the rest is).
"""

from __future__ import annotations

from typing import Final, cast

from rich.console import Console
from rich.markup import escape

from ...agent.api import Agent
from ...core.signals import AbortSignal
from ...plugins.shell import ShellError, ShellExecutor, ShellRequest, SpawnAbortedError
from ...plugins.shell.render import render_stream, stream_value
from ...tools.results import user_message

__all__ = ["CONTEXT_CHARS", "run_shell_line"]

CONTEXT_CHARS: Final = 30_000


async def run_shell_line(
    agent: Agent, command: str, *, console: Console, signal: AbortSignal
) -> None:
    """Run `command` (see the module note) and park its output for the next turn."""
    shell = agent.context.get("shell")
    if shell is None:
        console.print("[red]bash mode needs the shell plugin, which is not mounted[/red]")
        return
    executor = cast(ShellExecutor, shell)
    request = ShellRequest(command=command, workdir=str(agent.cwd), env=dict(agent.loop.env))
    try:
        result = await executor.run(request, signal=signal)
    except SpawnAbortedError:
        console.print("[dim]not started: interrupted[/dim]")
        return
    except ShellError as exc:
        console.print(f"[red]✗ {escape(str(exc))}[/red]", highlight=False)
        return
    stdout = render_stream(stream_value(result.stdout))
    stderr = render_stream(stream_value(result.stderr))
    if stdout:
        console.print(stdout.rstrip("\n"), markup=False, highlight=False)
    if stderr:
        console.print(stderr.rstrip("\n"), style="red", markup=False, highlight=False)
    status = _status(result.exit_code, result.signal_name, result.timed_out, result.aborted)
    if status:
        console.print(f"[dim]{escape(status)}[/dim]", highlight=False)
    context = f"<bash-input>{command}</bash-input>\n<bash-stdout>{_cut(stdout)}</bash-stdout>"
    context += f"\n<bash-stderr>{_cut(stderr)}</bash-stderr>"
    if status:
        context += f"\n{status}"
    agent.inject(user_message(context, {"kind": "user", "form": "bash", "command": command}))


def _status(exit_code: int | None, signal_name: str | None, timed_out: bool, aborted: bool) -> str:
    if aborted:
        return "[interrupted]"
    if timed_out:
        return "[timed out]"
    if signal_name is not None:
        return f"[killed by signal: {signal_name}]"
    if exit_code:
        return f"[exit code: {exit_code}]"
    return ""


def _cut(text: str) -> str:
    if len(text) <= CONTEXT_CHARS:
        return text
    return (
        f"[the first {len(text) - CONTEXT_CHARS:,} characters are left out]\n"
        + text[-CONTEXT_CHARS:]
    )
