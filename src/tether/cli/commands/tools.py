"""`tether tools list` and `tether tools call <name> '<json>'`: the registry from the terminal.

`call` runs one call through the full pipeline with the configured plugins, prints the result
and its code, and honours Ctrl-C, SIGTERM, SIGHUP and SIGQUIT by aborting the call's signal
(`tether.core.ending`: the result is still printed, the exit status is 128 + N; a second signal
exits at once).
MCP servers start in the background: `list`, and `call` of a name not registered yet, wait for
them (`tools/settle`); `call bash` does not.
The shell keeps its spill files: a truncated output names a file that must outlive the command.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import cyclopts

from ...core.ending import ProcessEnding
from ...core.signals import AbortController
from ...kernel import ConfigError
from ...tools import ToolExecutionInput, ToolFailure
from ...tools.arrivals import settle_tools
from ..boot import start
from ..sandbox_option import SandboxOpt
from . import tools_list

__all__ = ["app", "call", "list_tools"]

app = cyclopts.App(name="tools", help="Inspect and call the registered tools.")

ConfigOpt = Annotated[Path | None, cyclopts.Parameter(name="--config", help="A tether.yml to use.")]
CwdOpt = Annotated[Path | None, cyclopts.Parameter(name="--cwd", help="The workspace directory.")]


@app.command(name="list")
async def list_tools(*, config: ConfigOpt = None, cwd: CwdOpt = None) -> int:
    """List the tools the configured plugins register, with their budgets."""
    return await tools_list.list_tools(config=config, cwd=cwd)


@app.command(name="call")
async def call(
    name: str,
    arguments: str = "{}",
    *,
    timeout_ms: Annotated[float | None, cyclopts.Parameter(name="--timeout-ms")] = None,
    config: ConfigOpt = None,
    cwd: CwdOpt = None,
    sandbox: SandboxOpt = None,
) -> int:
    """Run one tool call through the full pipeline and print its result and code.

    Parameters
    ----------
    name
        The tool to call.
    arguments
        The arguments as a JSON object.
    timeout_ms
        Abort the call after this many milliseconds (the caller's own budget).
    sandbox
        Where commands may write: read-only, workspace-write (default) or danger-full-access.
    """
    workdir = (cwd or Path.cwd()).resolve()
    try:
        parsed = json.loads(arguments)
    except ValueError as exc:
        print(
            f"tether: arguments are not JSON ({exc}); pass an object like '{{\"a\": 1}}'",
            file=sys.stderr,
        )
        return 2
    try:
        ctx = await start(
            cwd=workdir,
            config_paths=None if config is None else [config],
            keep_spill_files=True,
            sandbox=sandbox,
        )
    except (ConfigError, ValueError) as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 2
    controller = AbortController()
    loop = asyncio.get_running_loop()
    timer = None if timeout_ms is None else loop.call_later(timeout_ms / 1000, controller.abort)
    ending = ProcessEnding(on_end=controller.abort)  # a signal aborts the call, as Ctrl-C does
    try:
        with ending:
            if ctx.tools.get(name) is None:  # an MCP server's tool arrives when it has started
                await settle_tools(ctx, signal=controller.signal)
            result = await ctx.tools.execute(
                ToolExecutionInput(
                    call_id="cli-1", name=name, arguments=parsed, signal=controller.signal
                )
            )
    finally:
        if timer is not None:
            timer.cancel()
        await ctx.dispose()
    for block in result.content:
        if block.get("type") == "text":
            shown = str(block.get("text"))
            print(shown, end="" if shown.endswith("\n") else "\n")
        else:
            print(json.dumps(dict(block)))
    if isinstance(result, ToolFailure):
        code = result.code or "ERROR"
        print(f"tether: {code}: {result.error.message}", file=sys.stderr)
        return ending.exit_code(1)
    return 0
